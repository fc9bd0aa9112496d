package randfill_test

import (
	"encoding/binary"
	"math"
	"testing"

	"cnntime/gpu/randfill"
	"cnntime/gpu/selftest"
)

// TestTileIsRandomNormal: the tile is not constant, and is distributed as randn is (mean
// 0, standard deviation 1, about 68% within one deviation); its FP16 twin holds the same
// values to FP16's precision.
func TestTileIsRandomNormal(t *testing.T) {
	b := randfill.Tile(false)
	if len(b) != 4*randfill.TileElems {
		t.Fatalf("FP32 tile has %d bytes, want %d", len(b), 4*randfill.TileElems)
	}
	v := make([]float32, randfill.TileElems)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	var sum, sq float64
	within, distinct := 0, map[float32]bool{}
	for _, x := range v {
		sum += float64(x)
		sq += float64(x) * float64(x)
		if math.Abs(float64(x)) < 1 {
			within++
		}
		if len(distinct) < 1000 {
			distinct[x] = true
		}
	}
	n := float64(len(v))
	mean, sd := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
	if math.Abs(mean) > 0.01 || math.Abs(sd-1) > 0.01 || math.Abs(float64(within)/n-0.6827) > 0.01 || len(distinct) < 1000 {
		t.Errorf("tile: mean %.4f, sd %.4f, %.4f within one sd, %d distinct of the first 1000: want randn's 0, 1, 0.6827 and all distinct", mean, sd, float64(within)/n, len(distinct))
	}
	h := randfill.Tile(true)
	if len(h) != 2*randfill.TileElems {
		t.Fatalf("FP16 tile has %d bytes, want %d", len(h), 2*randfill.TileElems)
	}
	for i := 0; i < randfill.TileElems; i += 997 {
		got := selftest.FromHalf([]uint16{binary.LittleEndian.Uint16(h[2*i:])})[0]
		if math.Abs(float64(got-v[i])) > 1e-3*(1+math.Abs(float64(v[i]))) {
			t.Fatalf("FP16 tile value %d = %g, FP32 %g", i, got, v[i])
		}
	}
}

// TestPlanFillsEachByteOnceFromFilledBytes: the copies cover the tensor exactly once,
// each device-to-device copy reads only bytes already written, and there are about
// log2(total/tile) of them.
func TestPlanFillsEachByteOnceFromFilledBytes(t *testing.T) {
	const tile = 4 << 20
	for _, total := range []int64{4, 1000, tile, tile + 4, 3*tile - 8, 1 << 33} {
		plan := randfill.Plan(total, tile)
		if len(plan) == 0 || !plan[0].FromHost || plan[0].Dst != 0 || plan[0].Bytes != min(total, tile) {
			t.Fatalf("total %d: plan %+v does not start with the tile", total, plan)
		}
		filled := int64(0)
		for i, c := range plan {
			if c.Dst != filled {
				t.Fatalf("total %d: copy %d writes at %d, want %d (each byte once, in order)", total, i, c.Dst, filled)
			}
			if !c.FromHost && (c.Src < 0 || c.Src+c.Bytes > filled) {
				t.Fatalf("total %d: copy %d reads [%d, %d) of which only %d bytes are filled", total, i, c.Src, c.Src+c.Bytes, filled)
			}
			filled += c.Bytes
		}
		if filled != total {
			t.Errorf("total %d: the plan fills %d bytes", total, filled)
		}
		if want := 2 + int(math.Ceil(math.Log2(float64(max(total, tile))/tile))); len(plan) > want {
			t.Errorf("total %d: %d copies, want at most %d", total, len(plan), want)
		}
	}
	if p := randfill.Plan(0, tile); p != nil {
		t.Errorf("an empty tensor gets copies %+v", p)
	}
}

// TestTileBF16 holds the FP32 tile's values rounded to bfloat16.
func TestTileBF16(t *testing.T) {
	b, f := randfill.TileBF16(), randfill.Tile(false)
	if len(b) != 2*randfill.TileElems {
		t.Fatalf("bf16 tile has %d bytes, want %d", len(b), 2*randfill.TileElems)
	}
	for i := 0; i < randfill.TileElems; i += 997 {
		want := math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:]))
		got := math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		if math.Abs(float64(got-want)) > math.Abs(float64(want))/128+1e-30 {
			t.Fatalf("value %d: bf16 %g, FP32 %g", i, got, want)
		}
	}
}

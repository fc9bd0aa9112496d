package randfill

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"

	"cnntime/gpu/selftest"
)

// TileElems is the number of values in a tile: 4 MiB of FP32, far more than any cache
// line pattern a multiplier could exploit.
const TileElems = 1 << 20

var (
	tiles     [3][]byte
	tilesOnce [3]sync.Once
)

// TileBF16 is Tile's values as little-endian bfloat16, for a bf16 layer's tensors.
func TileBF16() []byte {
	tilesOnce[2].Do(func() {
		h := selftest.ToBF16(normals())
		b := make([]byte, 2*len(h))
		for j, x := range h {
			binary.LittleEndian.PutUint16(b[2*j:], x)
		}
		tiles[2] = b
	})
	return tiles[2]
}

// normals are TileElems standard normal values from a fixed seed.
func normals() []float32 {
	r := rand.New(rand.NewPCG(0x636e6e74696d65, 22))
	v := make([]float32, TileElems)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	return v
}

// Tile returns TileElems values drawn from the standard normal distribution (a fixed
// seed, the same each run), as little-endian FP32, or FP16 when half.
func Tile(half bool) []byte {
	i := 0
	if half {
		i = 1
	}
	tilesOnce[i].Do(func() {
		v := normals()
		if half {
			h := selftest.ToHalf(v)
			b := make([]byte, 2*len(h))
			for j, x := range h {
				binary.LittleEndian.PutUint16(b[2*j:], x)
			}
			tiles[i] = b
			return
		}
		b := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
		}
		tiles[i] = b
	})
	return tiles[i]
}

// Copy is one copy into a tensor: from the start of the host tile (FromHost) or from
// the tensor's own bytes at Src, to its bytes at Dst.
type Copy struct {
	FromHost        bool
	Src, Dst, Bytes int64
}

// Plan returns the copies that fill total bytes from a tile of tile bytes: the tile (or
// what fits of it), then doubling device-to-device copies of what is already filled.
func Plan(total, tile int64) []Copy {
	if total <= 0 || tile <= 0 {
		return nil
	}
	filled := min(total, tile)
	out := []Copy{{FromHost: true, Dst: 0, Bytes: filled}}
	for filled < total {
		n := min(filled, total-filled)
		out = append(out, Copy{Src: 0, Dst: filled, Bytes: n})
		filled += n
	}
	return out
}

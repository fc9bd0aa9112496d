package convalgo

import (
	"testing"

	"cnntime/predictor/measure"
)

func TestStart(t *testing.T) {
	for _, c := range []struct {
		p    measure.Precision
		math int
		half bool
	}{{measure.FP32, FMAMath, false}, {measure.TF32, DefaultMath, false}, {measure.FP32Strict, FMAMath, false}, {measure.AMP, TensorOpMath, true}} {
		if m, h := Start(c.p); m != c.math || h != c.half {
			t.Errorf("Start(%s) = %d, %v; want %d, %v", c.p, m, h, c.math, c.half)
		}
	}
}

func TestChoose(t *testing.T) {
	ranked := []Perf{
		{Algo: 7, Status: 3000, Memory: 0, MathType: TensorOpMath}, // not supported (cuDNN 9 code)
		{Algo: 1, Status: 0, Memory: 1 << 30, MathType: TensorOpMath},
		{Algo: 6, Status: 0, Memory: 64 << 20, MathType: DefaultMath},
		{Algo: 0, Status: 0, Memory: 0, MathType: FMAMath},
	}
	fits := func(limit int64) func(int64) bool { return func(b int64) bool { return b <= limit } }
	for _, c := range []struct {
		name      string
		prec      measure.Precision
		limit     int64
		algo      int
		math      int
		ok, isOOM bool
	}{
		{"amp takes the first that fits, with its math type", measure.AMP, 2 << 30, 1, TensorOpMath, true, false},
		{"workspace too big: the next one", measure.TF32, 100 << 20, 6, DefaultMath, true, false},
		{"strict skips tensor-core results", measure.FP32Strict, 2 << 30, 0, FMAMath, true, false},
		{"fp32 kernels are strict too", measure.FP32, 2 << 30, 0, FMAMath, true, false},
	} {
		got, ok, oom := Choose(ranked, c.prec, fits(c.limit))
		if ok != c.ok || oom != c.isOOM || got.Algo != c.algo || got.MathType != c.math {
			t.Errorf("%s: got algo %d math %d ok %v oom %v; want algo %d math %d ok %v oom %v", c.name, got.Algo, got.MathType, ok, oom, c.algo, c.math, c.ok, c.isOOM)
		}
	}
	if _, ok, oom := Choose(ranked[1:3], measure.TF32, fits(0)); ok || !oom {
		t.Errorf("usable algorithms whose workspace never fits: ok %v oom %v, want out of memory", ok, oom)
	}
	if _, ok, oom := Choose(ranked[:3], measure.FP32Strict, fits(2<<30)); ok || oom {
		t.Errorf("no FMA algorithm under fp32-strict: ok %v oom %v, want unsupported", ok, oom)
	}
}

func TestFindWorkspace(t *testing.T) {
	for _, c := range []struct {
		sizes      []int64
		free, want int64
	}{{[]int64{0, 10, -1, 300}, 1000, 300}, {[]int64{0, 5000}, 1000, 1000}, {[]int64{-1}, 1000, 0}, {[]int64{10}, -5, 0}} {
		if got := FindWorkspace(c.sizes, c.free); got != c.want {
			t.Errorf("FindWorkspace(%v, %d) = %d, want %d", c.sizes, c.free, got, c.want)
		}
	}
}

func TestFitsLegacyAPI(t *testing.T) {
	for _, c := range []struct {
		elems []int64
		want  bool
	}{{[]int64{1 << 20, 1<<31 - 1}, true}, {[]int64{1 << 20, 1 << 31}, false}, {[]int64{512 * 64 * 224 * 224}, true}, {[]int64{1024 * 64 * 224 * 224}, false}} {
		if got := FitsLegacyAPI(c.elems...); got != c.want {
			t.Errorf("FitsLegacyAPI(%v) = %v, want %v", c.elems, got, c.want)
		}
	}
}

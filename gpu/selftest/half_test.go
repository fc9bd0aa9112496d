package selftest

import (
	"math"
	"testing"
)

func TestHalf(t *testing.T) {
	for _, c := range []struct {
		f    float32
		bits uint16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {1e6, 0x7c00}, {float32(math.Pow(2, -24)), 0x0001}, {0.1, 0x2e66}, {1.0009765625, 0x3c01}} {
		if got := ToHalf([]float32{c.f})[0]; got != c.bits {
			t.Errorf("ToHalf(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	vals := []float32{1, -2, 0.5, 3.140625, 65504, float32(math.Pow(2, -24))}
	back := FromHalf(ToHalf(vals))
	for i := range vals {
		if back[i] != vals[i] {
			t.Errorf("round trip of %g gave %g", vals[i], back[i])
		}
	}
	if v := FromHalf(ToHalf([]float32{0.1}))[0]; math.Abs(float64(v)-0.1) > 1e-4 {
		t.Errorf("0.1 through FP16 = %g", v)
	}
}

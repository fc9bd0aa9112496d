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

// TestBF16 rounds to nearest even on the top 16 bits of an FP32, as the kernels' ST
// and cuDNN do: ties go to the even mantissa.
func TestBF16(t *testing.T) {
	for _, c := range []struct {
		f    float32
		bits uint16
	}{{0, 0}, {1, 0x3f80}, {-2, 0xc000}, {0.1, 0x3dcd}, {1.00390625, 0x3f80}, {1.01171875, 0x3f82}, {3e38, 0x7f62}} {
		if got := ToBF16([]float32{c.f})[0]; got != c.bits {
			t.Errorf("ToBF16(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	if v := FromBF16([]uint16{0x3f82})[0]; v != 1.015625 {
		t.Errorf("FromBF16(0x3f82) = %g, want 1.015625", v)
	}
}

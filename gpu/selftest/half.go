package selftest

import "math"

// ToHalf converts FP32 values to IEEE FP16 bits (round to nearest even), for uploading a
// reference's inputs to an amp layer.
func ToHalf(v []float32) []uint16 {
	out := make([]uint16, len(v))
	for i, f := range v {
		out[i] = halfBits(f)
	}
	return out
}

// FromHalf converts FP16 bits back to FP32.
func FromHalf(h []uint16) []float32 {
	out := make([]float32, len(h))
	for i, b := range h {
		out[i] = halfValue(b)
	}
	return out
}

func halfBits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case (b>>23)&0xff == 0xff: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		half := man >> shift
		rem := man & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++
	}
	return sign | uint16(half)
}

func halfValue(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float32(h & 0x3ff)
	switch exp {
	case 0:
		return sign * man * float32(math.Pow(2, -24))
	case 0x1f:
		if man != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * (1 + man/1024) * float32(math.Pow(2, float64(exp-15)))
}

// RoundToHalf rounds v in place to the nearest FP16 values: what a buffer of FP16 data
// holds after v is uploaded.
func RoundToHalf(v []float32) { copy(v, FromHalf(ToHalf(v))) }

// ToBF16 converts FP32 values to bfloat16 bits (the top 16 bits, rounded to nearest
// even), for uploading a reference's inputs to a bf16 layer.
func ToBF16(v []float32) []uint16 {
	out := make([]uint16, len(v))
	for i, f := range v {
		u := math.Float32bits(f)
		if f != f { // NaN stays NaN
			out[i] = uint16(u>>16) | 0x40
			continue
		}
		out[i] = uint16((u + 0x7fff + (u>>16)&1) >> 16)
	}
	return out
}

// FromBF16 converts bfloat16 bits back to FP32 (exactly).
func FromBF16(h []uint16) []float32 {
	out := make([]float32, len(h))
	for i, b := range h {
		out[i] = math.Float32frombits(uint32(b) << 16)
	}
	return out
}

// RoundToBF16 rounds v in place to the nearest bfloat16 values.
func RoundToBF16(v []float32) { copy(v, FromBF16(ToBF16(v))) }

package kernels

import "math"

// maxOf is the builtin max of two float64s, bit for bit (NaN where either is NaN, +0
// of +0 and -0), in the few instructions of a comparison where they differ: the
// builtin's sign and NaN fix-ups cost about ten instructions on amd64, at every batch
// size of every kernel.
func maxOf(x, y float64) float64 {
	switch {
	case x > y:
		return x
	case y > x:
		return y
	case x != x:
		return x
	case y != y:
		return y
	}
	// Equal: the same bits, or +0 and -0, whose larger is +0 (the sign bits and-ed).
	return math.Float64frombits(math.Float64bits(x) & math.Float64bits(y))
}

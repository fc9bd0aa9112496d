// Package kernels predicts the time of one layer's forward and backward kernels on a
// device at a batch size and precision, from the most trusted source available:
// measured, interpolated along batch size, transferred from another GPU by wave
// scaling, or estimated from specifications with a roofline, tile and wave quantization
// and fitted efficiencies. It also holds the fitting of those efficiencies.
package kernels

// Source says where a predicted number comes from, from most to least trusted.
type Source string

const (
	Measured     Source = "measured"     // this device, this configuration and batch size, in the cache
	Interpolated Source = "interpolated" // this device, other batch sizes
	Transferred  Source = "transferred"  // measured on another GPU, scaled by wave scaling
	Estimated    Source = "estimated"    // from specifications: roofline with tile and wave quantization
)

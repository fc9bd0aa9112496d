package kernels

// Source says where a predicted number comes from, from most to least trusted.
type Source string

const (
	Measured     Source = "measured"     // this device, this configuration and batch size, in the cache
	Interpolated Source = "interpolated" // this device, other batch sizes
	Transferred  Source = "transferred"  // measured on another GPU, scaled by wave scaling
	Estimated    Source = "estimated"    // from specifications: roofline with tile and wave quantization
)

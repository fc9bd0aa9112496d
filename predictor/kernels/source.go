package kernels

// Source says where a predicted number comes from, from most to least trusted.
type Source string

const (
	Measured     Source = "measured"     // this device, this configuration and batch size, in the cache
	Interpolated Source = "interpolated" // this device, other batch sizes
	Transferred  Source = "transferred"  // measured on another GPU, scaled by wave scaling
	Estimated    Source = "estimated"    // from specifications: roofline with tile and wave quantization
)

// Rank orders sources from most (0, Measured) to least trusted (3, Estimated); a source
// other than the four ranks as Estimated.
func (s Source) Rank() uint8 {
	switch s {
	case Measured:
		return 0
	case Interpolated:
		return 1
	case Transferred:
		return 2
	}
	return 3
}

// RankedSource is the source of rank r (Source.Rank): Estimated above 2.
func RankedSource(r uint8) Source {
	switch r {
	case 0:
		return Measured
	case 1:
		return Interpolated
	case 2:
		return Transferred
	}
	return Estimated
}

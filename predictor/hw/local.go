package hw

// LocalProvider is the provider of the machines measured in the cache: this computer's
// CPU after a CPU sweep, a CUDA GPU after a GPU sweep or an import. Catalog machines
// may not use it, so local ids ("local/cpu", "local/t4") never clash with the catalog's.
const LocalProvider = "local"

// LocalCPUID is the id of this computer's CPU as a machine one can compare.
const LocalCPUID = LocalProvider + "/cpu"

// CPUGPUID is the GPU id a host processor gets when it stands where a GPU would (the
// GPU of a local CPU machine); no catalog GPU has it.
const CPUGPUID = "cpu"

// CPUArchitecture is the Architecture of a host processor described as a GPU.
const CPUArchitecture = "CPU"

// IsCPU reports whether g describes a host processor rather than a GPU.
func (g GPU) IsCPU() bool { return g.Architecture == CPUArchitecture }

// HostCPU describes a measured host processor as the predictor's GPU type: its name,
// its cores where a GPU has SMs, the host's memory (GiB) as the memory a training run
// may fill, and the arithmetic (TFLOPS) and memory (GB/s) rates it achieved in its
// measurements. Figures not known are 0. It has no tensor cores, no interconnect and no
// published power: energy is unknown.
func HostCPU(name string, cores int, memoryGiB, fp32TFLOPS, bandwidthGBs float64, source string) GPU {
	return GPU{ID: CPUGPUID, Name: name, Architecture: CPUArchitecture, SMs: cores, MemoryGB: memoryGiB,
		FP32TFLOPS: fp32TFLOPS, MemoryBandwidthGBs: bandwidthGBs, Source: source}
}

package kernels

import (
	"math"
	"slices"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// tile is one output tile shape a GEMM kernel computes per thread block, and the share
// of the full-size tile's efficiency it reaches (small tiles reuse operands less).
type tile struct {
	m, n float64
	eff  float64
}

// Tile shapes of cuDNN/cuBLAS-style kernels, largest first. NVIDIA's "Matrix
// Multiplication Background" guide lists 256×128, 128×128, 128×64 and 64×64 tiles
// for tensor-core kernels, with efficiency falling as tiles shrink.
var (
	simtTiles   = [...]tile{{128, 128, 1}, {128, 64, 0.93}, {64, 64, 0.8}, {32, 32, 0.45}}
	tensorTiles = [...]tile{{256, 128, 1}, {128, 128, 0.95}, {128, 64, 0.88}, {64, 64, 0.7}}
)

// Split-K kernels give one block a reduction slice of at least minSplitK and split
// the reduction at most Calibration.SplitKMax ways: 8 in the cuDNN 7 of DeepBench's
// timings (LegacySplitK), as many as fill the GPU's SMs once in cuDNN 8 and later
// (ModernSplitK), and reduce the partial sums in a second pass (splitKReduceBytes per
// output element and split). The weight gradient, whose reduction is the batch, splits
// most; a forward or data-gradient implicit GEMM whose output tiles leave SMs idle
// splits its reduction over the input channels and taps the same way (cuBLAS's and
// CUTLASS's split-K GEMMs and convolutions): the 7×7 and 14×14 stages at batch 1 to 8,
// whose few row tiles would otherwise run on a fraction of the SMs. Winograd tiles do
// not split (their transform is per tile); the implicit GEMM it falls back to does.
const (
	minSplitK = 256
	// LegacySplitK is cuDNN 7's cap, which the per-layer efficiencies were fitted
	// under (DeepBench's rows ran cuDNN 7.0–7.6).
	LegacySplitK = 8
	// ModernSplitK bounds cuDNN 8 and 9's split: their weight-gradient heuristics
	// split a GEMM with few output tiles until one wave fills the GPU (the first
	// convolution of ResNet-50, 64 × 147 outputs over 3.2 million reduction steps at
	// batch 256, is split about 36 ways on an A100 rather than 8).
	ModernSplitK = 128
	// splitKReduceBytes is what reducing one output element's partial sums costs per
	// split: each block writes its FP32 partial sum and the reduction reads it back.
	splitKReduceBytes = 8
)

// winogradTilePixels is how many output pixels of one image a Winograd convolution
// block computes as one row of its transformed GEMM: F(2×2, 3×3), the fused
// algorithm of Lavin and Gray ("Fast Algorithms for Convolutional Neural Networks",
// CVPR 2016) that cuDNN runs for 3×3 stride-1 convolutions on the CUDA cores, turns
// each 2×2 output tile into one row, so its grid has a quarter of a direct
// convolution's row tiles and runs out of blocks for the GPU's SMs at four times the
// batch: on small images (CIFAR's 8×8 and 4×4 stages, ImageNet's 7×7) at small
// batches the GPU's SMs idle or cuDNN falls back to the implicit GEMM, so the
// per-image time falls further with the batch than one efficiency at every batch
// gives. DeepBench's FP32 3×3 rows fall that way (a P100's 14×14, 512→512 forward
// reaches 1.18 of its direct-FLOP peak at batch 8 and 1.60 at 16).
const winogradTilePixels = 4

// Libraries also carry kernels for GEMMs with a narrow side (a 1- or 3-channel first
// layer's data gradient, a 16-filter layer's weight gradient): a tile narrowed to that
// side (rounded up to 8 for tensor cores' MMA shapes), at narrowEff of a full tile's
// efficiency.
const (
	narrowBelow = 64
	narrowEff   = 0.6
)

// estimator computes the roofline time of one phase of one layer configuration on one
// GPU at any batch size. Everything that does not depend on the batch is computed once
// by newEstimator, so that at(n) costs tens of nanoseconds and never allocates.
type estimator struct {
	cost      kernelCost
	rates     deviceRates
	plans     [len(tensorTiles) + 2]tilePlan
	nPlans    int
	perSMRate float64 // FLOP/s one SM achieves on a full-size tile: peak ÷ SMs × efficiency
	invSMs    float64
	flopRate  float64 // FLOP/s of the whole GPU for kernels without tiling (depthwise, grouped)
	memRate   float64 // achieved bytes/s
	launchMS  float64
	tiled     bool
	splitKMax float64 // the most ways the reduction is split (Calibration.SplitKMax)
	// rowsPerTileRow is how many rows of the GEMM one row of the kernel's tiles covers:
	// winogradTilePixels for a Winograd convolution, else 1.
	rowsPerTileRow float64
	// directSlowdown is how many times longer a Winograd convolution's tiles take as
	// the implicit GEMM it falls back to (its efficiency over a plain GEMM's); 0: none.
	directSlowdown float64
	relErr         float64 // expected relative error of this estimate
}

// month is the release of the kernel libraries (Request.LibraryMonth): the compute
// efficiency is the calibration's times its Maturity on g at that month (0: mature).
func newEstimator(cal *Calibration, c cnn.Config, phase measure.Phase, g hw.GPU, p measure.Precision, month hw.Month) estimator {
	e := estimator{cost: costOf(c, phase), rates: ratesFor(g, p, cal)}
	e.launchMS = cal.LaunchUS / 1000
	e.memRate = streamRate(cal, g, e.rates)
	e.relErr = cal.EstimateRelErrOf(e.rates.family, e.rates.arith) + e.rates.extraRelErr
	e.splitKMax = float64(cal.SplitKMaxOrLegacy())
	if !e.cost.hasGEMM {
		return e
	}
	e.launchMS += cal.MaturityLaunchMS(g, month)
	maturity := cal.Maturity(g, month)
	eff := cal.Efficiency(e.cost.class, e.rates.arith, phase) * cal.FamilyScaleOf(e.rates.family, e.rates.arith) * maturity
	aligned := e.rates.alignNeed == 0 || (e.rates.alignNeed == 4 && e.cost.aligned4) || (e.rates.alignNeed == 8 && e.cost.aligned8)
	peak := e.rates.peakFLOPS
	switch {
	case e.cost.class == ClassDepthwise:
		// cuDNN and PyTorch have no tensor-core depthwise kernels: they run on the CUDA
		// cores in every arithmetic, at the FP32 efficiency and family scale. Their rate
		// is set by the bytes each tap loads, not by the FMA units: a depthwise tap is one
		// multiply-add per input element read (from L1 or shared memory), so the kernel
		// is bound by its loads, and FP16 storage moves half the bytes per tap (the
		// libraries' FP16 depthwise kernels load and multiply channel pairs as half2,
		// e.g. MegEngine's chanwise kernels). So under amp they run at depthwiseRate(2
		// bytes) = twice the FP32 FLOP rate: NVIDIA's DeepLearningExamples EfficientNet
		// tables measure amp at 2.1–2.5× TF32/FP32 on A100 and V100 (b0 and b4), which
		// a depthwise time the same in both arithmetics cannot give.
		peak = e.rates.simtFLOPS * depthwiseRate(e.rates.elemBytes)
		eff = cal.Efficiency(e.cost.class, ArithFP32, phase) * cal.FamilyScaleOf(e.rates.family, ArithFP32) * maturity
	case !aligned:
		eff *= cal.UnalignedTensorFactor
		e.relErr += 0.1
	}
	e.flopRate = peak * eff
	e.perSMRate = e.flopRate / e.rates.sms
	e.tiled = e.cost.class != ClassDepthwise && e.cost.class != ClassGrouped
	e.rowsPerTileRow = 1
	if winograd(e.cost.class, e.rates.arith, phase) {
		e.rowsPerTileRow = winogradTilePixels
		if gemm := cal.Efficiency(ClassConv1x1, e.rates.arith, phase); gemm > 0 {
			e.directSlowdown = cal.Efficiency(e.cost.class, e.rates.arith, phase) / gemm
		}
	}
	var room [len(tensorTiles) + 2]tile // the tiles with the narrow ones, without an allocation
	tiles := append(room[:0], simtTiles[:]...)
	if e.rates.alignNeed > 0 {
		tiles = append(room[:0], tensorTiles[:]...)
	}
	align := int64(1)
	if e.rates.alignNeed > 0 {
		align = 8
	}
	if n := e.cost.gemm.n; n < narrowBelow {
		tiles = append(tiles, tile{128, roundUp(n, align), narrowEff})
	}
	if g := e.cost.gemm; g.mPerSample == 0 && g.m0 < narrowBelow {
		tiles = append(tiles, tile{roundUp(g.m0, align), 128, narrowEff})
	}
	e.setTiles(tiles)
	return e
}

// winograd reports whether cuDNN computes phase of a convolution of class c in
// arithmetic a with the fused Winograd algorithm: a 3×3 stride-1 convolution's forward
// pass and data gradient on the CUDA cores (FP32, FP16 without tensor cores), the
// arithmetics whose fitted efficiencies exceed a direct convolution's peak. Its weight
// gradient splits its batch-long reduction instead (split-K), and tensor-core kernels
// are implicit GEMMs.
func winograd(c Class, a Arithmetic, phase measure.Phase) bool {
	return c == ClassConv3x3 && (a == ArithFP32 || a == ArithFP16SIMT) &&
		(phase == measure.Forward || phase == measure.BackwardData)
}

// newStreamEstimator is the estimator of a fused memory-bound kernel that moves
// elemsPerSample tensor elements per sample (Request.FusedElems): the streaming part of
// the roofline alone, at the memory-bound class's efficiency and error band.
func newStreamEstimator(cal *Calibration, elemsPerSample float64, g hw.GPU, p measure.Precision) estimator {
	e := estimator{cost: kernelCost{class: ClassMemory, elemsPerSample: elemsPerSample}, rates: ratesFor(g, p, cal)}
	e.launchMS = cal.LaunchUS / 1000
	e.memRate = streamRate(cal, g, e.rates)
	e.relErr = cal.EstimateRelErrOf(e.rates.family, e.rates.arith) + e.rates.extraRelErr
	return e
}

// streamRate is the bytes per second memory-bound work reaches on g: the specified
// bandwidth times the memory efficiency, or what g's SMs issue at the sustained clock
// (Calibration.StreamBytesPerSMCycle) where that is lower and the calibration has a
// cap and g's SMs and clock are known. The lower of the two, as in a roofline: a
// streaming kernel keeps enough loads in flight to overlap the SMs' issue with the
// memory's transfer, so the two limits do not add. (Adding them, as this did before,
// gave an A100's activations 57% of its bandwidth and an H200's 50%, where a
// streaming copy reaches about 90% on both, and so made HBM GPUs' memory-bound layers
// too slow against GDDR ones: the L40S and the L4 came out 10-18% too fast against
// the A100 in the optimised stack.)
func streamRate(cal *Calibration, g hw.GPU, r deviceRates) float64 {
	rate := r.bandwidth * cal.MemoryEfficiencyOf(r.family)
	if sm, ok := smBytesPerS(g, r, cal.StreamBytesPerSMCycle); ok {
		rate = math.Min(rate, sm)
	}
	return rate
}

// smBytesPerS is what g's SMs move per second at the sustained clock at perCycle bytes
// per SM per clock cycle each; false when perCycle is no cap (0) or g's SMs or clock are
// unknown.
func smBytesPerS(g hw.GPU, r deviceRates, perCycle float64) (float64, bool) {
	if !(perCycle > 0) || g.SMs <= 0 || !(g.BoostClockMHz > 0) {
		return 0, false
	}
	return float64(g.SMs) * g.BoostClockMHz * 1e6 * r.clockFactor * perCycle, true
}

// nchwNormRate is the bytes per second cuDNN's NCHW batch-norm kernels reach on g
// over a tensor of channels channels: e's streaming rate, capped by what the SMs that
// hold the channels move at the sustained clock at Calibration.NCHWNormBytesPerSMCycle
// each, where the calibration has a cap and g's SMs and clock are known.
//
// NCHW batch-norm kernels give each channel one thread block, which reduces and
// normalises that channel's batch × height × width plane on one SM: PyTorch's own
// batch_norm_collect_statistics_kernel launches a grid of one block per channel
// (aten/src/ATen/native/cuda/Normalization.cuh), and cuDNN's bn_fw_tr_1C11_kernel_NCHW
// is as slow on few channels (PaddlePaddle's profile of a 16-channel batch norm, where
// it took 133 ms to PyTorch's 72). So the channels, not the GPU's SMs, set the
// parallelism: a 64-channel batch norm keeps 64 SMs busy on a GPU of 132 or 148, and
// C channels on S SMs run in ⌈C ÷ S⌉ waves, as if on C ÷ ⌈C ÷ S⌉ SMs. On ResNet-50's
// channel counts (64 to 2048) an H200's 132 SMs and a B200's 148 work alike, so the
// B200's eager NCHW batch norm is no faster than the H200's, as its memory would make
// it; a profile of our own H200 (docs/accuracy.md) shows the per-layer times following
// the channel waves (a 56×56 stage's batch norms 3.2× the 64-channel stem's; channel
// waves give 3.75, the bytes 6).
func nchwNormRate(cal *Calibration, g hw.GPU, e estimator, channels int) float64 {
	sm, ok := smBytesPerS(g, e.rates, cal.NCHWNormBytesPerSMCycle)
	if !ok || e.cost.class != ClassMemory {
		return e.memRate
	}
	if channels > 0 {
		sm *= channelSMShare(channels, g.SMs)
	}
	return math.Min(e.memRate, sm)
}

// channelSMShare is the share of sms SMs that channels one-block-per-channel blocks
// keep busy on average: channels ÷ (⌈channels ÷ sms⌉ × sms).
func channelSMShare(channels, sms int) float64 {
	if channels <= 0 || sms <= 0 {
		return 1
	}
	waves := (channels + sms - 1) / sms
	return float64(channels) / float64(waves*sms)
}

// depthwiseRate is how many times the FP32 FLOP rate a depthwise convolution runs at
// when its tensors hold elemBytes bytes per element: its loads, not its arithmetic,
// bound it, so the rate goes as 4 ÷ elemBytes (1 for FP32, 2 for FP16 storage).
func depthwiseRate(elemBytes float64) float64 {
	if !(elemBytes > 0) {
		return 1
	}
	return 4 / elemBytes
}

func roundUp(x, to int64) float64 { return float64((max(x, 1) + to - 1) / to * to) }

// tilePlan is one tile shape's batch-independent figures for one GEMM.
type tilePlan struct {
	invM       float64 // 1 ÷ tile rows
	colTiles   float64 // tiles across the GEMM's columns, times the groups
	outCols    float64 // the GEMM's columns, times the groups: output elements per row
	secPerKRow float64 // seconds one SM takes per unit of reduction length for one tile
	// floorPerMK times M × K is a floor under this tile's time: its tiles spread
	// evenly over the SMs without rounding up the rows' tiles or the waves (a split
	// reduction does the same work in more, shorter tiles). tiledSeconds tries the
	// tiles from the lowest floor up and stops at one whose floor no tile can beat.
	floorPerMK float64
}

// floorMargin is how far above the best time a tile's floor must be for the search
// to stop: far more than the floating-point rounding between the floor and the time
// as tiledSeconds computes it, so stopping never changes the time it returns.
const floorMargin = 1 + 1e-9

// setTiles precomputes the tile plans, so that the per-batch loop only multiplies,
// and orders them by their floor, lowest first.
func (e *estimator) setTiles(tiles []tile) {
	e.invSMs = 1 / e.rates.sms
	e.nPlans = len(tiles)
	n, groups := float64(e.cost.gemm.n), float64(e.cost.gemm.groups)
	for i, t := range tiles {
		p := tilePlan{
			invM:       1 / t.m,
			colTiles:   math.Ceil(n/t.n) * groups,
			outCols:    n * groups,
			secPerKRow: 2 * t.m * t.n / (e.perSMRate * t.eff),
		}
		p.floorPerMK = p.invM * p.colTiles * e.invSMs * p.secPerKRow
		e.plans[i] = p
	}
	// A stable sort by a comparison of the floors, as sort.SliceStable's was (whose
	// reflection moved every estimator to the heap).
	slices.SortStableFunc(e.plans[:e.nPlans], func(a, b tilePlan) int {
		switch {
		case a.floorPerMK < b.floorPerMK:
			return -1
		case b.floorPerMK < a.floorPerMK:
			return 1
		}
		return 0
	})
}

// at returns the estimated time in milliseconds at batch size n.
func (e *estimator) at(n int) float64 {
	var ms [1]float64
	e.atEach([]int{n}, ms[:])
	return ms[0]
}

// atEach sets ms[i] to the estimated time in milliseconds at batch size batches[i]
// (0 where that is not positive): at over many batch sizes, with what decides the
// formula tested once rather than at every batch.
func (e *estimator) atEach(batches []int, ms []float64) {
	ms = ms[:len(batches)]
	c := &e.cost
	if c.none {
		fill(ms, 0)
		return
	}
	if c.hasGEMM && e.tiled {
		e.tiledEach(batches, ms)
		return
	}
	launchMS := e.launchMS
	g := &c.gemm
	m0, mPer, k0, kPer := float64(g.m0), float64(g.mPerSample), float64(g.k0), float64(g.kPerSample)
	groups := float64(g.groups)
	for i, n := range batches {
		if n <= 0 {
			ms[i] = 0
			continue
		}
		fn := float64(n)
		memS := e.memSeconds(fn)
		var computeS float64
		if c.hasGEMM {
			m := m0 + mPer*fn
			k := k0 + kPer*fn
			computeS = 2 * m * float64(g.n) * k * groups / e.flopRate
		}
		ms[i] = maxOf(computeS, memS)*1000 + launchMS
	}
}

// memSeconds is the kernel's memory time at batch size fn: its traffic, less what it
// finds in L2 of the tensor the kernel before it wrote, at the achieved bandwidth.
func (e *estimator) memSeconds(fn float64) float64 {
	c := &e.cost
	elemBytes := e.rates.elemBytes
	bytes := (c.elemsPerSample*fn + c.elemsFixed) * elemBytes
	if c.freshElemsPerSample > 0 {
		bytes -= c.freshElemsPerSample * fn * elemBytes * l2HitShare(c.freshTensorPerSample*fn*elemBytes, e.rates.l2Bytes)
	}
	return bytes / e.memRate
}

// tiledBlock is how many batch sizes tiledEach works out together.
const tiledBlock = 64

// tiledEach is atEach for a tiled GEMM: a block of batch sizes' memory times and GEMM
// sizes first, then their tile searches in one loop (tiledSecondsEach), so that the
// search is not a call per batch with every value the loop holds saved around it.
func (e *estimator) tiledEach(batches []int, ms []float64) {
	g := &e.cost.gemm
	m0, mPer, k0, kPer := float64(g.m0), float64(g.mPerSample), float64(g.k0), float64(g.kPerSample)
	var m, k, memS, computeS [tiledBlock]float64
	for lo := 0; lo < len(batches); lo += tiledBlock {
		bs := batches[lo:min(lo+tiledBlock, len(batches))]
		for i, n := range bs {
			if n <= 0 {
				m[i], k[i], memS[i] = 0, 0, 0
				continue
			}
			fn := float64(n)
			memS[i] = e.memSeconds(fn)
			m[i] = m0 + mPer*fn
			k[i] = k0 + kPer*fn
		}
		e.tiledSecondsEach(m[:len(bs)], k[:len(bs)], memS[:len(bs)], computeS[:len(bs)])
		out := ms[lo : lo+len(bs)]
		for i, n := range bs {
			if n <= 0 {
				out[i] = 0
				continue
			}
			out[i] = maxOf(computeS[i], memS[i])*1000 + e.launchMS
		}
	}
}

// tiledSeconds is the GEMM time with tile and wave quantization: the output is cut
// into tiles (a partly filled tile costs a full one), each SM computes its share of
// tiles one wave after another, and the kernel takes as long as the busiest SM. It
// tries every tile shape and keeps the fastest, as cuDNN's heuristics aim to.
// A GEMM with fewer tiles than SMs splits its reduction across blocks (split-K):
// weight gradients, whose reduction grows with the batch, and forward and
// data-gradient implicit GEMMs at small batches alike.
//
// The kernel takes the longer of this and memS, its memory time: once a tile is
// found at or under memS, a faster one would not change the kernel's time, and the
// time found is returned as it is. Tiles whose floor (tilePlan.floorPerMK) is above
// the best time are not tried; neither cut changes what the kernel's time comes to.
func (e *estimator) tiledSeconds(m, k, memS float64) float64 {
	var out [1]float64
	e.tiledSecondsEach([]float64{m}, []float64{k}, []float64{memS}, out[:])
	return out[0]
}

// tiledSecondsEach sets out[i] to tiledSeconds(m[i], k[i], memS[i]). A Winograd
// convolution (rowsPerTileRow above 1) is also tried as the implicit GEMM cuDNN falls
// back to (directSlowdown times as long per tile, a tile row one GEMM row): its
// benchmark mode and heuristics keep the faster, the GEMM where the batch is too small
// for Winograd's fewer blocks to fill the SMs.
func (e *estimator) tiledSecondsEach(m, k, memS, out []float64) {
	m, k, memS = m[:len(out)], k[:len(out)], memS[:len(out)]
	w := max(e.rowsPerTileRow, 1)
	for i := range out {
		out[i] = e.tiledSearch(m[i], k[i], memS[i], w, 1, math.Inf(1))
		if w > 1 && e.directSlowdown > 0 {
			out[i] = e.tiledSearch(m[i], k[i], memS[i], 1, e.directSlowdown, out[i])
		}
	}
}

// tiledSearch is the best tiled time of one GEMM of m rows and reduction k, below
// best, with tile rows of w GEMM rows each at slow times each tile's time (w and slow
// are 1 for a plain GEMM).
func (e *estimator) tiledSearch(m, k, memS, w, slow, best float64) float64 {
	plans := e.plans[:e.nPlans]
	mk := m * k * slow
	tileRows := m / w
	perKRow := w * slow
	for j := range plans {
		p := &plans[j]
		if best <= memS || mk*p.floorPerMK > best*floorMargin {
			break
		}
		tiles := ceil(tileRows*p.invM) * p.colTiles
		kPer := k
		reduce := 0.0
		if w == 1 && tiles < e.rates.sms {
			split := min(float64(int64(e.rates.sms/tiles)), ceil(k*(1.0/minSplitK)), e.splitKMax)
			if split > 1 {
				reduce = split * m * p.outCols * splitKReduceBytes / e.memRate
				tiles *= split
				kPer = ceil(k / split)
			}
		}
		waves := tiles * e.invSMs
		if e.rates.quantize {
			waves = ceil(waves)
		}
		if s := waves*kPer*p.secPerKRow*perKRow + reduce; s < best {
			best = s
		}
	}
	return best
}

// ceil is math.Ceil for the non-negative, well below 2⁶³ values the estimator
// handles, as a truncation the compiler inlines on every amd64 level.
func ceil(x float64) float64 {
	c := float64(int64(x))
	if c < x {
		c++
	}
	return c
}

// EstimateMS is the roofline estimate of one phase of configuration c on GPU g at
// batch size n in precision p, in milliseconds, with its expected relative error.
// It is the least trusted source; Model.Times prefers measurements.
func EstimateMS(cal *Calibration, c cnn.Config, phase measure.Phase, g hw.GPU, p measure.Precision, n int) (ms, relErr float64) {
	e := newEstimator(cal, c, phase, g, p, 0)
	return e.at(n), e.relErr
}

// L2ResidentShare is the share of its L2 cache a GPU keeps a tensor in from one kernel to
// the next: a tensor written by one kernel and read by the next costs the reader no DRAM
// traffic for the part of it that fits in this share of the L2. Half, since an A100's and
// H100's L2 is two partitions, each SM reaching the far one through the near one, which
// may keep its own copy (NVIDIA's A100 whitepaper, "L2 cache").
const L2ResidentShare = 0.5

// l2HitShare is the share of a tensor of bytes bytes, just written, that the next kernel
// finds in an L2 cache of l2Bytes bytes (0: unknown, none): all of it where it fits in
// L2ResidentShare of the L2, else that share of the L2 over its size, so that a batch
// growing past the L2 loses its hits gradually rather than at one batch size (the L2's
// hashed sets and replacement keep part of a larger stream, not none of it).
func l2HitShare(bytes, l2Bytes float64) float64 {
	if !(l2Bytes > 0) || !(bytes > 0) {
		return 0
	}
	return min(1, L2ResidentShare*l2Bytes/bytes) // the builtin: math.Min's result, without a call
}

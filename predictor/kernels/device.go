package kernels

import (
	"math"
	"strings"
	"sync"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// Fallback figures for a GPU whose specifications are unknown (zero in the catalog).
// They are mid-range datacenter figures; estimates that use them carry a wider error band.
const (
	fallbackFP32TFLOPS   = 10.0
	fallbackBandwidthGBs = 500.0
	fallbackSMs          = 60.0
	unknownSpecRelErr    = 0.35 // added to the error band per missing figure class
)

// deviceRates are one GPU's throughputs for one kernel precision, with unknown
// figures replaced by fallbacks.
type deviceRates struct {
	arith        Arithmetic
	peakFLOPS    float64 // FLOP/s of the arithmetic unit, whole GPU
	bandwidth    float64 // bytes/s, specified
	sms          float64 // streaming multiprocessors
	quantize     bool    // SM count known: waves are whole
	elemBytes    float64 // bytes per tensor element
	alignNeed    int     // channel alignment the tensor cores want: 8, 4, or 0 for none
	extraRelErr  float64 // widening of the error band for fallbacks
	tensorFactor float64 // multiplies efficiency on unaligned tensor-core layers (set by the model)
	family       hw.Family
	clockFactor  float64 // sustained ÷ rated boost clock (SustainedClockFactorExp × BoardBoostFactor), in peakFLOPS
	l2Bytes      float64 // L2 cache size, bytes; 0 where unknown
	// simtFLOPS is the FP32 CUDA-core rate (sustained clock, Kepler's issue factor
	// included): what kernels without a tensor-core path (depthwise convolutions) run at
	// whatever the arithmetic.
	simtFLOPS float64
}

// ArithmeticFor returns the arithmetic a kernel precision runs in on a GPU: TF32 only
// on compute capability ≥ 8.0, FP16 tensor cores only on ≥ 7.0 and BF16 (at the FP16
// rate) only on ≥ 8.0; otherwise FP32 math (with 16-bit storage for AMP and BF16).
func ArithmeticFor(g hw.GPU, p measure.Precision) Arithmetic {
	cc := hw.ParseComputeCapability(g.ComputeCapability)
	switch p {
	case measure.TF32:
		if cc >= 80 {
			return ArithTF32
		}
	case measure.AMP:
		if cc >= 70 {
			return ArithFP16
		}
		return ArithFP16SIMT
	case measure.BF16:
		// BF16 tensor cores came with Ampere (8.0) and run at the FP16 rate; before
		// them cuBLAS and cuDNN run BF16 at about the FP32 rate, on 2-byte tensors.
		if cc >= 80 {
			return ArithFP16
		}
		return ArithFP16SIMT
	}
	return ArithFP32
}

// ratesFor returns g's throughputs for precision p. Every kernel a step table prepares
// on a GPU asks for the same (a hundred kernels a table, thousands of tables for the
// zoo on the catalog): they are worked out once per GPU, precision and clock exponent
// (the one figure of the calibration they read) and remembered (knownRates).
func ratesFor(g hw.GPU, p measure.Precision, cal *Calibration) deviceRates {
	key := ratesKey{g.ID, p, cal.PowerClockExponentOrLegacy()}
	knownRates.RLock()
	known, ok := knownRates.m[key]
	knownRates.RUnlock()
	if ok && known.gpu == g {
		return known.rates
	}
	r := ratesOf(g, p, key.exp)
	knownRates.Lock()
	if len(knownRates.m) >= maxKnownRates || knownRates.m == nil { // a long session's edited GPUs: no unbounded growth
		knownRates.m = map[ratesKey]knownRate{}
	}
	knownRates.m[key] = knownRate{g, r}
	knownRates.Unlock()
	return r
}

// ratesKey is what a GPU's rates depend on, but for the rest of the GPU's figures,
// which knownRate keeps to compare (an edited GPU keeps its id).
type ratesKey struct {
	gpu string
	p   measure.Precision
	exp float64
}

// knownRate is the rates a GPU was found to have.
type knownRate struct {
	gpu   hw.GPU
	rates deviceRates
}

// knownRates remembers ratesOf, up to maxKnownRates of them.
var knownRates struct {
	sync.RWMutex
	m map[ratesKey]knownRate
}

const maxKnownRates = 1024

// ratesOf is ratesFor worked out, exp being the calibration's power-clock exponent.
func ratesOf(g hw.GPU, p measure.Precision, exp float64) deviceRates {
	r := deviceRates{arith: ArithmeticFor(g, p), elemBytes: 4}
	typical, haveTypical := familyTypical[hw.FamilyOf(g)]
	fp32 := g.FP32TFLOPS
	if !(fp32 > 0) {
		r.extraRelErr += unknownSpecRelErr
		fp32 = fallbackFP32TFLOPS
		if haveTypical {
			fp32 = typical.fp32TFLOPS
		}
		if g.SMs > 0 && g.BoostClockMHz > 0 {
			fp32 = float64(g.SMs) * g.BoostClockMHz * 1e6 * 128 * 2 / 1e12 // 128 FP32 lanes per SM since Volta
		}
	}
	peak := fp32
	cc := hw.ParseComputeCapability(g.ComputeCapability)
	switch r.arith {
	case ArithTF32:
		// Dense TF32 is half the dense FP16 rate on every Ampere, Ada and Hopper GPU in
		// the catalog (A100 156/312, A10 62.5/125, L4 60/121, H100 494.7/989.4).
		r.alignNeed = 4
		peak = g.TF32TFLOPS
		if !(peak > 0) && g.FP16TFLOPS > 0 {
			peak = g.FP16TFLOPS / 2
			r.extraRelErr += 0.05
		}
		if !(peak > 0) && g.FP32TFLOPS <= 0 && haveTypical {
			peak = typical.fp16TFLOPS / 2 // nothing known but the family
		}
		if !(peak > 0) {
			peak = fp32
			r.extraRelErr += unknownSpecRelErr
		}
	case ArithFP16:
		r.alignNeed, r.elemBytes = 8, 2
		peak = g.FP16TFLOPS
		if !(peak > 0) && g.TF32TFLOPS > 0 {
			peak = 2 * g.TF32TFLOPS
			r.extraRelErr += 0.05
		}
		if !(peak > 0) && g.FP32TFLOPS <= 0 && haveTypical {
			peak = typical.fp16TFLOPS // nothing known but the family
		}
		if !(peak > 0) {
			// GA10x/AD10x boards run FP16 with FP32 accumulate at about 2× FP32
			// (RTX 3090 71/35.6, RTX 4090 165/82.6); datacenter parts at 8× (V100 125/15.7).
			peak = 8 * fp32
			if cc == 86 || cc == 89 {
				peak = 2 * fp32
			}
			r.extraRelErr += unknownSpecRelErr
		}
	case ArithFP16SIMT:
		r.elemBytes = 2
	}
	r.clockFactor = SustainedClockFactorExp(g, exp) * BoardBoostFactor(g)
	r.peakFLOPS = peak * 1e12 * r.clockFactor
	r.simtFLOPS = fp32 * 1e12 * r.clockFactor
	if hw.FamilyOf(g) == hw.FamilyKepler {
		r.peakFLOPS *= KeplerIssueFactor
		r.simtFLOPS *= KeplerIssueFactor
	}
	if g.L2MB > 0 {
		r.l2Bytes = g.L2MB * (1 << 20)
	}
	bw, known := BandwidthGBs(g)
	r.bandwidth = bw * 1e9
	if !known {
		r.extraRelErr += unknownSpecRelErr
	}
	r.family = hw.FamilyOf(g)
	r.sms, r.quantize = float64(g.SMs), g.SMs > 0
	if !r.quantize {
		r.sms = fallbackSMs
		if haveTypical {
			r.sms = typical.sms
		}
		r.extraRelErr += 0.05
	}
	return r
}

// KeplerIssueFactor is the share of a Kepler SMX's 192 FP32 lanes that its warp
// schedulers keep busy, relative to the Maxwell-and-later SMs the per-layer
// efficiencies were fitted on: NVIDIA's GM107 (Maxwell) whitepaper gives its 128-lane
// SMM "90% of the performance" of a 192-lane Kepler SMX, 1.35× per lane, because
// feeding Kepler's extra lanes takes dual issue of independent instructions that
// convolution kernels seldom have. Kepler's FP32 peak is scaled by 1/1.35.
const KeplerIssueFactor = 1 / 1.35

// typicalBandwidthGBs is the memory bandwidth of a GPU whose bandwidth is unknown but
// whose memory type is known: the catalog's GPUs with that memory (HBM2e: A100 SXM4
// 80GB 2039 and H100 PCIe 2000 GB/s; HBM2: V100 900, A100 40GB 1555; HBM3: H100 SXM
// 3350; HBM3e: H200 4800; GDDR6X: RTX 3090 936, RTX 4090 1008; GDDR6: T4 320 to
// L40S 864), taken at the middle of their range.
var typicalBandwidthGBs = map[string]float64{
	"hbm2": 1200, "hbm2e": 2000, "hbm3": 3350, "hbm3e": 4800,
	"gddr6x": 950, "gddr6": 600, "gddr5x": 480, "gddr5": 240,
}

// BandwidthGBs is g's memory bandwidth in GB/s: the catalog's figure; else the typical
// figure of its memory type; else a mid-range datacenter fallback. known says whether
// the catalog gave it.
func BandwidthGBs(g hw.GPU) (gbs float64, known bool) {
	if g.MemoryBandwidthGBs > 0 {
		return g.MemoryBandwidthGBs, true
	}
	if v, ok := typicalBandwidthGBs[strings.ToLower(strings.TrimSpace(g.MemoryType))]; ok {
		return v, false
	}
	if t, ok := familyTypical[hw.FamilyOf(g)]; ok {
		return t.bandwidthGBs, false
	}
	return fallbackBandwidthGBs, false
}

// familyTypical are a family's figures for a GPU of which only the compute capability
// is known (H100 NVL, GH200 in the catalog): its catalog GPUs' lower datacenter figures
// (Volta: V100 SXM2; Turing: T4; GA100: A100 40GB; GA10x: A10; Ada: L40S; Hopper: H100
// PCIe; GB20x: RTX 5080), so an unknown part is not predicted faster than the slowest
// of its kind.
var familyTypical = map[hw.Family]struct {
	fp32TFLOPS, fp16TFLOPS, bandwidthGBs, sms float64
}{
	hw.FamilyVolta:  {15.7, 125, 900, 80},
	hw.FamilyTuring: {8.1, 65, 320, 40},
	hw.FamilyGA100:  {19.5, 312, 1555, 108},
	hw.FamilyGA10x:  {31.2, 125, 600, 72},
	hw.FamilyAda:    {91.6, 362, 864, 142},
	hw.FamilyHopper: {51.2, 756, 2000, 114},
	hw.FamilyGB20x:  {56.3, 112.6, 960, 84},
}

// familyPowerReference is, per family, the catalog part with the most board power per
// SM at its boost clock (V100 SXM2 300 W / 80 SMs / 1530 MHz; RTX 2080 Ti 250 / 68 /
// 1545; A100 SXM4 400 / 108 / 1410; RTX 3090 350 / 82 / 1695; RTX 4090 450 / 128 /
// 2520; H100 SXM 700 / 132 / 1980; RTX 5090 575 / 170 / 2407): taken to hold its boost
// clock under a training load, which fixes the family's power per SM per clock³ (same die design, process
// and voltage–frequency curve).
var familyPowerReference = map[hw.Family]struct{ tdpW, sms, boostMHz float64 }{
	hw.FamilyVolta:  {300, 80, 1530},
	hw.FamilyTuring: {250, 68, 1545},
	hw.FamilyGA100:  {400, 108, 1410},
	hw.FamilyGA10x:  {350, 82, 1695},
	hw.FamilyAda:    {450, 128, 2520},
	hw.FamilyHopper: {700, 132, 1980},
	hw.FamilyGB20x:  {575, 170, 2407},
}

// SustainedClockFactor is the share of its boost clock a GPU holds under a sustained
// training load, limited by its board power (tdp_w). A GPU's switching power grows as
// SMs × f·V², and over the boost range the voltage rises about in step with the clock,
// so the power an SM needs grows as f³. The clock that a board's power sustains is
// then its family reference's boost clock × ∛(power per SM ÷ the reference's power
// per SM), at most the boost clock: 0.76 for the 70 W T4 (1207 of 1590 MHz), 0.79
// for the 150 W A10, 0.87 for the 72 W L4, 0.89 for the L40S and the RTX A6000, 0.94
// for the 350 W H100 PCIe, 1 for each family's reference and for a GPU whose power,
// SMs or clock is unknown. Memory bandwidth is not scaled (memory clocks do not
// drop under a power cap).
func SustainedClockFactor(g hw.GPU) float64 {
	return SustainedClockFactorExp(g, LegacyPowerClockExponent)
}

// SustainedClockFactorExp is SustainedClockFactor with the clock growing as the power
// per SM to the power exp: 1/3 where the voltage rises in step with the clock
// (LegacyPowerClockExponent), 1/2 where it rises half as fast, as it does where a
// power-capped board runs (Calibration.PowerClockExponent).
func SustainedClockFactorExp(g hw.GPU, exp float64) float64 {
	ref, ok := familyPowerReference[hw.FamilyOf(g)]
	if !ok || !(g.TDPW > 0) || g.SMs <= 0 || !(g.BoostClockMHz > 0) || !(exp > 0) {
		return 1
	}
	mhz := ref.boostMHz * math.Pow(g.TDPW/ref.tdpW*ref.sms/float64(g.SMs), exp)
	return math.Min(1, mhz/g.BoostClockMHz)
}

// LegacyPowerClockExponent is the cube-root law the per-layer efficiencies were
// fitted under.
const LegacyPowerClockExponent = 1.0 / 3

// GeForceBoostFactor is how far above its rated boost clock a GeForce board runs under
// a sustained full load. On GeForce boards the rated boost clock is a typical clock, not
// a ceiling: GPU Boost raises the clock while the board stays under its power limit and
// temperature target. At stock settings an RTX 4090 ran at 2,730 MHz under a 97% load
// drawing 446.9 W of its 450 (HotHardware, October 2022; rated boost 2,520 MHz: 1.083×),
// and an RTX 3090 Ti at 2,000 to 2,050 MHz in Cyberpunk 2077 (TweakTown, 2022-09-22;
// rated 1,860: 1.08 to 1.10×). Datacenter and workstation boards (A100, H100, L40S, A10,
// RTX A6000) hold at most their rated boost, which is their maximum.
const GeForceBoostFactor = 1.08

// BoardBoostFactor is GeForceBoostFactor for a GeForce board of compute capability 7.5
// or later (its name says GeForce, as the catalog's and nvidia-smi's names do) and 1 for
// every other GPU. The evidence for the factor is Ampere's and Ada's, whose family
// scales are fitted with it; a Pascal or older GeForce (GTX 1080 Ti, GTX Titan) is
// predicted by per-layer efficiencies fitted on Pascal and Maxwell boards as they ran,
// so boosting it as well predicted it too fast (the GTX 1080 Ti rows of
// jcjohnson/cnn-benchmarks, held out: 24.6% -> 20.5% before the refit).
func BoardBoostFactor(g hw.GPU) float64 {
	if containsFold(g.Name, "geforce") && hw.ParseComputeCapability(g.ComputeCapability) >= 75 {
		return GeForceBoostFactor
	}
	return 1
}

// containsFold says whether s holds word (lower-case ASCII letters) in any case, as
// strings.Contains(strings.ToLower(s), word) does, without the lowered copy.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

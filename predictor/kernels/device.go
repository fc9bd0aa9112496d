package kernels

import (
	"strconv"
	"strings"

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
}

// ComputeCapability parses "8.6" into 86; 0 when unknown or malformed.
func ComputeCapability(cc string) int {
	major, minor, _ := strings.Cut(strings.TrimSpace(cc), ".")
	ma, err := strconv.Atoi(major)
	if err != nil || ma < 0 {
		return 0
	}
	mi, err := strconv.Atoi(minor)
	if err != nil || mi < 0 || mi > 9 {
		mi = 0
	}
	return ma*10 + mi
}

// ArithmeticFor returns the arithmetic a kernel precision runs in on a GPU: TF32 only
// on compute capability ≥ 8.0, FP16 tensor cores only on ≥ 7.0; otherwise FP32 math
// (with FP16 storage for AMP).
func ArithmeticFor(g hw.GPU, p measure.Precision) Arithmetic {
	cc := ComputeCapability(g.ComputeCapability)
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
	}
	return ArithFP32
}

// ratesFor returns g's throughputs for precision p.
func ratesFor(g hw.GPU, p measure.Precision) deviceRates {
	r := deviceRates{arith: ArithmeticFor(g, p), elemBytes: 4}
	fp32 := g.FP32TFLOPS
	if !(fp32 > 0) {
		r.extraRelErr += unknownSpecRelErr
		fp32 = fallbackFP32TFLOPS
		if g.SMs > 0 && g.BoostClockMHz > 0 {
			fp32 = float64(g.SMs) * g.BoostClockMHz * 1e6 * 128 * 2 / 1e12 // 128 FP32 lanes per SM since Volta
		}
	}
	peak := fp32
	cc := ComputeCapability(g.ComputeCapability)
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
	r.peakFLOPS = peak * 1e12
	r.bandwidth = g.MemoryBandwidthGBs * 1e9
	if !(r.bandwidth > 0) {
		r.bandwidth = fallbackBandwidthGBs * 1e9
		r.extraRelErr += unknownSpecRelErr
	}
	r.sms, r.quantize = float64(g.SMs), g.SMs > 0
	if !r.quantize {
		r.sms = fallbackSMs
		r.extraRelErr += 0.05
	}
	return r
}

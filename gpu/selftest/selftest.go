package selftest

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"cnntime/gpu/libfind"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Versions are the driver's and libraries' versions the worker found ("" when absent),
// and the files it loaded them from.
type Versions struct {
	Driver string `json:"driver"`
	CUDA   string `json:"cuda"`
	CuDNN  string `json:"cudnn"`
	CuBLAS string `json:"cublas"`
	NVRTC  string `json:"nvrtc"`
	// Paths are the files loaded, by library ("cuDNN", "cuBLAS", "cuBLASLt", "NVRTC",
	// "NVML"): a soname where the loader resolved it.
	Paths map[string]string `json:"paths,omitempty"`
}

// Verdict is one check's outcome.
type Verdict string

const (
	Pass        Verdict = "ok"          // ran, and matched the reference within tolerance
	Ran         Verdict = "ran"         // ran and was timed; this build compares no output for it
	Mismatch    Verdict = "mismatch"    // ran, but its output or gradient is off: do not trust its timings
	Unsupported Verdict = "unsupported" // the libraries cannot run it here (Why says why)
	Failed      Verdict = "error"       // the call failed (Why has the library's message)
)

// Row is one layer kind, precision and phase.
type Row struct {
	Layer     string            `json:"layer"` // the configuration key
	Kind      cnn.Op            `json:"kind"`
	Precision measure.Precision `json:"precision"`
	Phase     measure.Phase     `json:"phase"`
	Policy    measure.Policy    `json:"policy,omitempty"`    // fastest: the algorithm cudnnFind*AlgorithmEx timed best
	API       string            `json:"cudnn_api,omitempty"` // v8: the convolution ran through cuDNN's graph API, as PyTorch 2's
	Verdict   Verdict           `json:"verdict"`
	MaxError  float64           `json:"max_error,omitempty"` // largest error relative to the reference's largest magnitude
	Tolerance float64           `json:"tolerance,omitempty"`
	MS        float64           `json:"ms,omitempty"`
	Why       string            `json:"why,omitempty"`
}

// Sweep is the short timed sweep's outcome.
type Sweep struct {
	Items    int     `json:"items"`
	Measured int     `json:"measured"`
	Seconds  float64 `json:"seconds"`
	Why      string  `json:"why,omitempty"` // why it stopped, when it did
	// Failures are the items that returned an error (the sweep records them and goes on).
	Failures []string `json:"failures,omitempty"`
}

// Report is everything -selftest found.
type Report struct {
	Device   measure.Device `json:"device"`
	Versions Versions       `json:"versions"`
	Rows     []Row          `json:"rows"`
	Sweep    Sweep          `json:"sweep"`
	// Libraries are the places the worker looked for each library, in order, with the
	// one it loaded and why the others were skipped.
	Libraries []libfind.Candidate `json:"libraries,omitempty"`
}

// Precisions are the ones the self-test checks.
var Precisions = []measure.Precision{measure.FP32, measure.TF32, measure.AMP, measure.BF16}

// Tolerance is the largest error, relative to the reference's largest magnitude, a
// precision may show: FP32 differs from the CPU only in summation order (and cuDNN's
// FFT/Winograd algorithms), TF32 keeps 10 mantissa bits, FP16 data under amp 10 bits
// with FP32 accumulation, bfloat16 data 7 bits.
func Tolerance(p measure.Precision) float64 {
	switch p {
	case measure.BF16:
		return 4e-2
	case measure.TF32:
		return 1e-2
	case measure.AMP:
		return 2e-2
	}
	return 1e-3
}

// Compare returns the largest |got-want| relative to the largest |want| and whether it
// is within precision p's tolerance. A length mismatch, NaN or infinity fails.
func Compare(got, want []float32, p measure.Precision) (float64, bool) {
	if len(got) != len(want) {
		return math.Inf(1), false
	}
	var scale, worst float64
	for i := range want {
		scale = max(scale, math.Abs(float64(want[i])))
	}
	scale = max(scale, 1e-6)
	for i := range got {
		g := float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1), false
		}
		worst = max(worst, math.Abs(g-float64(want[i]))/scale)
	}
	return worst, worst <= Tolerance(p)
}

// Batch is the batch size of the self-test's layers.
const Batch = 2

// Cases are the small configurations the self-test runs: one of every kind the worker
// measures, at shapes that take microseconds.
func Cases() []cnn.Config {
	s := cnn.Shape{C: 8, H: 6, W: 6}
	one := func(op cnn.Op) cnn.Config { return cnn.Config{Op: op, In: s, Out: s, NumInputs: 1} }
	conv := cnn.Config{Op: cnn.OpConv2d, In: s, Out: cnn.Shape{C: 16, H: 6, W: 6}, NumInputs: 1,
		Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1, Bias: true}
	dw := cnn.Config{Op: cnn.OpConv2d, In: s, Out: cnn.Shape{C: 8, H: 3, W: 3}, NumInputs: 1,
		Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{2, 2}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 8}
	out := []cnn.Config{conv, dw,
		{Op: cnn.OpLinear, In: cnn.Shape{C: 32, H: 1, W: 1}, Out: cnn.Shape{C: 10, H: 1, W: 1}, NumInputs: 1, Bias: true},
		// ConvNeXt's MLP: a linear layer on channels-last positions.
		{Op: cnn.OpLinear, In: cnn.Shape{C: 8, H: 3, W: 3}, Out: cnn.Shape{C: 12, H: 3, W: 3}, NumInputs: 1, Bias: true},
		one(cnn.OpBatchNorm), one(cnn.OpLayerNorm),
		// Enough rows (2×32×32) that every GPU of up to 256 SMs reduces them a warp per
		// row, as real layer norms are: 72 rows take the block-per-row path.
		{Op: cnn.OpLayerNorm, In: cnn.Shape{C: 8, H: 32, W: 32}, Out: cnn.Shape{C: 8, H: 32, W: 32}, NumInputs: 1}}
	for _, op := range []cnn.Op{cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU, cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU,
		cnn.OpScale, cnn.OpChannelShuffle, cnn.OpDropout, cnn.OpStochasticDepth, cnn.OpFlatten, cnn.OpPermute} {
		c := one(op)
		if op == cnn.OpChannelShuffle {
			c.Groups = 2
		}
		out = append(out, c)
	}
	pool := func(op cnn.Op) cnn.Config {
		return cnn.Config{Op: op, In: s, Out: cnn.Shape{C: 8, H: 3, W: 3}, NumInputs: 1, Kernel: cnn.Pair{2, 2}, Stride: cnn.Pair{2, 2}}
	}
	out = append(out, pool(cnn.OpMaxPool), pool(cnn.OpAvgPool),
		cnn.Config{Op: cnn.OpAdaptiveAvg, In: s, Out: cnn.Shape{C: 8, H: 1, W: 1}, NumInputs: 1},
		// An adaptive average to 4×4 from 6×6: overlapping windows of two sizes.
		cnn.Config{Op: cnn.OpAdaptiveAvg, In: s, Out: cnn.Shape{C: 8, H: 4, W: 4}, NumInputs: 1},
		cnn.Config{Op: cnn.OpAdd, In: s, Out: s, NumInputs: 2},
		cnn.Config{Op: cnn.OpMul, In: s, Out: s, NumInputs: 2},
		cnn.Config{Op: cnn.OpConcat, In: cnn.Shape{C: 16, H: 6, W: 6}, Out: cnn.Shape{C: 16, H: 6, W: 6}, NumInputs: 2},
		cnn.Config{Op: cnn.OpSlice, In: s, Out: cnn.Shape{C: 4, H: 6, W: 6}, NumInputs: 1},
		cnn.Config{Op: cnn.OpLoss, In: cnn.Shape{C: 10, H: 1, W: 1}, Out: cnn.Shape{C: 1, H: 1, W: 1}, NumInputs: 1})
	return out
}

// TF32Case is a convolution whose TF32 check exercises tensor cores: 64 channels in and
// out at 16×16, so that cuDNN picks a TF32 tensor-core algorithm (at 8 channels, 6×6, the
// TF32 checks matched FP32 bit for bit on an H200: they never used TF32).
func TF32Case() cnn.Config {
	s := cnn.Shape{C: 64, H: 16, W: 16}
	return cnn.Config{Op: cnn.OpConv2d, In: s, Out: s, NumInputs: 1, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1},
		Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
}

// TF32Exercised is the error, relative to the largest value, below which a TF32
// convolution's result is FP32's: TF32 keeps 10 mantissa bits, so a tensor-core sum of
// 576 products differs from FP32's by about 1e-4 to 1e-3 of the largest output, where an
// FP32 algorithm differs by about 1e-7.
const TF32Exercised = 1e-5

// Check is one configuration the self-test runs, at one precision and algorithm policy,
// through one cuDNN API ("" legacy, "v8" the graph API) for a convolution.
type Check struct {
	Config    cnn.Config
	Precision measure.Precision
	Policy    measure.Policy
	API       string
}

// Plan lists the self-test's checks: every case at every precision with cuDNN's
// heuristic choice, and the dense convolution at every precision with the fastest
// algorithm (cudnnFind*AlgorithmEx, which sweeps with --policy fastest use: under TF32
// and amp it may pick a tensor-core algorithm the heuristic does not) and through cuDNN's
// graph API (the engines PyTorch 2 runs, which sweeps with --cudnn-api v8 use).
func Plan() []Check {
	var out []Check
	for _, c := range Cases() {
		for _, p := range Precisions {
			out = append(out, Check{Config: c, Precision: p, Policy: measure.Heuristic})
		}
	}
	for _, p := range Precisions {
		out = append(out, Check{Config: Cases()[0], Precision: p, Policy: measure.Fastest},
			Check{Config: Cases()[0], Precision: p, Policy: measure.Heuristic, API: "v8"})
	}
	// TF32 on a shape that takes tensor cores, beside FP32 on it.
	return append(out, Check{Config: TF32Case(), Precision: measure.FP32, Policy: measure.Heuristic},
		Check{Config: TF32Case(), Precision: measure.TF32, Policy: measure.Heuristic})
}

// coreKinds are the layer kinds every sweep measures through cuDNN and cuBLAS: when
// their FP32 checks do not pass, the libraries are broken and nothing can be trusted.
var coreKinds = []cnn.Op{cnn.OpConv2d, cnn.OpLinear, cnn.OpBatchNorm}

// OwnKinds are the layer kinds cnntime's own kernels run (package cudakern's, compiled
// with NVRTC at start-up): the memory-bound layers cuDNN and cuBLAS do not cover, and
// batch norm on bfloat16 data, which PyTorch runs in its own kernels rather than cuDNN.
var OwnKinds = []cnn.Op{cnn.OpBatchNorm, cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU, cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU,
	cnn.OpAdd, cnn.OpMul, cnn.OpScale, cnn.OpConcat, cnn.OpChannelShuffle, cnn.OpPermute, cnn.OpDropout, cnn.OpStochasticDepth,
	cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg, cnn.OpLayerNorm, cnn.OpLoss}

// Problems lists what keeps the report from being trusted: a check that mismatched the
// reference or failed; an FP32 convolution, linear or batch-norm check that did not pass
// (a cuDNN or cuBLAS install that cannot run them is broken, whatever status it gave);
// FP32 checks of cnntime's own kernels that were unsupported (NVRTC absent, or the
// kernels did not compile or load: every sweep would record those layers unsupported);
// a timed sweep that stopped, or whose items failed.
func (r Report) Problems() []string {
	var out []string
	if m, f := r.Count(Mismatch), r.Count(Failed); m+f > 0 {
		out = append(out, fmt.Sprintf("%d checks mismatched the CPU reference and %d failed", m, f))
	}
	var ownOff []Row
	ownChecked := 0
	for _, row := range r.Rows {
		// Batch norm is cnntime's kernel in bf16 only: its FP32 check is cuDNN's (coreKinds).
		if row.Precision != measure.FP32 || !slices.Contains(OwnKinds, row.Kind) || row.Kind == cnn.OpBatchNorm {
			continue
		}
		ownChecked++
		if row.Verdict == Unsupported {
			ownOff = append(ownOff, row)
		}
	}
	if len(ownOff) > 0 {
		out = append(out, fmt.Sprintf("cnntime's own kernels did not run: %d of %d FP32 checks of the memory-bound layers are unsupported, so sweeps would record those layers unsupported (%s: %s)",
			len(ownOff), ownChecked, ownOff[0].Layer, ownOff[0].Why))
	}
	for _, kind := range coreKinds {
		seen := false
		for _, row := range r.Rows {
			if row.Kind != kind || row.Precision != measure.FP32 || row.API == "v8" { // the graph API is an option, not what sweeps need
				continue
			}
			seen = true
			if row.Verdict == Unsupported || row.Verdict == Ran {
				how := ""
				if row.Policy == measure.Fastest {
					how = " with the fastest algorithm"
				}
				why := row.Why
				if why == "" {
					why = string(row.Verdict)
				}
				out = append(out, fmt.Sprintf("FP32 %s %s%s did not run against the reference: %s", kind, row.Phase, how, why))
			}
		}
		if !seen {
			out = append(out, fmt.Sprintf("no FP32 %s was checked", kind))
		}
	}
	if tf32Capable(r.Device.ComputeCapability) {
		for _, row := range r.Rows {
			if row.Layer == TF32Case().Key() && row.Precision == measure.TF32 && row.Verdict == Pass && row.MaxError < TF32Exercised {
				out = append(out, fmt.Sprintf("TF32 convolutions did not use TF32: the %s check (%s) matched FP32 to %.1g of its largest value, so tf32 rows would time FP32 algorithms", row.Layer, row.Phase, row.MaxError))
				break
			}
		}
	}
	s := r.Sweep
	switch {
	case s.Why != "":
		out = append(out, "the timed sweep stopped: "+s.Why)
	case len(s.Failures) > 0:
		out = append(out, fmt.Sprintf("%d items of the timed sweep failed (first: %s)", len(s.Failures), s.Failures[0]))
	case s.Measured < s.Items:
		out = append(out, fmt.Sprintf("the timed sweep measured %d of its %d items", s.Measured, s.Items))
	}
	return out
}

// Trustworthy reports whether the report found no problem: the worker's timings can be
// trusted for every kind that ran.
func (r Report) Trustworthy() bool { return len(r.Problems()) == 0 }

// Count returns how many rows have verdict v.
func (r Report) Count(v Verdict) int {
	n := 0
	for _, row := range r.Rows {
		if row.Verdict == v {
			n++
		}
	}
	return n
}

// Write prints the report as a person reads it: versions, one line per check, the
// sweep, and a verdict line.
func (r Report) Write(w io.Writer) error {
	d := r.Device
	v := r.Versions
	var b strings.Builder
	fmt.Fprintf(&b, "device   %s (%s, compute capability %s, %d SMs)\n", d.Name, d.UUID, d.ComputeCapability, d.SMs)
	fmt.Fprintf(&b, "versions driver %s, CUDA %s, cuDNN %s, cuBLAS %s, NVRTC %s\n\n", or(v.Driver), or(v.CUDA), or(v.CuDNN), or(v.CuBLAS), or(v.NVRTC))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPRECISION\tPHASE\tPOLICY\tRESULT\tERROR\tTOLERANCE\tMS\tWHY")
	for _, row := range r.Rows {
		errText, tolText, msText := "", "", ""
		if row.Verdict == Pass || row.Verdict == Mismatch {
			errText, tolText = fmt.Sprintf("%.2g", row.MaxError), fmt.Sprintf("%.0g", row.Tolerance)
		}
		if row.MS > 0 {
			msText = fmt.Sprintf("%.4f", row.MS)
		}
		policy := string(row.Policy)
		if row.API != "" {
			policy += " " + row.API
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Layer, row.Precision, row.Phase, policy, row.Verdict, errText, tolText, msText, row.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := r.Sweep
	fmt.Fprintf(&b, "\nsweep    %d of %d items measured in %.1f s", s.Measured, s.Items, s.Seconds)
	if s.Why != "" {
		fmt.Fprintf(&b, " (%s)", s.Why)
	}
	for _, f := range s.Failures {
		fmt.Fprintf(&b, "\n  failed: %s", f)
	}
	fmt.Fprintf(&b, "\nsummary  %d ok, %d ran, %d unsupported, %d mismatched, %d failed: ", r.Count(Pass), r.Count(Ran), r.Count(Unsupported), r.Count(Mismatch), r.Count(Failed))
	if problems := r.Problems(); len(problems) == 0 {
		b.WriteString("this GPU's measurements can be trusted for every layer kind that ran.\n")
	} else {
		b.WriteString("do not trust this GPU's measurements yet: send this whole report with your bug report.\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tf32Capable reports whether a GPU of compute capability cc ("8.0") has TF32 tensor
// cores: 8.0 and later.
func tf32Capable(cc string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(cc, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major >= 8
}

func or(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

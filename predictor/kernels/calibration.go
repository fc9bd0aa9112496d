package kernels

import (
	"cnntime/predictor/hw"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"cnntime/predictor/measure"
)

// CalibrationVersion is the version of the calibration format this package reads.
const CalibrationVersion = 1

// Arithmetic is the kind of arithmetic unit a kernel runs on, which is what an
// efficiency is fitted for.
type Arithmetic int

const (
	ArithFP32     Arithmetic = iota // FP32 on CUDA cores
	ArithTF32                       // TF32 on tensor cores (compute capability ≥ 8.0)
	ArithFP16                       // FP16 on tensor cores with FP32 accumulate (≥ 7.0)
	ArithFP16SIMT                   // FP16 storage on a GPU without tensor cores: FP32-rate math
	numArith
)

var arithNames = [numArith]string{"fp32", "tf32", "fp16", "fp16-simt"}

func (a Arithmetic) String() string {
	if a < 0 || a >= numArith {
		return "unknown"
	}
	return arithNames[a]
}

var phaseIndex = map[measure.Phase]int{measure.Forward: 0, measure.BackwardData: 1, measure.BackwardWeights: 2}

// EfficiencyKey names one fitted compute efficiency: "class/arithmetic/phase",
// e.g. "conv3x3/fp32/fwd".
func EfficiencyKey(c Class, a Arithmetic, p measure.Phase) string {
	return c.String() + "/" + a.String() + "/" + string(p)
}

// Calibration holds the fitted efficiencies and coefficients of the roofline model and
// the accuracy the fit achieved. It is what `cnntime calibrate` writes and the app
// embeds; ParseCalibration reads and checks it.
type Calibration struct {
	Version  int    `json:"version"`
	FittedOn string `json:"fitted_on"` // the data the fit used
	Method   string `json:"method"`    // how it was fitted
	// ComputeEfficiency is achieved FLOP rate ÷ peak, per EfficiencyKey, for a full
	// wave of the kernel's largest efficient tile. Above 1 where cuDNN's algorithm does
	// fewer FLOPs than direct convolution (Winograd, FFT).
	ComputeEfficiency map[string]float64 `json:"compute_efficiency"`
	// Fitted lists the keys of ComputeEfficiency that were fitted to data; the others
	// are priors (documented in Method).
	Fitted []string `json:"fitted"`
	// MemoryEfficiency is achieved ÷ specified memory bandwidth for streaming kernels.
	MemoryEfficiency float64 `json:"memory_efficiency"`
	// LaunchUS is the fixed GPU-side cost of one kernel phase in microseconds (launch
	// latency and tail of a kernel queued behind others), included in every estimate.
	LaunchUS float64 `json:"launch_us"`
	// UnalignedTensorFactor multiplies tensor-core efficiency when channels are not
	// multiples of 8 (FP16) or 4 (TF32), as cuDNN then pads or falls back.
	UnalignedTensorFactor float64 `json:"unaligned_tensor_factor"`
	// EstimateRelErr is the expected relative error (a fraction) of an estimate from
	// specifications, per arithmetic: leave-one-GPU-out MAPE where fitted.
	EstimateRelErr map[string]float64 `json:"estimate_rel_err"`
	// FamilyScale multiplies the compute efficiency of every kernel in one arithmetic
	// on one GPU family, keyed "family/arithmetic" (e.g. "hopper/fp16", see hw.Family):
	// how much of its peak current cuDNN reaches there, relative to the old GPUs and
	// libraries the per-layer efficiencies were fitted on. Fitted to published
	// whole-network throughputs; 1 where absent.
	FamilyScale map[string]float64 `json:"family_scale,omitempty"`
	// FamilyMemoryScale multiplies MemoryEfficiency on one GPU family, keyed by the
	// family's name (e.g. "ga100"): the share of the specified bandwidth that the
	// memory-bound kernels of training (batch norm, activations, depthwise
	// convolutions, squeeze-excitation gates) reach differs between HBM and GDDR parts
	// and between generations. Fitted to published whole-network throughputs; 1 where
	// absent.
	FamilyMemoryScale map[string]float64 `json:"family_memory_scale,omitempty"`
	// NetworkFit says what the whole-network fit used and reached, for display.
	NetworkFit string `json:"network_fit,omitempty"`
	// NetworkRelErr is the expected relative error (a fraction) of a whole training
	// step estimated from specifications on one GPU family in one arithmetic, keyed
	// like FamilyScale: the mean absolute error of the published whole-network
	// throughputs of that family and arithmetic after the fit, pulled towards the
	// held-out rows' error where rows are few. It is the error band of every estimated
	// kernel there, so that a step's band (the time-weighted mean of its kernels')
	// says how far whole-network predictions are off, not how far single DeepBench
	// layers are. Absent: NetworkRelErrOther, else EstimateRelErr.
	NetworkRelErr map[string]float64 `json:"network_rel_err,omitempty"`
	// NetworkRelErrOther is the band of a family and arithmetic without published
	// rows: wider than any that has them.
	NetworkRelErrOther float64 `json:"network_rel_err_other,omitempty"`
	// UntunedBandFloor is, per family (by name) that no tuning row covers but held-out
	// published rows do, the largest of those rows' errors (a fraction): the band of a
	// family predicted from its neighbour's scales (FamilyNeighbour) is at least that,
	// so it covers the evidence it was not fitted on, until public sources of its own
	// tune it. Blackwell's held-out Lambda B200 rows set it.
	UntunedBandFloor map[string]float64 `json:"untuned_band_floor,omitempty"`
	// TransferRelErr is the expected relative error of a time transferred from another GPU.
	TransferRelErr float64 `json:"transfer_rel_err"`
	// SplitKMax is the most ways a weight-gradient GEMM's reduction is split across
	// blocks (see LegacySplitK and ModernSplitK); 0 reads as LegacySplitK, the cap the
	// per-layer efficiencies were fitted under. The whole-network fit sets ModernSplitK:
	// every published whole-network figure ran cuDNN 8 or later.
	SplitKMax int `json:"split_k_max,omitempty"`
	// StreamBytesPerSMCycle caps the rate of memory-bound kernels by the SMs that issue
	// their loads and stores: bytes per SM per clock cycle (at the sustained clock). A
	// streaming kernel runs at the lower of the memory's rate (bandwidth × efficiency)
	// and SMs × clock × this; on GPUs with much bandwidth per SM (HBM3 and HBM3e:
	// H100, H200, B200) the SMs, not the memory, bound normalisations, activations and
	// layout transposes. 0: no cap. Fitted to published whole-network throughputs.
	StreamBytesPerSMCycle float64 `json:"stream_bytes_per_sm_cycle,omitempty"`
	// NCHWNormBytesPerSMCycle caps the rate of cuDNN's NCHW batch-norm kernels, which
	// an eager NCHW network runs under amp (Request.NCHWNorm): bytes per SM per clock
	// cycle (at the sustained clock), on the SMs its channels fill. They reduce each
	// channel's plane in one block, so the SMs holding the channels, not the memory,
	// bound them wherever the memory streams faster than that; channels_last's NHWC
	// kernels stream at the ordinary rate.
	// 0: no cap. Fitted to published whole-network throughputs.
	NCHWNormBytesPerSMCycle float64 `json:"nchw_norm_bytes_per_sm_cycle,omitempty"`
	// PowerClockExponent is how a power-capped GPU's sustained clock follows its board
	// power per SM relative to its family's reference part (SustainedClockFactorExp):
	// clock ∝ (power per SM)^exponent. 0 reads as LegacyPowerClockExponent (1/3, the
	// per-layer fit's). Fitted to the published whole-network throughputs of
	// power-capped parts (A10, H100 PCIe, ...).
	PowerClockExponent float64 `json:"power_clock_exponent,omitempty"`
	// MaturityDeficit and MaturityMonths say how much less of its peak a GPU reaches
	// with kernel libraries released soon after its architecture launched
	// (hw.LaunchMonth) than with mature ones: the compute efficiency is scaled by
	// Maturity = 1 − MaturityDeficit × exp(−age ÷ MaturityMonths), age in months from
	// the launch to the libraries' release (at least 0). The family scales are the
	// mature libraries'. 0: no such term. Fitted to published whole-network throughputs
	// that state the software they ran.
	MaturityDeficit float64 `json:"maturity_deficit,omitempty"`
	MaturityMonths  float64 `json:"maturity_months,omitempty"`
	// MaturityLaunchUS is the fixed GPU time, microseconds, that a convolution or
	// matrix product adds to LaunchUS on libraries released as its GPU's architecture
	// launched, falling as MaturityDeficit does (× exp(−age ÷ MaturityMonths)): a young
	// library's call runs more kernels around its GEMM (index and transform kernels,
	// split reductions) and picks its algorithm with heuristics not yet tuned for the
	// GPU, a cost per call that no batch amortises. 0: none.
	MaturityLaunchUS float64 `json:"maturity_launch_us,omitempty"`
	// Accuracy is the leave-one-GPU-out report of the fit, for display.
	Accuracy []GPUAccuracy `json:"accuracy,omitempty"`

	eff     [numClasses][numArith][3]float64
	estErr  [numArith]float64
	family  [hw.NumFamilies][numArith]float64
	memFam  [hw.NumFamilies]float64
	netErr  [hw.NumFamilies][numArith]float64 // 0: not given
	floor   [hw.NumFamilies]float64           // UntunedBandFloor by family
	checked bool
}

// GPUAccuracy is the per-layer accuracy on one GPU held out of the fit.
type GPUAccuracy struct {
	GPU   string `json:"gpu"`
	Sheet string `json:"arithmetic"` // the arithmetic the rows ran in
	Rows  int    `json:"rows"`       // phase timings compared
	// EstimateMAPE: predicted from specifications with efficiencies fitted on the other GPUs, percent.
	EstimateMAPE float64 `json:"estimate_mape_pct"`
	// TransferMAPE: transferred from the other GPUs' measurements of the same layer, percent; 0 when none.
	TransferMAPE float64 `json:"transfer_mape_pct"`
	TransferRows int     `json:"transfer_rows"`
}

// ParseCalibration reads a calibration from JSON and checks every figure: the
// version, one positive finite efficiency for every class × arithmetic × phase, and
// the coefficients' ranges.
func ParseCalibration(data []byte) (*Calibration, error) {
	var c Calibration
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("read calibration JSON: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// MarshalIndent writes the calibration as stable, indented JSON (keys sorted).
func (c *Calibration) MarshalIndent() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write calibration JSON: %w", err)
	}
	return append(out, '\n'), nil
}

func positiveFinite(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// Validate checks every figure of c (see ParseCalibration) and fills the lookup
// tables the model reads; call it after changing a calibration built in code.
func (c *Calibration) Validate() error {
	if c.Version != CalibrationVersion {
		return fmt.Errorf("calibration has version %d: this cnntime reads version %d; regenerate it with 'cnntime calibrate'", c.Version, CalibrationVersion)
	}
	var missing []string
	for cl := Class(0); cl < numClasses; cl++ {
		for a := Arithmetic(0); a < numArith; a++ {
			for p, i := range phaseIndex {
				key := EfficiencyKey(cl, a, p)
				v, ok := c.ComputeEfficiency[key]
				if !ok {
					missing = append(missing, key)
					continue
				}
				if !positiveFinite(v) || v > 10 {
					return fmt.Errorf("calibration: compute efficiency %s = %v: must be in (0, 10]", key, v)
				}
				c.eff[cl][a][i] = v
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("calibration lacks %d compute efficiencies (first %s); regenerate it with 'cnntime calibrate'", len(missing), missing[0])
	}
	if len(c.ComputeEfficiency) != int(numClasses)*int(numArith)*3 {
		for key := range c.ComputeEfficiency {
			if !knownKey(key) {
				return fmt.Errorf("calibration has an unknown compute efficiency %q", key)
			}
		}
	}
	switch {
	case !positiveFinite(c.MemoryEfficiency) || c.MemoryEfficiency > 1.5:
		return fmt.Errorf("calibration: memory efficiency %v must be in (0, 1.5]", c.MemoryEfficiency)
	case c.LaunchUS < 0 || math.IsNaN(c.LaunchUS) || c.LaunchUS > 1000:
		return fmt.Errorf("calibration: launch overhead %v µs must be in [0, 1000]", c.LaunchUS)
	case !positiveFinite(c.UnalignedTensorFactor) || c.UnalignedTensorFactor > 1:
		return fmt.Errorf("calibration: unaligned tensor factor %v must be in (0, 1]", c.UnalignedTensorFactor)
	case !positiveFinite(c.TransferRelErr):
		return fmt.Errorf("calibration: transfer error %v must be positive", c.TransferRelErr)
	case c.StreamBytesPerSMCycle < 0 || math.IsNaN(c.StreamBytesPerSMCycle) || c.StreamBytesPerSMCycle > 1024:
		return fmt.Errorf("calibration: stream bytes per SM cycle %v must be in [0, 1024] (0: no cap)", c.StreamBytesPerSMCycle)
	case c.NCHWNormBytesPerSMCycle < 0 || math.IsNaN(c.NCHWNormBytesPerSMCycle) || c.NCHWNormBytesPerSMCycle > 1024:
		return fmt.Errorf("calibration: NCHW batch-norm bytes per SM cycle %v must be in [0, 1024] (0: no cap)", c.NCHWNormBytesPerSMCycle)
	case c.PowerClockExponent < 0 || math.IsNaN(c.PowerClockExponent) || c.PowerClockExponent > 1:
		return fmt.Errorf("calibration: power-clock exponent %v must be in [0, 1] (0: 1/3)", c.PowerClockExponent)
	case c.MaturityDeficit < 0 || math.IsNaN(c.MaturityDeficit) || c.MaturityDeficit >= 1:
		return fmt.Errorf("calibration: maturity deficit %v must be in [0, 1) (0: none)", c.MaturityDeficit)
	case c.MaturityLaunchUS < 0 || math.IsNaN(c.MaturityLaunchUS) || c.MaturityLaunchUS > 1000:
		return fmt.Errorf("calibration: maturity launch cost %v µs must be in [0, 1000] (0: none)", c.MaturityLaunchUS)
	case (c.MaturityDeficit > 0 || c.MaturityLaunchUS > 0) && (!positiveFinite(c.MaturityMonths) || c.MaturityMonths > 240):
		return fmt.Errorf("calibration: maturity time %v months must be in (0, 240] where a deficit or launch cost is given", c.MaturityMonths)
	case c.SplitKMax < 0 || c.SplitKMax > 1024:
		return fmt.Errorf("calibration: split-K cap %d must be in [0, 1024] (0: cuDNN 7's %d)", c.SplitKMax, LegacySplitK)
	}
	for a := Arithmetic(0); a < numArith; a++ {
		v, ok := c.EstimateRelErr[a.String()]
		if !ok || !positiveFinite(v) {
			return fmt.Errorf("calibration: estimate error for %s is %v: must be given and positive", a, v)
		}
		c.estErr[a] = v
	}
	for f := hw.Family(0); f < hw.NumFamilies; f++ {
		for a := Arithmetic(0); a < numArith; a++ {
			c.family[f][a] = 1
		}
	}
	for key, v := range c.FamilyScale {
		f, a, ok := parseFamilyKey(key)
		if !ok {
			return fmt.Errorf("calibration: family scale %q: the key must be family/arithmetic with a family of %v and an arithmetic of %v", key, hw.FamilyNames(), arithNames)
		}
		if !positiveFinite(v) || v > 4 {
			return fmt.Errorf("calibration: family scale %s = %v: must be in (0, 4]", key, v)
		}
		c.family[f][a] = v
	}
	for f := hw.Family(0); f < hw.NumFamilies; f++ {
		c.memFam[f] = 1
	}
	for key, v := range c.FamilyMemoryScale {
		f := hw.Family(1)
		for ; f < hw.NumFamilies && f.String() != key; f++ {
		}
		if f >= hw.NumFamilies {
			return fmt.Errorf("calibration: family memory scale %q: the key must be a family of %v", key, hw.FamilyNames())
		}
		if !positiveFinite(v) || v > 2 {
			return fmt.Errorf("calibration: family memory scale %s = %v: must be in (0, 2]", key, v)
		}
		c.memFam[f] = v
	}
	c.netErr = [hw.NumFamilies][numArith]float64{}
	for key, v := range c.NetworkRelErr {
		f, a, ok := parseFamilyKey(key)
		if !ok {
			return fmt.Errorf("calibration: network error band %q: the key must be family/arithmetic with a family of %v and an arithmetic of %v", key, hw.FamilyNames(), arithNames)
		}
		if !positiveFinite(v) || v > 5 {
			return fmt.Errorf("calibration: network error band %s = %v: must be in (0, 5]", key, v)
		}
		c.netErr[f][a] = v
	}
	if c.NetworkRelErrOther < 0 || math.IsNaN(c.NetworkRelErrOther) || c.NetworkRelErrOther > 5 {
		return fmt.Errorf("calibration: network error band for other families %v must be in [0, 5]", c.NetworkRelErrOther)
	}
	c.floor = [hw.NumFamilies]float64{}
	for key, v := range c.UntunedBandFloor {
		f := hw.Family(1)
		for ; f < hw.NumFamilies && f.String() != key; f++ {
		}
		if f >= hw.NumFamilies {
			return fmt.Errorf("calibration: untuned band floor %q: the key must be a family of %v", key, hw.FamilyNames())
		}
		if !positiveFinite(v) || v > 5 {
			return fmt.Errorf("calibration: untuned band floor %s = %v: must be in (0, 5]", key, v)
		}
		c.floor[f] = v
	}
	c.inheritFromNeighbours()
	c.checked = true
	return nil
}

// FamilyNeighbour is, for a family that no published training figure covers, the
// fitted family it is predicted from: the generation before it, whose tensor cores,
// memory system and libraries it extends. Blackwell (B200, GB200, B300) takes Hopper's
// scales; the GeForce and professional Blackwell (RTX 5090, RTX PRO 6000) takes Ada's,
// the GDDR boards with a large L2 whose SM it extends. Their own specifications (SMs,
// clocks, tensor rates, bandwidth) do the rest.
var FamilyNeighbour = map[hw.Family]hw.Family{hw.FamilyBlackwell: hw.FamilyHopper, hw.FamilyGB20x: hw.FamilyAda}

// NeighbourBandFactor widens the error band a family borrows from its neighbour: a
// generation no published run checks is predicted at twice its neighbour's band, and
// never narrower than the band of families without rows (NetworkRelErrOther).
const NeighbourBandFactor = 2.0

// inheritFromNeighbours gives each family of FamilyNeighbour that the calibration does
// not name its neighbour's compute and memory scales and a widened error band, at
// least its UntunedBandFloor.
func (c *Calibration) inheritFromNeighbours() {
	for f, n := range FamilyNeighbour {
		own := false
		for key := range c.FamilyScale {
			if fam, _, ok := parseFamilyKey(key); ok && fam == f {
				own = true
			}
		}
		if _, ok := c.FamilyMemoryScale[f.String()]; ok {
			own = true
		}
		if own {
			continue
		}
		c.family[f] = c.family[n]
		c.memFam[f] = c.memFam[n]
		for a := Arithmetic(0); a < numArith; a++ {
			if c.netErr[f][a] == 0 && c.netErr[n][a] > 0 {
				c.netErr[f][a] = math.Max(math.Max(NeighbourBandFactor*c.netErr[n][a], c.NetworkRelErrOther), c.floor[f])
			}
		}
	}
}

// Maturity is the share of the calibrated compute efficiency g's kernels reach with
// libraries released in month (0: mature, 1): 1 − MaturityDeficit × exp(−age ÷
// MaturityMonths), age the months from g's architecture's launch (hw.LaunchMonth) to
// month, taken as 0 for libraries older than the architecture (they run their first,
// or an earlier architecture's, kernels on it). 1 where g's architecture is undated or
// the calibration has no maturity term.
func (c *Calibration) Maturity(g hw.GPU, month hw.Month) float64 {
	if c == nil || !(c.MaturityDeficit > 0) {
		return 1
	}
	return 1 - c.MaturityDeficit*c.immaturity(g, month)
}

// MaturityLaunchMS is the fixed GPU time, milliseconds, that a convolution or matrix
// product on g adds to its launch cost with libraries released in month (0: mature,
// 0): MaturityLaunchUS × exp(−age ÷ MaturityMonths), age as in Maturity.
func (c *Calibration) MaturityLaunchMS(g hw.GPU, month hw.Month) float64 {
	if c == nil || !(c.MaturityLaunchUS > 0) {
		return 0
	}
	return c.MaturityLaunchUS * c.immaturity(g, month) / 1000
}

// immaturity is exp(−age ÷ MaturityMonths), age the months from g's architecture's
// launch to month (at least 0): 1 for libraries of the launch month, falling towards
// 0 as they mature; 0 where month is 0 (mature), g's architecture is undated or the
// time is not set.
func (c *Calibration) immaturity(g hw.GPU, month hw.Month) float64 {
	if month == 0 || !(c.MaturityMonths > 0) {
		return 0
	}
	launch, ok := hw.LaunchMonth(g)
	if !ok {
		return 0
	}
	age := math.Max(float64(month-launch), 0)
	return math.Exp(-age / c.MaturityMonths)
}

// PowerClockExponentOrLegacy is PowerClockExponent, or LegacyPowerClockExponent
// where it is 0.
func (c *Calibration) PowerClockExponentOrLegacy() float64 {
	if c == nil || !(c.PowerClockExponent > 0) {
		return LegacyPowerClockExponent
	}
	return c.PowerClockExponent
}

// SplitKMaxOrLegacy is SplitKMax, or LegacySplitK where it is 0.
func (c *Calibration) SplitKMaxOrLegacy() int {
	if c.SplitKMax > 0 {
		return c.SplitKMax
	}
	return LegacySplitK
}

// Inherited reports whether family f is predicted from its FamilyNeighbour's scales
// because no published figure of its own was fitted.
func (c *Calibration) Inherited(f hw.Family) bool {
	if _, ok := FamilyNeighbour[f]; !ok {
		return false
	}
	for key := range c.FamilyScale {
		if fam, _, ok := parseFamilyKey(key); ok && fam == f {
			return false
		}
	}
	_, ok := c.FamilyMemoryScale[f.String()]
	return !ok
}

// UntunedNote says, for a GPU whose family no published run tunes (it is predicted from
// its FamilyNeighbour's scales), that there is no tuning measurement for its family and
// what it is predicted from; "" for every other GPU.
func (c *Calibration) UntunedNote(g hw.GPU) string {
	f := hw.FamilyOf(g)
	if !c.Inherited(f) {
		return ""
	}
	return fmt.Sprintf("no tuning measurement for this GPU family (%s: predicted from %s's scales)", f, FamilyNeighbour[f])
}

// UntunedBand is the least band of a whole step estimated on family f when f is
// predicted from its neighbour's scales: its UntunedBandFloor (0 where none).
func (c *Calibration) UntunedBand(f hw.Family) float64 {
	if f <= 0 || f >= hw.NumFamilies || !c.Inherited(f) {
		return 0
	}
	return c.floor[f]
}

// EstimateRelErrOf is the error band of a time estimated from specifications on
// family f in arithmetic a: the whole-network band of that family and arithmetic;
// where no published row covers them, the wider of the band for such families and
// the per-layer band (pre-Volta GPUs, FP32 without TF32 on Ampere and later).
func (c *Calibration) EstimateRelErrOf(f hw.Family, a Arithmetic) float64 {
	if a < 0 || a >= numArith {
		return 1
	}
	if f > 0 && f < hw.NumFamilies && c.netErr[f][a] > 0 {
		return c.netErr[f][a]
	}
	return math.Max(c.NetworkRelErrOther, c.estErr[a])
}

// FamilyKey names one family scale: "family/arithmetic".
func FamilyKey(f hw.Family, a Arithmetic) string { return f.String() + "/" + a.String() }

func parseFamilyKey(key string) (hw.Family, Arithmetic, bool) {
	fam, ar, _ := strings.Cut(key, "/")
	for f := hw.Family(1); f < hw.NumFamilies; f++ {
		if f.String() != fam {
			continue
		}
		for a := Arithmetic(0); a < numArith; a++ {
			if a.String() == ar {
				return f, a, true
			}
		}
	}
	return 0, 0, false
}

// MemoryEfficiencyOf is the share of the specified bandwidth memory-bound kernels
// reach on family f: MemoryEfficiency × the family's memory scale.
func (c *Calibration) MemoryEfficiencyOf(f hw.Family) float64 {
	if f <= 0 || f >= hw.NumFamilies || !c.checked {
		return c.MemoryEfficiency
	}
	return c.MemoryEfficiency * c.memFam[f]
}

// FamilyScaleOf returns the scale of family f for arithmetic a: 1 for an unknown
// family and where none was fitted.
func (c *Calibration) FamilyScaleOf(f hw.Family, a Arithmetic) float64 {
	if f <= 0 || f >= hw.NumFamilies || a < 0 || a >= numArith || !c.checked {
		return 1
	}
	return c.family[f][a]
}

func knownKey(key string) bool {
	for cl := Class(0); cl < numClasses; cl++ {
		for a := Arithmetic(0); a < numArith; a++ {
			for p := range phaseIndex {
				if EfficiencyKey(cl, a, p) == key {
					return true
				}
			}
		}
	}
	return false
}

// Efficiency returns the compute efficiency of a class, arithmetic and phase.
func (c *Calibration) Efficiency(cl Class, a Arithmetic, p measure.Phase) float64 {
	i, ok := phaseIndex[p]
	if !ok || cl < 0 || cl >= numClasses || a < 0 || a >= numArith {
		return 0
	}
	return c.eff[cl][a][i]
}

// PriorCalibration returns the calibration before any fit: efficiencies from
// NVIDIA's published guidance (large GEMMs reach 70–90% of peak, Winograd saves up to
// 2.25× the FLOPs of 3×3 convolutions, depthwise convolutions are memory-bound) and
// bandwidth efficiency from measured-vs-specified bandwidths (V100 739/900, T4
// 239/320, P100 501/732). The fit starts from it and keeps it for classes the data
// does not cover. A queued kernel's fixed GPU-side cost is taken as 5 µs.
func PriorCalibration() *Calibration {
	base := [numClasses]float64{0.75, 1.2, 0.65, 0.35, 0.08, 0.75, 0.1}
	arith := [numArith]float64{1, 0.55, 0.55, 0.8}
	phase := [3]float64{1, 0.95, 0.85}
	c := &Calibration{
		Version:               CalibrationVersion,
		FittedOn:              "priors only",
		Method:                "published guidance; not fitted",
		ComputeEfficiency:     map[string]float64{},
		MemoryEfficiency:      0.78,
		LaunchUS:              5,
		UnalignedTensorFactor: 0.25,
		EstimateRelErr:        map[string]float64{},
		TransferRelErr:        0.15,
	}
	for cl := Class(0); cl < numClasses; cl++ {
		for a := Arithmetic(0); a < numArith; a++ {
			for p, i := range phaseIndex {
				c.ComputeEfficiency[EfficiencyKey(cl, a, p)] = base[cl] * arith[a] * phase[i]
			}
		}
	}
	for a := Arithmetic(0); a < numArith; a++ {
		c.EstimateRelErr[a.String()] = 0.5
	}
	if err := c.Validate(); err != nil {
		panic("kernels: prior calibration invalid: " + err.Error()) // a programming error, found by any test
	}
	return c
}

package launch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Recipe is how the training script trains: the optimizer and its settings, the
// learning rate's warm-up and schedule, regularisation and augmentation, the weights'
// average and the validation crop. Each field is one of the script's flags; a zero
// field leaves the script's default (see scripts/cnntime_train.py --help).
type Recipe struct {
	Optimizer string  // sgd, nesterov, rmsprop, adamw, lars or lamb
	LR        float64 // the peak learning rate for the global batch
	Momentum  float64
	// WeightDecay applies to every weight; NormWeightDecay, when set, to normalisation
	// layers' parameters instead.
	WeightDecay     float64
	NormWeightDecay *float64
	Eps             float64 // rmsprop's and adamw's epsilon; 0: PyTorch's
	// Schedule is cosine, step, multistep, poly, exponential or constant, after
	// WarmupEpochs of warm-up (WarmupMethod linear or constant, from WarmupStart × the
	// rate; 0: the script's 0.01); Milestones and Gamma shape multistep, StepSize and
	// Gamma step, Gamma exponential, Power poly; MinFactor is where cosine and poly end,
	// as a fraction of the rate.
	Schedule       string
	WarmupEpochs   float64
	WarmupMethod   string
	WarmupStart    float64
	Milestones     []float64
	StepSize       float64
	Gamma          float64
	Power          float64
	MinFactor      float64
	LabelSmoothing float64
	MixupAlpha     float64
	CutmixAlpha    float64
	AutoAugment    string // imagenet, ra, ta_wide; "" for none
	RandomErase    float64
	RAReps         int     // repeated augmentation's repeats; 0 or 1 for none
	Interpolation  string  // bilinear or bicubic; "" for the script's bilinear
	EMADecay       float64 // per step; 0 for no average
	EMAEvery       int
	ValCrop        int // the validation centre crop; 0: the training crop
	ValResize      int // the resize before it; 0: the crop / 0.875
	// Note says in one line which recipe this is and how its rate was set, for the
	// header and the RECIPE variable.
	Note string
}

// flags are the script's flags for the recipe, in a fixed order.
func (c Recipe) flags() []string {
	var out []string
	add := func(flag, v string) { out = append(out, flag+" "+v) }
	if c.Optimizer != "" {
		add("--optimizer", c.Optimizer)
	}
	add("--lr", `"$LR"`)
	if c.Momentum > 0 {
		add("--momentum", num(c.Momentum))
	}
	add("--weight-decay", num(c.WeightDecay))
	if c.NormWeightDecay != nil {
		add("--norm-weight-decay", num(*c.NormWeightDecay))
	}
	if c.Eps > 0 {
		add("--eps", num(c.Eps))
	}
	if c.Schedule != "" {
		add("--lr-schedule", c.Schedule)
	}
	if c.WarmupEpochs > 0 {
		add("--warmup-epochs", `"$WARMUP_EPOCHS"`)
		if c.WarmupMethod != "" {
			add("--warmup-method", c.WarmupMethod)
		}
		if c.WarmupStart > 0 {
			add("--warmup-start-factor", num(c.WarmupStart))
		}
	}
	if len(c.Milestones) > 0 {
		ms := make([]string, len(c.Milestones))
		for i, m := range c.Milestones {
			ms[i] = strconv.FormatFloat(m, 'f', -1, 64)
		}
		add("--lr-milestones", strings.Join(ms, ","))
	}
	if c.StepSize > 0 {
		add("--lr-step-size", num(c.StepSize))
	}
	if c.Gamma > 0 {
		add("--lr-gamma", num(c.Gamma))
	}
	if c.Power > 0 {
		add("--lr-power", num(c.Power))
	}
	if c.MinFactor > 0 {
		add("--lr-min", num(c.MinFactor))
	}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"--label-smoothing", c.LabelSmoothing}, {"--mixup-alpha", c.MixupAlpha}, {"--cutmix-alpha", c.CutmixAlpha}, {"--random-erase", c.RandomErase}} {
		if f.v > 0 {
			add(f.flag, num(f.v))
		}
	}
	if c.AutoAugment != "" {
		add("--auto-augment", c.AutoAugment)
	}
	if c.RAReps > 1 {
		add("--ra-reps", strconv.Itoa(c.RAReps))
	}
	if c.Interpolation != "" {
		add("--interpolation", c.Interpolation)
	}
	if c.EMADecay > 0 {
		add("--ema-decay", num(c.EMADecay))
		if c.EMAEvery > 0 {
			add("--ema-every", strconv.Itoa(c.EMAEvery))
		}
	}
	if c.ValCrop > 0 {
		add("--val-crop-size", strconv.Itoa(c.ValCrop))
	}
	if c.ValResize > 0 {
		add("--val-resize-size", strconv.Itoa(c.ValResize))
	}
	return out
}

// The script's choices (scripts/cnntime_train.py: OPTIMIZERS, SCHEDULES, AUTO_AUGMENTS).
var (
	optimizers     = []string{"sgd", "nesterov", "rmsprop", "adamw", "lars", "lamb"}
	schedules      = []string{"cosine", "step", "multistep", "poly", "exponential", "constant"}
	autoAugments   = []string{"imagenet", "ra", "ta_wide"}
	warmupMethods  = []string{"linear", "constant"}
	interpolations = []string{"bilinear", "bicubic"}
)

// check reports the first setting the script would refuse: a recipe may come from a
// user's file, and its words reach the script's command line.
func (c Recipe) check() error {
	for _, w := range []struct {
		what, v string
		in      []string
	}{{"optimizer", c.Optimizer, optimizers}, {"schedule", c.Schedule, schedules}, {"auto-augment", c.AutoAugment, autoAugments},
		{"warm-up method", c.WarmupMethod, warmupMethods}, {"interpolation", c.Interpolation, interpolations}} {
		if w.v != "" && !slices.Contains(w.in, w.v) {
			return fmt.Errorf("recipe %s %q: the training script takes %s", w.what, w.v, strings.Join(w.in, ", "))
		}
	}
	values := []float64{c.LR, c.Momentum, c.WeightDecay, c.Eps, c.WarmupEpochs, c.WarmupStart, c.StepSize, c.Gamma, c.Power, c.MinFactor,
		c.LabelSmoothing, c.MixupAlpha, c.CutmixAlpha, c.RandomErase, c.EMADecay}
	if c.NormWeightDecay != nil {
		values = append(values, *c.NormWeightDecay)
	}
	values = append(values, c.Milestones...)
	for _, v := range values {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("recipe value %v: the training script takes finite numbers of at least 0", v)
		}
	}
	switch {
	case !(c.LR > 0):
		return fmt.Errorf("recipe learning rate %v: give a positive rate", c.LR)
	case c.LabelSmoothing >= 1 || c.EMADecay >= 1 || c.RandomErase > 1 || c.MinFactor > 1 || c.WarmupStart > 1:
		return fmt.Errorf("recipe label smoothing %v, EMA decay %v, random erasing %v, final rate %v, warm-up start %v: out of range (below 1)", c.LabelSmoothing, c.EMADecay, c.RandomErase, c.MinFactor, c.WarmupStart)
	case c.Schedule == "multistep" && len(c.Milestones) == 0:
		return fmt.Errorf("recipe schedule multistep without milestones")
	case c.EMAEvery < 0 || c.ValCrop < 0 || c.ValResize < 0 || c.RAReps < 0:
		return fmt.Errorf("recipe EMA interval %d, validation crop %d, resize %d: none may be negative", c.EMAEvery, c.ValCrop, c.ValResize)
	}
	return nil
}

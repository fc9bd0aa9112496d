package convergence

import (
	"fmt"
	"math"
	"strings"
)

// Regime is the optimizer setting the epochs assume over a range of global batch
// sizes, up to UpTo.
type Regime struct {
	Name  string `json:"name"`            // "sgd", "lars", "extrapolated" or "custom"
	Label string `json:"label"`           // what the epochs assume, in words
	UpTo  int    `json:"up_to,omitempty"` // the largest global batch it covers; 0: every larger one
}

// Model is the epochs to a target accuracy as a function of the global batch size B:
// E(B) = EpochsMin·(1 + B/NoiseBatch) (McCandlish et al. 2018).
type Model struct {
	// Name says where the epochs come from: a preset's dataset ("imagenet-1k") or
	// "custom"; it is the results' epochs_source.
	Name       string  `json:"name"`
	Target     string  `json:"target"`      // the accuracy the epochs reach
	EpochsMin  float64 `json:"epochs_min"`  // E_min: the epochs of a batch far below NoiseBatch
	NoiseBatch float64 `json:"noise_batch"` // B_noise, the critical batch: E(B_noise) = 2·E_min
	// ErrorPct is the expected relative error of Epochs, ± percent; 0 when unknown
	// (a custom model's own figures).
	ErrorPct float64 `json:"error_pct"`
	// Regimes cover every batch, ascending by UpTo, the last one open-ended.
	Regimes []Regime `json:"regimes"`
	// Basis says which figures the parameters come from.
	Basis string `json:"basis"`
	// FittedOn says, for a preset, which networks at which input the figures trained
	// ("ResNet-50 at 224 px"); FittedFamily (a cnn.Family) and FittedInput (pixels)
	// say the same for a check (FitsNetwork). A custom model, the user's own figures,
	// leaves them empty.
	FittedOn     string `json:"fitted_on,omitempty"`
	FittedFamily string `json:"fitted_family,omitempty"`
	FittedInput  int    `json:"fitted_input,omitempty"`
	// SmallestBatch is, for a preset, the smallest global batch among the figures it
	// was fitted to: with LargestBatch, the batches the law was seen to hold on.
	SmallestBatch int `json:"smallest_batch,omitempty"`
}

// LargestBatch is the largest batch the model's regimes cover before the open-ended
// last one (for a preset, the largest published figure's); 0 when every regime is
// open-ended.
func (m Model) LargestBatch() int {
	largest := 0
	for _, r := range m.Regimes {
		largest = max(largest, r.UpTo)
	}
	return largest
}

// FitsNetwork reports whether the model's figures were fitted on networks of this
// family at this input size (pixels): where not, the epochs are another recipe's, not
// the network's own. A model without FittedFamily (a custom one) fits every network.
func (m Model) FitsNetwork(family string, input int) bool {
	if m.FittedFamily == "" {
		return true
	}
	return family == m.FittedFamily && (m.FittedInput == 0 || input == m.FittedInput)
}

// Epochs is the number of epochs to the target at global batch b.
func (m Model) Epochs(b int) float64 {
	return m.EpochsMin * (1 + float64(b)/m.NoiseBatch)
}

// RegimeAt is the regime the epochs at global batch b assume.
func (m Model) RegimeAt(b int) Regime {
	for _, r := range m.Regimes {
		if r.UpTo == 0 || b <= r.UpTo {
			return r
		}
	}
	return Regime{Name: "extrapolated", Label: "beyond every published figure"}
}

// KnownUpTo is the largest batch of the first regime, where the usual optimizer
// (SGD with linear learning-rate scaling and warm-up) is known to hold: above it the
// results say which regime they assume. 0 when the first regime is open-ended.
func (m Model) KnownUpTo() int {
	if len(m.Regimes) == 0 {
		return 0
	}
	return m.Regimes[0].UpTo
}

// Check reports what is wrong with the model's numbers, or nil.
func (m Model) Check() error {
	switch {
	case !finitePositive(m.EpochsMin):
		return fmt.Errorf("epochs model %s: the smallest epochs %v must be a positive finite number", m.Name, m.EpochsMin)
	case !(m.NoiseBatch >= 1) || math.IsInf(m.NoiseBatch, 0):
		return fmt.Errorf("epochs model %s: the critical batch %v must be a finite number of at least 1", m.Name, m.NoiseBatch)
	case !(m.ErrorPct >= 0) || math.IsInf(m.ErrorPct, 0):
		return fmt.Errorf("epochs model %s: the error %v%% must be a finite number of at least 0", m.Name, m.ErrorPct)
	case len(m.Regimes) == 0 || m.Regimes[len(m.Regimes)-1].UpTo != 0:
		return fmt.Errorf("epochs model %s: its regimes must end with an open-ended one", m.Name)
	}
	for i := 1; i < len(m.Regimes)-1; i++ {
		if m.Regimes[i].UpTo <= m.Regimes[i-1].UpTo {
			return fmt.Errorf("epochs model %s: regime %s must cover larger batches than %s", m.Name, m.Regimes[i].Name, m.Regimes[i-1].Name)
		}
	}
	return nil
}

func finitePositive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// MaxEpochs bounds a custom model's epochs at its reference batch.
const MaxEpochs = 1e6

// Custom is a user's own figures: the epochs their recipe takes to their target at a
// reference global batch, and either the critical batch (B_noise) or a preset whose
// critical batch and regimes to take ("like imagenet-1k").
type Custom struct {
	Epochs        float64 // epochs to the target at Batch
	Batch         int     // the reference global batch
	CriticalBatch float64 // B_noise; 0 when Like names a preset
	Like          string  // a preset's name ("imagenet-1k", "cifar-10"; "imagenet" and "cifar" too)
}

// Model turns the figures into a model, E(B) = E_ref·(1 + B/B_noise)/(1 + B_ref/B_noise).
// A missing, non-finite or out-of-range figure is an error that names it.
func (c Custom) Model() (Model, error) {
	switch {
	case !finitePositive(c.Epochs) || c.Epochs > MaxEpochs:
		return Model{}, fmt.Errorf("epochs at the reference batch: %v is not a number of epochs; give a positive finite number up to %g (what your recipe takes at that batch)", c.Epochs, MaxEpochs)
	case c.Batch < 1:
		return Model{}, fmt.Errorf("reference batch %d: give the global batch (at least 1) your recipe reached its target at in that many epochs", c.Batch)
	case c.Like != "" && c.CriticalBatch != 0:
		return Model{}, fmt.Errorf("give a critical batch or a preset to be like (%s), not both", strings.Join(PresetNames(), ", "))
	}
	m := Model{Name: "custom", Target: "your target", ErrorPct: 0,
		Regimes: []Regime{{Name: "custom", Label: "your recipe, as you gave it"}}}
	if c.Like != "" {
		p, ok := Preset(likeName(c.Like))
		if !ok {
			return Model{}, fmt.Errorf("like %q: no such preset; use one of %s", c.Like, strings.Join(PresetNames(), ", "))
		}
		m.NoiseBatch, m.Regimes, m.ErrorPct = p.NoiseBatch, p.Regimes, p.ErrorPct
		m.Basis = fmt.Sprintf("%g epochs at batch %d (yours); critical batch %.0f from the %s preset (%s)", c.Epochs, c.Batch, p.NoiseBatch, p.Name, p.Basis)
	} else {
		switch {
		case c.CriticalBatch == 0:
			return Model{}, fmt.Errorf("give the critical batch (B_noise: the batch at which the epochs double) or a preset to be like (%s)", strings.Join(PresetNames(), ", "))
		case !(c.CriticalBatch >= 1) || math.IsInf(c.CriticalBatch, 0):
			return Model{}, fmt.Errorf("critical batch %v: give a finite batch size of at least 1 (the batch at which the epochs double)", c.CriticalBatch)
		}
		m.NoiseBatch = c.CriticalBatch
		m.Basis = fmt.Sprintf("%g epochs at batch %d and critical batch %g (yours)", c.Epochs, c.Batch, c.CriticalBatch)
	}
	m.EpochsMin = c.Epochs / (1 + float64(c.Batch)/m.NoiseBatch)
	return m, m.Check()
}

// likeName maps the short names a person may type to a preset's.
func likeName(s string) string {
	n := strings.ToLower(strings.TrimSpace(s))
	if p, ok := LikeAliases[n]; ok {
		return p
	}
	return n
}

// LikeAliases are the other names Custom.Like takes for a preset.
var LikeAliases = map[string]string{"imagenet": "imagenet-1k", "imagenet1k": "imagenet-1k", "cifar": "cifar-10", "cifar10": "cifar-10"}

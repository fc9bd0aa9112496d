package recipe

import (
	"fmt"
	"math"

	"cnntime/predictor/convergence"
)

// Plan is a recipe resolved for one network and one target accuracy: the epochs a run
// needs at every global batch (At). Outside the recipe's evidence the epochs follow
// the dataset's reference law (Reference) from the evidence's nearest batch and their
// band widens by SpreadPerDoublingPct per doubling of the batch away from it.
type Plan struct {
	Recipe Recipe `json:"recipe"`
	// Network is the network the run trains; OwnNetwork says whether the recipe was
	// published for it (when not, every batch is extrapolated and the band adds
	// AnotherNetworkPct).
	Network    string `json:"network"`
	OwnNetwork bool   `json:"own_network"`
	// Target is the top-1 accuracy (%) the epochs reach: the recipe's, or a lower one
	// whose epochs are the published ones × TargetFactor (the schedule compressed by
	// the target rule), with TargetErrorPct more band.
	Target         float64 `json:"target_top1"`
	TargetFactor   float64 `json:"target_factor"`
	TargetErrorPct float64 `json:"target_error_pct,omitempty"`
	// Reference is the dataset's law outside the evidence: its critical batch and how
	// much the epochs moved per doubling of the batch in the middle of its evidence.
	Reference Reference `json:"reference"`
}

// Reference is the law a dataset's epochs follow outside a recipe's evidence: the
// noise-scale law of the dataset's widest published evidence (for ImageNet, MLPerf's
// ResNet-50 reference points), its critical batch, and the band's growth per doubling
// of the batch: how much that law's epochs grow from the geometric middle of its
// batches to twice it.
type Reference struct {
	Recipe               string  `json:"recipe"` // the recipe whose law it is
	CriticalBatch        float64 `json:"critical_batch"`
	SpreadPerDoublingPct float64 `json:"spread_per_doubling_pct"`
}

// referenceOf makes a dataset's Reference from a noise-scale law.
func referenceOf(r Recipe) Reference {
	l := r.Law
	mid := math.Sqrt(float64(l.MinBatch) * float64(l.MaxBatch))
	grow := (1 + 2*mid/l.CriticalBatch) / (1 + mid/l.CriticalBatch)
	return Reference{Recipe: r.ID(), CriticalBatch: l.CriticalBatch, SpreadPerDoublingPct: 100 * (grow - 1)}
}

// Epochs is what a plan says at one global batch: the epochs to its target ± ErrorPct
// percent, the regime they assume (the law's inside the evidence, "extrapolated"
// outside it) and, when extrapolated, why, in words.
type Epochs struct {
	Epochs       float64 `json:"epochs"`
	ErrorPct     float64 `json:"error_pct"`
	Regime       string  `json:"regime"`
	Extrapolated bool    `json:"extrapolated,omitempty"`
	Why          string  `json:"why,omitempty"`
}

// Extrapolated is the regime of epochs outside a recipe's evidence.
const Extrapolated = "extrapolated"

// At is the epochs to the plan's target at global batch b (b ≥ 1).
func (p Plan) At(b int) Epochs {
	r, l := p.Recipe, p.Recipe.Law
	edge := min(max(b, l.MinBatch), l.MaxBatch)
	e := l.epochsIn(r, edge)
	out := Epochs{ErrorPct: l.ErrorPct, Regime: l.Regime}
	if b != edge {
		bn := p.Reference.CriticalBatch
		e *= (1 + float64(b)/bn) / (1 + float64(edge)/bn)
		doublings := math.Abs(math.Log2(float64(b) / float64(edge)))
		out.ErrorPct += p.Reference.SpreadPerDoublingPct * doublings
		side := "below"
		if b > edge {
			side = "above"
		}
		if l.Kind == Published {
			out.Why = fmt.Sprintf("batch %s is %.1f doublings %s the recipe's published batch (%s)", count(b), doublings, side, l.BatchRange())
		} else {
			out.Why = fmt.Sprintf("batch %s is %.1f doublings %s the %s law's evidence (%s)", count(b), doublings, side, l.Kind, l.BatchRange())
		}
	}
	if !p.OwnNetwork {
		out.ErrorPct += AnotherNetworkPct
		why := fmt.Sprintf("the recipe was published for %s, not %s", r.Model, p.Network)
		if out.Why != "" {
			why = out.Why + "; " + why
		}
		out.Why = why
	}
	if out.Why != "" {
		out.Regime, out.Extrapolated = Extrapolated, true
	}
	out.Epochs = e * p.TargetFactor
	out.ErrorPct += p.TargetErrorPct
	return out
}

// BatchRange is the law's evidence in words: "64–8,192", or one batch "1,024".
func (l Law) BatchRange() string {
	if l.MinBatch == l.MaxBatch {
		return count(l.MinBatch)
	}
	return count(l.MinBatch) + "–" + count(l.MaxBatch)
}

// count writes n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TargetName is the plan's target in words: "76.13% top-1 on imagenet-1k", or "your
// target" for a user's own figures.
func (p Plan) TargetName() string {
	if p.Target == 0 {
		return "your target"
	}
	return fmt.Sprintf("%s top-1 on %s", FormatTop1(p.Target), p.Recipe.Dataset)
}

// ForTarget resolves recipe r for network under reference law ref, to the top-1
// accuracy target (percent; 0 is the recipe's published accuracy). A target above
// the published accuracy is refused (no evidence the recipe reaches it), as is one more
// than MaxTargetDropTop1 points below; a lower one compresses the schedule by the
// target rule, epochs × 2^(−Δ/TargetPointsPerDoubling), and adds TargetErrorPct to the
// band.
func ForTarget(r Recipe, network string, target float64, ref Reference) (Plan, error) {
	p := Plan{Recipe: r, Network: network, OwnNetwork: network == r.Model || r.Model == "", Target: r.Top1, TargetFactor: 1, Reference: ref}
	if target == 0 || math.Abs(target-r.Top1) < 0.005 {
		return p, nil
	}
	drop := r.Top1 - target
	switch {
	case math.IsNaN(target) || target <= 0 || target > 100:
		return Plan{}, fmt.Errorf("target accuracy %v: give a top-1 accuracy in percent, above 0 and up to 100", target)
	case drop < 0:
		return Plan{}, fmt.Errorf("target accuracy %s: recipe %s is published at %s; nothing shows it reaching more: choose a recipe that reaches %s, or a target up to %s",
			FormatTop1(target), r.ID(), r.TargetText(), FormatTop1(target), FormatTop1(r.Top1))
	case drop > MaxTargetDropTop1:
		return Plan{}, fmt.Errorf("target accuracy %s: %.1f points below recipe %s's published %s; the target rule is shown only up to %.1f points below (FFCV's schedules from 88 down to 16 epochs): give a target from %s up to %s, or a recipe published nearer %s",
			FormatTop1(target), drop, r.ID(), FormatTop1(r.Top1), MaxTargetDropTop1, FormatTop1(r.Top1-MaxTargetDropTop1), FormatTop1(r.Top1), FormatTop1(target))
	}
	p.Target = target
	p.TargetFactor = math.Exp2(-drop / TargetPointsPerDoubling)
	p.TargetErrorPct = TargetErrorPct
	return p, nil
}

// Check reports what is wrong with the plan's numbers (a plan built by hand, or a
// user's figures), or nil.
func (p Plan) Check() error {
	l := p.Recipe.Law
	switch {
	case !(p.TargetFactor > 0) || math.IsInf(p.TargetFactor, 0):
		return fmt.Errorf("epochs plan %s: the target's factor %v must be a positive finite number", p.Recipe.ID(), p.TargetFactor)
	case !finiteIn(p.Recipe.Epochs, 0, MaxEpochs) || p.Recipe.Epochs == 0:
		return fmt.Errorf("epochs plan %s: the recipe's epochs %v must be a positive finite number", p.Recipe.ID(), p.Recipe.Epochs)
	case l.MinBatch < 1 || l.MaxBatch < l.MinBatch:
		return fmt.Errorf("epochs plan %s: the law's batches %d–%d are no range", p.Recipe.ID(), l.MinBatch, l.MaxBatch)
	case l.Kind == NoiseScale && !finiteIn(l.CriticalBatch, 1, 1e9):
		return fmt.Errorf("epochs plan %s: the critical batch %v must be from 1 to 1e9", p.Recipe.ID(), l.CriticalBatch)
	case !finiteIn(l.EpochsMin, 0, MaxEpochs) || !finiteIn(l.ErrorPct, 0, 1000) || !finiteIn(p.TargetErrorPct, 0, 1000):
		return fmt.Errorf("epochs plan %s: its smallest epochs %v, error %v%% and target error %v%% must be finite and in range", p.Recipe.ID(), l.EpochsMin, l.ErrorPct, p.TargetErrorPct)
	case (p.Recipe.Law.MinBatch > 1 || p.Recipe.Law.MaxBatch < MaxGlobalBatch || !p.OwnNetwork) && !finiteIn(p.Reference.CriticalBatch, 1, 1e9):
		return fmt.Errorf("epochs plan %s: outside its batches it needs a reference law's critical batch, not %v", p.Recipe.ID(), p.Reference.CriticalBatch)
	}
	return nil
}

// CustomName is the recipe name of a user's own figures (CustomPlan).
const CustomName = "custom"

// CustomPlan is the plan of a user's own figures: E epochs at a reference batch and a
// critical batch, or a preset's (convergence.Custom). Its law holds at every batch (the
// user vouches for it), with the preset's error when it is like one and none of its own
// otherwise, to "your target".
func CustomPlan(c convergence.Custom, network string) (Plan, error) {
	m, err := c.Model()
	if err != nil {
		return Plan{}, err
	}
	r := Recipe{Name: CustomName, Epochs: c.Epochs, GlobalBatch: c.Batch, Source: "your figures",
		Law: Law{Kind: NoiseScale, MinBatch: 1, MaxBatch: MaxGlobalBatch, EpochsMin: m.EpochsMin, CriticalBatch: m.NoiseBatch,
			ErrorPct: m.ErrorPct, Regime: CustomName, Basis: m.Basis}}
	p := Plan{Recipe: r, Network: network, OwnNetwork: true, TargetFactor: 1,
		Reference: Reference{Recipe: CustomName, CriticalBatch: m.NoiseBatch}}
	return p, p.Check()
}

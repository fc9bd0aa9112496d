package recipe

import (
	"fmt"
	"math"

	"cnntime/predictor/convergence"
)

// The kinds of Law.
const (
	// LinearScaling: the epochs stay the recipe's while the learning rate follows the
	// batch by the recipe's scaling rule (with warm-up), as Goyal et al. 2017 showed
	// for ResNet-50 with SGD from 64 to 8,192 images.
	LinearScaling = "linear-scaling"
	// NoiseScale: E(B) = E_min·(1 + B/B_noise) (McCandlish et al. 2018), fitted to
	// published epochs at several batches.
	NoiseScale = "noise-scale"
	// Published: the only evidence is the published run; every other batch is
	// extrapolated.
	Published = "published"
)

// LawKinds lists the kinds a law may be.
var LawKinds = []string{LinearScaling, NoiseScale, Published}

// Law is how a recipe's epochs follow the global batch, and the evidence for it: the
// batches MinBatch–MaxBatch it was shown to hold on (a Published law's are the
// recipe's own batch). Inside them the epochs are the law's, ± ErrorPct; outside, or
// for another network than the recipe's, they are extrapolated (Plan.At).
type Law struct {
	Kind string `yaml:"kind" json:"kind"`
	// Preset takes a noise-scale law from a convergence preset fitted to published
	// figures ("imagenet-1k": MLPerf's ResNet-50 reference convergence points): its
	// E_min, critical batch, error and batches.
	Preset   string `yaml:"preset" json:"preset,omitempty"`
	MinBatch int    `yaml:"min_batch" json:"min_batch"`
	MaxBatch int    `yaml:"max_batch" json:"max_batch"`
	// EpochsMin and CriticalBatch are a noise-scale law's E_min and B_noise; without
	// EpochsMin the law passes through the recipe's own epochs at its batch.
	EpochsMin     float64 `yaml:"epochs_min" json:"epochs_min,omitempty"`
	CriticalBatch float64 `yaml:"critical_batch" json:"critical_batch,omitempty"`
	// ErrorPct is the epochs' ± percent inside the evidence; 0 takes the run-to-run
	// spread, RunToRunPct.
	ErrorPct float64 `yaml:"error_pct" json:"error_pct"`
	// Regime names the optimizer regime inside the evidence ("sgd", "lars"); "" is
	// the recipe's optimizer.
	Regime string `yaml:"regime" json:"regime,omitempty"`
	// Basis cites the evidence.
	Basis string `yaml:"basis" json:"basis"`
}

// resolve fills a law from its preset and its defaults from the recipe: a published
// law's batches are the recipe's, a missing error is the run-to-run spread.
func (l *Law) resolve(r Recipe) error {
	if l.Preset != "" {
		p, ok := convergence.Preset(l.Preset)
		if !ok {
			return fmt.Errorf("preset %q: no such convergence preset (%v)", l.Preset, convergence.PresetNames())
		}
		l.Kind, l.EpochsMin, l.CriticalBatch = NoiseScale, p.EpochsMin, p.NoiseBatch
		l.MinBatch, l.MaxBatch = p.SmallestBatch, p.LargestBatch()
		if l.ErrorPct == 0 {
			l.ErrorPct = p.ErrorPct
		}
		if l.Basis == "" {
			l.Basis = p.Basis
		}
	}
	if l.Kind == Published || l.Kind == "" {
		l.Kind = Published
		if l.MinBatch == 0 && l.MaxBatch == 0 {
			l.MinBatch, l.MaxBatch = r.GlobalBatch, r.GlobalBatch
		}
	}
	if l.ErrorPct == 0 {
		l.ErrorPct = RunToRunPct()
	}
	if l.Regime == "" {
		l.Regime = r.Opt
	}
	return nil
}

func (l Law) check(r Recipe) error {
	switch {
	case !oneOf(l.Kind, LawKinds):
		return fmt.Errorf("kind %q: use one of %v", l.Kind, LawKinds)
	case l.MinBatch < 1 || l.MaxBatch < l.MinBatch || l.MaxBatch > MaxGlobalBatch:
		return fmt.Errorf("the batches %d–%d it holds on: give min_batch ≥ 1 and max_batch from min_batch up to %d", l.MinBatch, l.MaxBatch, MaxGlobalBatch)
	case l.Kind != NoiseScale && (r.GlobalBatch < l.MinBatch || r.GlobalBatch > l.MaxBatch):
		return fmt.Errorf("the batches %d–%d it holds on leave out the recipe's own batch %d", l.MinBatch, l.MaxBatch, r.GlobalBatch)
	case l.Kind == NoiseScale && (!finiteIn(l.CriticalBatch, 1, 1e9)):
		return fmt.Errorf("critical_batch %v: a noise-scale law needs its critical batch (B_noise), 1 to 1e9", l.CriticalBatch)
	case l.Kind != NoiseScale && (l.CriticalBatch != 0 || l.EpochsMin != 0):
		return fmt.Errorf("critical_batch and epochs_min belong to a noise-scale law, not %s", l.Kind)
	case !finiteIn(l.EpochsMin, 0, MaxEpochs):
		return fmt.Errorf("epochs_min %v: give E_min from 0 (through the recipe's own epochs) up to %d", l.EpochsMin, MaxEpochs)
	case !finiteIn(l.ErrorPct, 0, 1000):
		return fmt.Errorf("error_pct %v: give the epochs' ± percent inside the evidence, 0 to 1000", l.ErrorPct)
	case l.Basis == "" && l.Kind != Published:
		return fmt.Errorf("basis: cite the evidence that the %s law holds on batches %d–%d", l.Kind, l.MinBatch, l.MaxBatch)
	}
	return nil
}

// epochsIn is the law's epochs at batch b, as if b were inside its evidence.
func (l Law) epochsIn(r Recipe, b int) float64 {
	if l.Kind != NoiseScale {
		return r.Epochs
	}
	if l.EpochsMin > 0 {
		return l.EpochsMin * (1 + float64(b)/l.CriticalBatch)
	}
	return r.Epochs * (1 + float64(b)/l.CriticalBatch) / (1 + float64(r.GlobalBatch)/l.CriticalBatch)
}

// The figures the rules outside a recipe's evidence rest on; docs/predicting.md's
// "Time to accuracy" and docs/accuracy.md give their sources.
const (
	// RunToRunTop1 is the spread (± points of top-1) between runs of one recipe at
	// one batch: Goyal et al. 2017, Table 2(a)/(b), ResNet-50 at kn = 256, five runs,
	// 23.60 ± 0.12% top-1 error.
	RunToRunTop1 = 0.12
	// TargetPointsPerDoubling is how many points of top-1 a recipe gains when its
	// schedule is stretched to twice the epochs: fitted to FFCV's ResNet-50 and
	// ResNet-18 configurations from 16 to 88 epochs (one slope, an intercept per
	// network; TestTargetRuleIsFFCVFit refits it from the built-in recipes).
	TargetPointsPerDoubling = 2.03
	// TargetErrorPct is the band a target other than the published accuracy adds: the
	// largest miss of the rule on FFCV's sweeps when each is anchored at its longest run
	// (as a published recipe is) and compressed to its shorter ones: ResNet-50 from 88
	// to 32 epochs, 48.7% (TestTargetRuleIsFFCVFit recomputes it).
	TargetErrorPct = 48.7
	// MaxTargetDropTop1 is how far below a recipe's published accuracy a target may
	// be: FFCV's sweeps span 4.6 (ResNet-50) and 5.5 (ResNet-18) points from 88 to 16
	// epochs; further down no published schedule shows the rule.
	MaxTargetDropTop1 = 5.5
	// AnotherNetworkPct widens the band of a recipe applied to a network it was not
	// published for: the spread of the epochs DAWNBench's 94% CIFAR-10 entries at one
	// batch (512) took with their ResNet-9 variants, 14 to 24 (±31% around their
	// geometric mean).
	AnotherNetworkPct = 31.0
)

// RunToRunPct is RunToRunTop1 as epochs, by the target rule: the ± percent of a
// recipe's epochs at its own batch when nothing else is known (4.2%).
func RunToRunPct() float64 { return 100 * (math.Exp2(RunToRunTop1/TargetPointsPerDoubling) - 1) }

package app

import (
	"fmt"
	"strings"

	"cnntime/predictor/convergence"
)

// TrainMode is how a run is counted: a fixed number of epochs (a schedule the user
// already has), or to a target accuracy, each batch for the epochs it needs.
type TrainMode string

// The training modes.
const (
	TrainEpochs   TrainMode = "epochs"
	TrainToTarget TrainMode = "to-target"
)

// TrainModes lists the training modes, in the order help shows them.
var TrainModes = []TrainMode{TrainEpochs, TrainToTarget}

// TrainModeAliases are other spellings ParseTrainMode accepts.
var TrainModeAliases = map[string]TrainMode{"target": TrainToTarget, "totarget": TrainToTarget}

// ParseTrainMode reads a training mode (one of TrainModes or TrainModeAliases, in any
// case; "" is epochs).
func ParseTrainMode(s string) (TrainMode, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	if n == "" {
		return TrainEpochs, nil
	}
	for _, m := range TrainModes {
		if string(m) == n {
			return m, nil
		}
	}
	if m, ok := TrainModeAliases[n]; ok {
		return m, nil
	}
	return "", fmt.Errorf("training %q: count the run as epochs (a fixed number) or to-target (the epochs each batch needs to a target accuracy)", s)
}

// Training is how long a run trains: its mode and, to a target, the user's own
// figures (epochs at a reference batch, and a critical batch or a preset to be like);
// without them the dataset's preset gives the epochs.
type Training struct {
	Mode   TrainMode
	Custom convergence.Custom
	// AnyBatch lets a fixed-epoch run's best batch be any batch that fits, however few
	// steps an epoch it makes; by default the best (and the scatter's point, the Pareto
	// front and the results) is the best of the batches of at least MinStepsPerEpoch
	// steps an epoch (see EnoughSteps).
	AnyBatch bool
}

// HasCustom says whether any custom figure is given.
func (t Training) HasCustom() bool { return t.Custom != (convergence.Custom{}) }

// EpochsModel is the epochs model a run on the run data d trains with: nil for fixed
// epochs; the user's figures when given; else the dataset's preset. A dataset without a
// preset and no figures, or figures that are wrong, is an error that says what to give.
func (t Training) EpochsModel(d RunData) (*convergence.Model, error) {
	if t.Mode != TrainToTarget {
		if t.HasCustom() {
			return nil, fmt.Errorf("epochs at a reference batch and a critical batch describe a run to a target accuracy: train to-target to use them")
		}
		return nil, nil
	}
	if t.HasCustom() {
		m, err := t.Custom.Model()
		if err != nil {
			return nil, err
		}
		return &m, nil
	}
	if m, ok := convergence.Preset(d.Dataset); ok {
		return &m, nil
	}
	name := d.Dataset
	if name == "" {
		name = "synthetic data"
	}
	return nil, fmt.Errorf("training to a target accuracy on %s: no published epochs-to-target figures for it are built in (presets: %s); give your recipe's own: the epochs it takes at a reference batch, and the critical batch or a preset it is like",
		name, strings.Join(convergence.PresetNames(), ", "))
}

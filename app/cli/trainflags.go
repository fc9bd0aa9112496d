package cli

import (
	"flag"
	"fmt"
	"strings"

	"cnntime/app"
	"cnntime/predictor/convergence"
)

// trainFlags say how a run is counted (--train) and, to a target, the user's own
// epochs figures: --ref-epochs at --ref-batch, with --critical-batch or --like.
type trainFlags struct {
	mode          string
	refEpochs     float64
	refBatch      int
	criticalBatch float64
	like          string
}

// The ranges of a recipe's own figures beyond what convergence.Custom checks: past them
// the epochs and times derived from them stop being printable numbers (a critical batch
// of 1e300 printed a 300-digit formula, 1e-300 epochs a run of 0 s).
const (
	minRefEpochs     = 0.01
	maxRefBatch      = 1 << 24
	maxCriticalBatch = 1e9
)

// trainNote is the help on the training flags, after a command's summary.
const trainNote = `--train to-target counts each batch's run to a target accuracy, E(B) = E_min·(1 + B/B_noise)
epochs (McCandlish et al. 2018), from the dataset's preset (imagenet-1k: MLPerf ResNet-50 to
75.9% top-1; cifar-10: DAWNBench to 94%) or from your own recipe (--ref-epochs E --ref-batch B
with --critical-batch N or --like PRESET); best then picks the least time to the target.`

func (tf *trainFlags) register(fs *flag.FlagSet) {
	choiceVar(fs, &tf.mode, "train", string(app.TrainEpochs), "how long the run is", trainModeChoices(), errorOf(app.ParseTrainMode))
	decimalVar(fs, &tf.refEpochs, "ref-epochs", 0, "to-target with your own recipe: the epochs it takes at --ref-batch")
	wholeVar(fs, &tf.refBatch, "ref-batch", 0, "to-target with your own recipe: the global batch it reached its target at in --ref-epochs")
	decimalVar(fs, &tf.criticalBatch, "critical-batch", 0, "to-target with your own recipe: its critical batch B_noise (the batch at which the epochs double)")
	choiceVar(fs, &tf.like, "like", "", "to-target with your own recipe: take the critical batch of a preset", likeChoices(), func(s string) error {
		_, err := convergence.Custom{Epochs: 1, Batch: 1, Like: s}.Model()
		return err
	})
}

// training checks the flags (set: the flags given) and returns the training they
// describe; a mistake is a usage error that names the flag.
func (tf *trainFlags) training(set map[string]bool) (app.Training, error) {
	mode, err := app.ParseTrainMode(tf.mode)
	if err != nil {
		return app.Training{}, Usagef("--train: %v", err)
	}
	t := app.Training{Mode: mode}
	custom := set["ref-epochs"] || set["ref-batch"] || set["critical-batch"] || set["like"]
	if !custom {
		return t, nil
	}
	if mode != app.TrainToTarget {
		return t, Usagef("--ref-epochs, --ref-batch, --critical-batch and --like describe a run to a target accuracy: add --train to-target")
	}
	switch {
	case !set["ref-epochs"] || !set["ref-batch"]:
		return t, Usagef("your own recipe needs both --ref-epochs E and --ref-batch B (it reaches its target in E epochs at global batch B)")
	case set["critical-batch"] == set["like"]:
		return t, Usagef("with --ref-epochs and --ref-batch give --critical-batch N or --like %s (one of them)", strings.Join(convergence.PresetNames(), "|"))
	}
	switch {
	case tf.refEpochs > 0 && tf.refEpochs < minRefEpochs:
		return t, Usagef("--ref-epochs %g: give the epochs your recipe takes at --ref-batch, from %g up", tf.refEpochs, minRefEpochs)
	case tf.refBatch > maxRefBatch:
		return t, Usagef("--ref-batch %d: give the global batch your recipe reached its target at, 1 to %d", tf.refBatch, maxRefBatch)
	case tf.criticalBatch > maxCriticalBatch:
		return t, Usagef("--critical-batch %g: give the batch at which the epochs double, 1 to %g", tf.criticalBatch, float64(maxCriticalBatch))
	}
	t.Custom = convergence.Custom{Epochs: tf.refEpochs, Batch: tf.refBatch, CriticalBatch: tf.criticalBatch, Like: tf.like}
	if _, err := t.Custom.Model(); err != nil {
		flag := "--ref-epochs"
		switch msg := err.Error(); {
		case strings.HasPrefix(msg, "epochs at"):
		case strings.Contains(msg, "reference batch"):
			flag = "--ref-batch"
		case strings.Contains(msg, "critical batch"):
			flag = "--critical-batch"
		case strings.Contains(msg, "like"):
			flag = "--like"
		}
		return t, Usagef("%s: %v", flag, err)
	}
	return t, nil
}

// epochsNote says, under a table of a run to a target, where its epochs come from and
// what best optimises; "" for fixed epochs.
func epochsNote(m *convergence.Model) string {
	if m == nil {
		return ""
	}
	err := "no error of its own"
	if m.ErrorPct > 0 {
		err = fmt.Sprintf("±%.0f%%", m.ErrorPct)
	}
	fitted := ""
	if m.FittedOn != "" {
		fitted = ", fitted on " + m.FittedOn
	}
	return fmt.Sprintf("to target: %s; epochs from %s%s, E(B) = %.2f·(1 + B/%.0f) (%s; %s). Total and cost are the time to the target; the band adds the epochs' error.",
		m.Target, m.Name, fitted, m.EpochsMin, m.NoiseBatch, err, m.Basis)
}

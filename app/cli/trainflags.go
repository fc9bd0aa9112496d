package cli

import (
	"flag"
	"fmt"
	"strings"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/convergence"
	"cnntime/predictor/recipe"
)

// trainFlags say how a run is counted (--train) and, to a target, with which recipe
// (--recipe, a built-in name or a recipe file) to which accuracy (--target-accuracy),
// or the user's own epochs figures: --ref-epochs at --ref-batch, with --critical-batch
// or --like.
type trainFlags struct {
	mode          string
	recipe        string
	target        float64
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
const trainNote = `--train to-target counts each batch's run to a target accuracy: each CNN trains with its own
published recipe (torchvision's for its zoo; --recipe names another, e.g. mlperf-lars or ffcv-88,
or a recipe file of yours, YAML or JSON) to that recipe's published top-1, or to a lower
--target-accuracy (its schedule compressed by 2^(-Δ/2.03) epochs, FFCV's sweeps; a higher one is
refused). At a batch outside the recipe law's evidence, or for another network's recipe, the epochs
are marked extrapolated and their band widens. --ref-epochs E --ref-batch B with
--critical-batch N or --like PRESET give your own figures instead; best then picks the least
time to the target.`

func (tf *trainFlags) register(fs *flag.FlagSet) {
	choiceVar(fs, &tf.mode, "train", string(app.TrainEpochs), "how long the run is", trainModeChoices(), errorOf(app.ParseTrainMode))
	choiceVar(fs, &tf.recipe, "recipe", "", "to-target: the recipe every CNN trains with, a built-in one by name (each CNN's recipe of that name; name/model for one network's) or your recipe file (.yaml, .yml or .json); none: each CNN's own", recipeChoices(), acceptRecipe)
	decimalVar(fs, &tf.target, "target-accuracy", 0, "to-target: the top-1 accuracy (%) to reach, at most the recipe's published one; none: the recipe's")
	decimalVar(fs, &tf.refEpochs, "ref-epochs", 0, "to-target with your own figures: the epochs your recipe takes at --ref-batch")
	wholeVar(fs, &tf.refBatch, "ref-batch", 0, "to-target with your own figures: the global batch your recipe reached its target at in --ref-epochs")
	decimalVar(fs, &tf.criticalBatch, "critical-batch", 0, "to-target with your own figures: your recipe's critical batch B_noise (the batch at which the epochs double)")
	choiceVar(fs, &tf.like, "like", "", "to-target with your own figures: take the critical batch of a preset", likeChoices(), func(s string) error {
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
	chosen := set["recipe"] || set["target-accuracy"]
	switch {
	case (custom || chosen) && mode != app.TrainToTarget:
		return t, Usagef("--recipe, --target-accuracy, --ref-epochs, --ref-batch, --critical-batch and --like describe a run to a target accuracy: add --train to-target")
	case custom && chosen:
		return t, Usagef("give a recipe (--recipe, --target-accuracy) or your own figures (--ref-epochs, --ref-batch), not both")
	case chosen:
		return tf.recipeTraining(t, set)
	case !custom:
		return t, nil
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

// recipeTraining reads --recipe and --target-accuracy into t.
func (tf *trainFlags) recipeTraining(t app.Training, set map[string]bool) (app.Training, error) {
	if set["target-accuracy"] && !(tf.target > 0 && tf.target <= 100) {
		return t, Usagef("--target-accuracy %g: give a top-1 accuracy in percent, above 0 and up to 100 (leave it out for each recipe's published accuracy)", tf.target)
	}
	t.TargetTop1 = tf.target
	name := strings.TrimSpace(tf.recipe)
	if !set["recipe"] {
		return t, nil
	}
	if name == "" {
		return t, Usagef("--recipe: give a built-in recipe (%s) or a recipe file", strings.Join(app.RecipeNames(), ", "))
	}
	if b, err := app.Recipes(); err == nil && len(b.Named(name)) > 0 {
		t.Recipe = name
		return t, nil
	}
	if err := acceptRecipe(name); err != nil {
		return t, Usagef("--recipe: %v", err)
	}
	r, err := app.LoadRecipeFile(name)
	if err != nil {
		return t, Usagef("--recipe: %v", err)
	}
	t.RecipeFile = &r
	return t, nil
}

// acceptRecipe is --recipe's parser: a built-in recipe's name or ID, or what looks like
// a recipe file's path.
func acceptRecipe(s string) error {
	n := strings.TrimSpace(s)
	if b, err := app.Recipes(); err == nil && len(b.Named(n)) > 0 {
		return nil
	}
	if app.LooksLikeRecipeFile(n) {
		return nil
	}
	return fmt.Errorf("recipe %q: no such built-in recipe (%s), and no recipe file (.yaml, .yml or .json)", s, strings.Join(app.RecipeNames(), ", "))
}

// recipeNote is the line under a table that says where curve c's epochs come from:
// its recipe (RecipeText), the law and its evidence, and the recipe's source; "" for
// fixed epochs.
func recipeNote(c *predictor.Curve) string {
	m := c.Recipe
	if m == nil {
		return ""
	}
	r, l := m.Recipe, m.Recipe.Law
	if r.Name == recipe.CustomName {
		return fmt.Sprintf("to your target: %s, E(B) = %.2f·(1 + B/%.0f) (%s; %s)", app.RecipeText(m), l.EpochsMin, l.CriticalBatch, errorWords(l.ErrorPct), l.Basis)
	}
	law := fmt.Sprintf("the %s law on batches %s ±%.1f%%", l.Kind, l.BatchRange(), l.ErrorPct)
	if l.Kind == recipe.Published {
		law = fmt.Sprintf("shown at its published batch only (±%.1f%%, run to run)", l.ErrorPct)
	}
	if l.Basis != "" {
		law += " (" + l.Basis + ")"
	}
	return fmt.Sprintf("%s to %s: %s; %s. Source: %s.", m.Network, m.TargetName(), app.RecipeText(m), law, r.Source)
}

func errorWords(pct float64) string {
	if pct > 0 {
		return fmt.Sprintf("±%.0f%%", pct)
	}
	return "no error of its own"
}

// writeRecipeNotes writes each recipe note, then what the figures to a target mean.
func writeRecipeNotes(env *Env, recipes []string) {
	if len(recipes) == 0 {
		return
	}
	for _, n := range recipes {
		fmt.Fprintln(env.Stdout, n)
	}
	fmt.Fprintln(env.Stdout, "To target: total and cost are the time to the recipe's accuracy; the band adds the epochs' error. Outside a law's batches, or for another network's recipe, the epochs are extrapolated (REGIME) and their band widens.")
}

// targetTop1Text is a row's target in a table cell: its accuracy ("76.13%"), "-" for none.
func targetTop1Text(target string) string {
	if target == "" {
		return "-"
	}
	if i := strings.Index(target, " top-1"); i > 0 {
		return target[:i]
	}
	return target
}

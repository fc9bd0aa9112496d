package app

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor/convergence"
	"cnntime/predictor/recipe"
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

// Training is how long a run trains: its mode and, to a target, the recipe each
// network trains with (its own default, a built-in one by name, or a user's recipe
// file), the accuracy to reach (the recipe's published one unless TargetTop1 is given)
// or instead the user's own figures (epochs at a reference batch, and a critical
// batch or a preset to be like).
type Training struct {
	Mode   TrainMode
	Custom convergence.Custom
	// AnyBatch lets a fixed-epoch run's best batch be any batch that fits, however few
	// steps an epoch it makes; by default the best (and the scatter's point, the Pareto
	// front and the results) is the best of the batches of at least MinStepsPerEpoch
	// steps an epoch (see EnoughSteps).
	AnyBatch bool
	// Recipe is a built-in recipe's name ("torchvision-v2": each network's recipe of
	// that name) or ID ("mlperf-lars/resnet50"); "" gives each network its default.
	Recipe string
	// RecipeFile is a user's own recipe (LoadRecipeFile); it replaces Recipe.
	RecipeFile *recipe.Recipe
	// TargetTop1 is the top-1 accuracy (%) to reach; 0 is each recipe's published one.
	TargetTop1 float64
}

// HasCustom says whether any custom figure is given.
func (t Training) HasCustom() bool { return t.Custom != (convergence.Custom{}) }

// hasRecipeChoice says whether a recipe or a target accuracy is chosen.
func (t Training) hasRecipeChoice() bool {
	return strings.TrimSpace(t.Recipe) != "" || t.RecipeFile != nil || t.TargetTop1 != 0
}

// RecipeLabel is the recipe choice in words: the file's recipe, the built-in name, or
// "each CNN's own recipe".
func (t Training) RecipeLabel() string {
	switch {
	case t.RecipeFile != nil:
		return "your recipe " + t.RecipeFile.ID()
	case strings.TrimSpace(t.Recipe) != "":
		return "recipe " + strings.TrimSpace(t.Recipe)
	}
	return "each CNN's own recipe"
}

// Check reports what is wrong with the training choice for a run on d, before any
// network is known: a recipe or figures without to-target, figures and a recipe
// together, an unknown recipe name, a recipe of another dataset, a target accuracy
// out of range, a dataset with no recipe. Nil when it may be predicted (a recipe
// published for neither network is still said per network, by Plan).
func (t Training) Check(d RunData) error {
	if t.Mode != TrainToTarget {
		switch {
		case t.HasCustom():
			return fmt.Errorf("epochs at a reference batch and a critical batch describe a run to a target accuracy: train to-target to use them")
		case t.hasRecipeChoice():
			return fmt.Errorf("a recipe and a target accuracy describe a run to a target accuracy: train to-target to use them")
		}
		return nil
	}
	if t.HasCustom() {
		if t.hasRecipeChoice() {
			return fmt.Errorf("give your own epochs figures or a recipe (and target accuracy), not both")
		}
		_, err := recipe.CustomPlan(t.Custom, "")
		return err
	}
	if t.TargetTop1 != 0 && !(t.TargetTop1 > 0 && t.TargetTop1 <= 100) {
		return fmt.Errorf("target accuracy %v: give a top-1 accuracy in percent, above 0 and up to 100 (or none: each recipe's published accuracy)", t.TargetTop1)
	}
	b, err := Recipes()
	if err != nil {
		return err
	}
	switch {
	case t.RecipeFile != nil:
		if d.Dataset != t.RecipeFile.Dataset {
			return fmt.Errorf("your recipe %s reached its accuracy on %s; this run trains on %s: choose the dataset %s, or a recipe of %s", t.RecipeFile.ID(), t.RecipeFile.Dataset, datasetName(d), t.RecipeFile.Dataset, datasetName(d))
		}
		return nil
	case strings.TrimSpace(t.Recipe) != "":
		named := b.Named(t.Recipe)
		if len(named) == 0 {
			_, err := b.Find(t.Recipe, "")
			return err
		}
		for _, r := range named {
			if r.Dataset == d.Dataset {
				return nil
			}
		}
		return fmt.Errorf("recipe %s reached its accuracy on %s; this run trains on %s: choose a recipe of %s", strings.TrimSpace(t.Recipe), named[0].Dataset, datasetName(d), datasetName(d))
	}
	_, _, err = b.Default("", d.Dataset)
	return err
}

// datasetName is the run's dataset in words.
func datasetName(d RunData) string {
	if d.Dataset == "" {
		return "synthetic data"
	}
	return d.Dataset
}

// RecipeBatch is the global batch network's recipe on d was published with, which the
// advice within 1% of the best batch prefers: the plan's recipe training to a target
// (the reference batch of the user's own figures), else network's default recipe on d;
// 0 when d has no recipe (synthetic data).
func (t Training) RecipeBatch(network string, d RunData, plan *recipe.Plan) int {
	if plan != nil {
		return plan.Recipe.GlobalBatch
	}
	b, err := Recipes()
	if err != nil {
		return 0
	}
	r, _, err := b.Default(network, d.Dataset)
	if err != nil {
		return 0
	}
	return r.GlobalBatch
}

// Plan is the recipe plan network trains with on d: nil for fixed epochs; the user's
// figures when given; else the named recipe (or file) or the network's default, to the
// target accuracy. What cannot be planned is an error that says what to give.
func (t Training) Plan(network string, d RunData) (*recipe.Plan, error) {
	if err := t.Check(d); err != nil || t.Mode != TrainToTarget {
		return nil, err
	}
	if t.HasCustom() {
		p, err := recipe.CustomPlan(t.Custom, network)
		return &p, err
	}
	b, err := Recipes()
	if err != nil {
		return nil, err
	}
	var p recipe.Plan
	if t.RecipeFile != nil {
		p, err = b.PlanFor(*t.RecipeFile, network, d.Dataset, t.TargetTop1)
	} else {
		p, err = b.Plan(t.Recipe, network, d.Dataset, t.TargetTop1)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	return &p, nil
}

// OwnRecipeChoice is the Run tab's recipe choice that gives each CNN its own recipe.
const OwnRecipeChoice = "each CNN's own"

// RecipeChoices are the Run tab's recipe choices: each CNN's own, then the built-in
// recipes by name.
func RecipeChoices() []string { return append([]string{OwnRecipeChoice}, RecipeNames()...) }

// TargetWords is the target of a run to a target in a phrase: "each recipe's
// accuracy", or "75% top-1".
func (t Training) TargetWords() string {
	if t.HasCustom() {
		return "your target"
	}
	if t.TargetTop1 > 0 {
		return recipe.FormatTop1(t.TargetTop1) + " top-1"
	}
	return "each recipe's published accuracy"
}

// TrainBasis says how the settings count the run, for the Run tab: the fixed epochs;
// to a target, each selected CNN's recipe, the accuracy it reaches and its epochs at
// its published batch, with where the epochs are extrapolated; or what is wrong.
func TrainBasis(st SessionSettings) string {
	if err := st.Train.Check(st.Data); err != nil {
		return err.Error()
	}
	if st.Train.Mode != TrainToTarget {
		return fmt.Sprintf("Every batch trains for %s: the total is their time.", charts.Count(st.Epochs, "epoch", "epochs"))
	}
	if st.Train.HasCustom() {
		p, err := st.Train.Plan("", st.Data)
		if err != nil {
			return err.Error()
		}
		l := p.Recipe.Law
		return fmt.Sprintf("Each batch B trains for the epochs your figures give: %.2f × (1 + B/%s), critical batch %s (dashed). From %s.",
			l.EpochsMin, charts.FormatCount(int64(l.CriticalBatch+0.5)), charts.FormatCount(int64(l.CriticalBatch+0.5)), l.Basis)
	}
	var lines []string
	models := st.Models
	if len(models) > 6 {
		models = models[:5]
	}
	for _, name := range models {
		p, err := st.Train.Plan(name, st.Data)
		if err != nil {
			lines = append(lines, err.Error())
			continue
		}
		r, own := p.Recipe, ""
		if !p.OwnNetwork {
			own = fmt.Sprintf(", published for %s: extrapolated", r.Model)
		}
		lines = append(lines, fmt.Sprintf("%s: recipe %s to %s, %s epochs at batch %s (%s law on %s)%s",
			name, r.ID(), p.TargetName(), strconv.FormatFloat(math.Round(p.At(r.GlobalBatch).Epochs*10)/10, 'f', -1, 64), charts.FormatCount(int64(r.GlobalBatch)), r.Law.Kind, r.Law.BatchRange(), own))
	}
	if len(st.Models) > len(models) {
		lines = append(lines, fmt.Sprintf("and %d more", len(st.Models)-len(models)))
	}
	text := "Each batch trains for the epochs its CNN's recipe needs to " + st.Train.TargetWords() + " (" + st.Train.RecipeLabel() + ")."
	if len(lines) > 0 {
		text += " " + strings.Join(lines, "; ") + "."
	}
	return text + " Outside a law's batches the epochs are extrapolated (shaded on the curves) and their band widens."
}

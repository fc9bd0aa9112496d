package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/convergence"
)

// TrainControls are the Run tab's training settings: train every batch for a fixed
// number of epochs (the Epochs field) or to a target accuracy, each batch for the
// epochs its recipe needs; to a target, the recipe (each CNN's own, or a built-in one
// by name: app.RecipeChoices) and the accuracy (empty: the recipe's), or the user's own
// figures (epochs at a batch, and a critical batch or a preset it is like); and a line
// saying where the epochs come from (app.TrainBasis).
type TrainControls struct {
	Mode          *widget.RadioGroup
	Recipe        *widget.Select // the recipe every CNN trains with; app.OwnRecipeChoice: each its own
	Target        *widget.Entry  // the top-1 accuracy (%) to reach; empty: each recipe's
	RefEpochs     *widget.Entry  // your figures' epochs; empty: the recipe's
	RefBatch      *widget.Entry  // ... at this global batch
	CriticalBatch *widget.Entry  // its critical batch; empty: the Like preset's
	Like          *widget.Select // the preset whose critical batch it takes
	// MinSteps keeps a fixed-epoch run's best batch to those that make at least
	// app.MinStepsPerEpoch steps an epoch (on, the default); off, any batch may be best.
	MinSteps *widget.Check
	Basis    *widget.Label // where the epochs come from, or what is wrong
}

// The training modes as the Run tab offers them.
const (
	trainForEpochs = "N epochs"
	trainToTarget  = "to target accuracy"
)

// trainItems builds the training fields of p's form: "Train for" first, then the
// user's own recipe. p.Epochs must exist: it is the fixed count, unused to a target.
func (p *SelectionPanel) trainItems() (forItem *widget.FormItem, recipe []*widget.FormItem) {
	s := p.session
	st := s.Settings()
	c := &p.Train
	c.Mode = widget.NewRadioGroup([]string{trainForEpochs, trainToTarget}, nil)
	c.Mode.Required = true
	c.Mode.SetSelected(modeChoice(st.Train.Mode))
	c.RefEpochs = widget.NewEntry()
	c.RefEpochs.SetPlaceHolder("epochs")
	c.RefBatch = widget.NewEntry()
	c.RefBatch.SetPlaceHolder("at batch")
	c.CriticalBatch = widget.NewEntry()
	c.CriticalBatch.SetPlaceHolder("like a preset")
	c.Like = widget.NewSelect(convergence.PresetNames(), nil)
	c.Recipe = widget.NewSelect(app.RecipeChoices(), nil)
	c.Recipe.SetSelected(app.OwnRecipeChoice)
	if st.Train.Recipe != "" {
		c.Recipe.SetSelected(st.Train.Recipe)
	}
	c.Target = widget.NewEntry()
	c.Target.SetPlaceHolder("the recipe's")
	if st.Train.TargetTop1 > 0 {
		c.Target.SetText(strconv.FormatFloat(st.Train.TargetTop1, 'g', -1, 64))
	}
	cu := st.Train.Custom
	if cu.Epochs > 0 {
		c.RefEpochs.SetText(strconv.FormatFloat(cu.Epochs, 'g', -1, 64))
	}
	if cu.Batch > 0 {
		c.RefBatch.SetText(strconv.Itoa(cu.Batch))
	}
	if cu.CriticalBatch > 0 {
		c.CriticalBatch.SetText(strconv.FormatFloat(cu.CriticalBatch, 'g', -1, 64))
	}
	like := cu.Like
	if like == "" {
		like = defaultLike(st.Data.Dataset)
	}
	c.Like.SetSelected(like)
	// Checked (the default): the best batch makes enough steps an epoch. The label is
	// short: a longer one widened the whole selection panel.
	c.MinSteps = widget.NewCheck(fmt.Sprintf("%d+ steps/epoch", app.MinStepsPerEpoch), nil)
	c.MinSteps.SetChecked(!st.Train.AnyBatch)
	c.Basis = widget.NewLabel("")
	c.Basis.Wrapping = fyne.TextWrapWord
	c.Basis.TextStyle = fyne.TextStyle{Italic: true}

	for _, e := range []*widget.Entry{c.Target, c.RefEpochs, c.RefBatch, c.CriticalBatch} {
		e.Validator = func(string) error { _, err := p.trainSettings(); return err }
		e.OnChanged = func(string) { p.applyTrain(false) }
	}
	c.Like.OnChanged = func(string) { p.applyTrain(false) }
	c.MinSteps.OnChanged = func(bool) { p.applyTrain(false) }
	c.Recipe.OnChanged = func(string) { p.applyTrain(false) }
	c.Mode.OnChanged = func(string) { p.applyTrain(true) }
	p.showTrain(st)

	forItem = widget.NewFormItem("Train for", c.Mode)
	recipe = []*widget.FormItem{
		widget.NewFormItem("Best batch", c.MinSteps),
		widget.NewFormItem("Recipe", c.Recipe),
		widget.NewFormItem("Top-1 %", c.Target),
		widget.NewFormItem("Your epochs", container.NewGridWithColumns(2, c.RefEpochs, c.RefBatch)),
		widget.NewFormItem("Critical", c.CriticalBatch),
		widget.NewFormItem("or like", c.Like),
	}
	return forItem, recipe
}

func modeChoice(m app.TrainMode) string {
	if m == app.TrainToTarget {
		return trainToTarget
	}
	return trainForEpochs
}

// defaultLike is the preset a recipe on dataset is like unless told: the dataset's own,
// else ImageNet's.
func defaultLike(dataset string) string {
	if _, ok := convergence.Preset(dataset); ok {
		return dataset
	}
	return "imagenet-1k"
}

// trainSettings are the session's settings with the training the controls describe,
// checked: to a target, your figures when typed (their critical batch, when empty, the
// Like preset's), else the chosen recipe and accuracy.
func (p *SelectionPanel) trainSettings() (app.SessionSettings, error) {
	c := &p.Train
	next := p.session.Settings()
	next.Train = app.Training{Mode: app.TrainEpochs, AnyBatch: !c.MinSteps.Checked}
	if c.Mode.Selected == trainToTarget {
		next.Train.Mode = app.TrainToTarget
	}
	epochsText, batchText := strings.TrimSpace(c.RefEpochs.Text), strings.TrimSpace(c.RefBatch.Text)
	if next.Train.Mode == app.TrainToTarget && (epochsText != "" || batchText != "") {
		var cu convergence.Custom
		var err error
		if cu.Epochs, err = parseNumber(epochsText, "your epochs"); err != nil {
			return next, err
		}
		b, err := parseNumber(batchText, "the batch of your epochs")
		if err != nil {
			return next, err
		}
		if b != math.Trunc(b) || b > math.MaxInt32 {
			return next, validationError("the batch of your epochs: enter a whole number")
		}
		cu.Batch = int(b)
		if crit := strings.TrimSpace(c.CriticalBatch.Text); crit != "" {
			if cu.CriticalBatch, err = parseNumber(crit, "the critical batch"); err != nil {
				return next, err
			}
		} else {
			cu.Like = c.Like.Selected
		}
		next.Train.Custom = cu
	} else if next.Train.Mode == app.TrainToTarget {
		if c.Recipe.Selected != app.OwnRecipeChoice {
			next.Train.Recipe = c.Recipe.Selected
		}
		if text := strings.TrimSpace(c.Target.Text); text != "" {
			top1, err := parseNumber(strings.TrimSuffix(text, "%"), "the top-1 accuracy")
			if err != nil {
				return next, err
			}
			next.Train.TargetTop1 = top1
		}
	}
	return next, next.Validate()
}

// parseNumber reads a number a person typed ("1,281", " 90 "); an empty or bad one is
// an error that names the field.
func parseNumber(s, what string) (float64, error) {
	if s == "" {
		return 0, validationError(what + ": enter a number")
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return 0, validationError(what + ": " + strconv.Quote(s) + " is not a number")
	}
	return f, nil
}

// applyTrain applies the training the controls describe when it is valid. A change of
// mode that cannot apply (to a target on a dataset with no preset and no recipe) is
// reported and the mode goes back; a half-typed recipe waits, marked, for the rest.
func (p *SelectionPanel) applyTrain(modeChanged bool) {
	next, err := p.trainSettings()
	if err == nil {
		err = p.session.Apply(next)
	}
	if err != nil {
		if modeChanged {
			p.report(err)
			cur := p.session.Settings()
			if choice := modeChoice(cur.Train.Mode); p.Train.Mode.Selected != choice {
				p.Train.Mode.SetSelected(choice) // calls back with a valid mode
			}
		}
		p.showTrain(p.session.Settings())
		p.Train.Basis.SetText(err.Error())
		return
	}
	for _, e := range []*widget.Entry{p.Train.Target, p.Train.RefEpochs, p.Train.RefBatch, p.Train.CriticalBatch} {
		_ = e.Validate()
	}
	p.showTrain(next)
}

// showTrain enables the fields the settings use and says where the epochs come from.
func (p *SelectionPanel) showTrain(st app.SessionSettings) {
	c := &p.Train
	toTarget := st.Train.Mode == app.TrainToTarget
	setEnabled(toTarget, c.RefEpochs, c.RefBatch, c.CriticalBatch)
	recipe := toTarget && (strings.TrimSpace(c.RefEpochs.Text) != "" || strings.TrimSpace(c.RefBatch.Text) != "")
	if recipe && strings.TrimSpace(c.CriticalBatch.Text) == "" {
		c.Like.Enable()
	} else {
		c.Like.Disable()
	}
	setEnabled(toTarget && !recipe, c.Target)
	if toTarget && !recipe {
		c.Recipe.Enable()
	} else {
		c.Recipe.Disable()
	}
	if p.Epochs != nil {
		setEnabled(!toTarget, p.Epochs)
	}
	if toTarget { // the epochs law weighs every batch already
		c.MinSteps.Disable()
	} else {
		c.MinSteps.Enable()
	}
	c.Basis.SetText(TrainBasis(st))
	if p.runForm != nil {
		p.runForm.Refresh() // its labels dim with their fields now, not at the next toggle
	}
}

func setEnabled(on bool, entries ...*widget.Entry) {
	for _, e := range entries {
		if on {
			e.Enable()
		} else {
			e.Disable()
		}
	}
}

// TrainBasis says in a sentence how the settings count the run (app.TrainBasis).
func TrainBasis(st app.SessionSettings) string { return app.TrainBasis(st) }

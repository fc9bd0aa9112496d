package views

import (
	"errors"
	"strconv"
	"time"

	"fyne.io/fyne/v2/widget"

	"cnntime/app"
)

// LimitControls are the Run tab's deadline and budget: the question best --deadline
// and --budget answer, "which machine is the cheapest that finishes in time" or "the
// fastest within the money". They rank the results and the Results tab answers them
// (app.RunLimit); they predict nothing. Empty is none.
type LimitControls struct {
	Deadline *widget.Entry
	Budget   *widget.Entry
}

// limitItems builds the Run tab's Deadline and Budget fields. A value that does not
// read ("abc", a negative one) is marked with what to type and changes nothing.
func (p *SelectionPanel) limitItems() []*widget.FormItem {
	s := p.session
	l := s.State().View.Limit
	c := &p.Limit
	c.Deadline = limitEntry(deadlineText(l.Deadline), "none, e.g. 24h or 2d", func(text string) error {
		d, err := app.ParseDeadline(text)
		if err != nil {
			return err
		}
		return s.UpdateView(func(v *app.ChartSettings) { v.Limit.Deadline = d })
	}, func(text string) error { _, err := app.ParseDeadline(text); return err })
	c.Budget = limitEntry(budgetText(l.BudgetUSD), "none, US dollars", func(text string) error {
		b, err := app.ParseBudget(text)
		if err != nil {
			return err
		}
		return s.UpdateView(func(v *app.ChartSettings) { v.Limit.BudgetUSD = b })
	}, func(text string) error { _, err := app.ParseBudget(text); return err })
	return []*widget.FormItem{
		{Text: "Deadline", Widget: c.Deadline, HintText: "cheapest in time: see Results"},
		{Text: "Budget", Widget: c.Budget, HintText: "fastest within it: see Results"},
	}
}

// limitEntry is a field whose text apply sets when check accepts it; text check
// refuses is marked as typed and applied not at all.
func limitEntry(text, placeholder string, apply, check func(string) error) *widget.Entry {
	e := widget.NewEntry()
	e.AlwaysShowValidationError = true
	e.SetText(text)
	e.SetPlaceHolder(placeholder)
	e.Validator = func(s string) error {
		err := check(s)
		var refused *app.LimitError
		if errors.As(err, &refused) {
			return validationError(refused.Why) // the field says what it is: the reason alone fits under it
		}
		return err
	}
	e.OnChanged = func(s string) {
		if check(s) == nil {
			_ = apply(s)
		}
	}
	return e
}

// deadlineText is a remembered deadline as the field shows it: "24h", "36h30m", "" for none.
func deadlineText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return app.DeadlineWords(d)
}

// budgetText is a remembered budget as the field shows it: "100", "" for none.
func budgetText(usd float64) string {
	if usd <= 0 {
		return ""
	}
	return strconv.FormatFloat(usd, 'f', -1, 64)
}

package views

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// removeModelDialog is File → Remove model…: it asks which of the user's custom models
// to remove (those that no longer read included), then asks to confirm.
func (mw *MainWindow) removeModelDialog() {
	names, err := mw.Session.RemovableModels(context.Background())
	if err != nil {
		mw.showError(err)
		return
	}
	if len(names) == 0 {
		d := dialog.NewInformation("Remove model", "There are no custom models to remove.\nAdd one with File › Add model….", mw.Window)
		closeOnEscape(d, mw.Window)
		d.Show()
		return
	}
	choice := widget.NewSelect(names, nil)
	choice.SetSelected(names[0])
	content := container.NewVBox(widget.NewLabel("Custom model to remove:"), choice)
	d := dialog.NewCustomConfirm("Remove model", "Remove…", "Cancel", content, func(ok bool) {
		if ok && choice.Selected != "" {
			mw.confirmRemoveModel(choice.Selected)
		}
	}, mw.Window)
	closeOnEscape(d, mw.Window)
	d.Show()
}

// confirmRemoveModel asks before removing the custom model called name.
func (mw *MainWindow) confirmRemoveModel(name string) {
	d := dialog.NewConfirm("Remove "+name+"?",
		fmt.Sprintf("Remove the custom model %s from the CNN list and the measurement cache?\n"+
			"Its file, if you still have it, is not touched: File › Add model… brings it back.", name),
		func(ok bool) {
			if ok {
				mw.removeModel(name)
			}
		}, mw.Window)
	d.SetConfirmText("Remove")
	d.SetDismissText("Cancel")
	closeOnEscape(d, mw.Window)
	d.Show()
}

// removeModel removes a custom model off the UI goroutine (the engine is rebuilt from
// the cache without it), then refreshes the CNN list and the start-up warnings.
func (mw *MainWindow) removeModel(name string) {
	mw.setStatus("Removing custom model " + name + "…")
	go func() {
		err := mw.Session.RemoveCustomModel(context.Background(), name)
		fyne.Do(func() {
			if err != nil {
				mw.showError(err)
				return
			}
			mw.Selection.RefreshModels()
			mw.setWarnings(mw.Session.Warnings())
			mw.notify("Removed custom model " + name + ".")
		})
	}()
}

// newWarningsButton is the status bar's button that shows what was left out at start;
// it is hidden while there is nothing to show.
func (mw *MainWindow) newWarningsButton() *widget.Button {
	b := widget.NewButtonWithIcon("", theme.WarningIcon(), func() { mw.showWarnings(mw.warnings) })
	b.Importance = widget.LowImportance
	b.Hide()
	return b
}

// setWarnings puts the start-up warnings behind the status bar's button.
func (mw *MainWindow) setWarnings(warnings []string) {
	mw.warnings = warnings
	if len(warnings) == 0 {
		mw.Warnings.Hide()
		return
	}
	mw.Warnings.SetText(plural(len(warnings), "warning") + " at start")
	mw.Warnings.Show()
}

// showStartWarnings shows what the backend left out when it loaded: in the status bar,
// behind its warnings button, and once as a dialog.
func (mw *MainWindow) showStartWarnings(warnings []string) {
	mw.setWarnings(warnings)
	if len(warnings) == 0 {
		return
	}
	mw.notify("Started, but " + plural(len(warnings), "thing was", "things were") + " left out: " + warnings[0])
	mw.showWarnings(warnings)
}

func (mw *MainWindow) showWarnings(warnings []string) {
	text := strings.Join(warnings, "\n\n") +
		"\n\nA saved custom model that no longer reads can be removed with File › Remove model…, then added again from a corrected file."
	label := widget.NewLabel(text)
	label.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Left out at start", "OK", container.NewVScroll(label), mw.Window)
	d.Resize(fyne.NewSize(560, 320))
	closeOnEscape(d, mw.Window)
	d.Show()
}

// plural writes n and the noun, with its plural form when n is not 1: the plural is
// the noun with "s" unless given.
func plural(n int, noun string, pluralForm ...string) string {
	if n == 1 {
		return "1 " + noun
	}
	if len(pluralForm) > 0 {
		return fmt.Sprintf("%d %s", n, pluralForm[0])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Package views is cnntime's desktop interface: the main window, its selection panel,
// charts, tables and dialogs. It holds Fyne widgets and layout only; what they show and
// do comes from package app.
package views

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/assets"
)

// Preference keys.
const (
	prefWindowWidth  = "window.width"
	prefWindowHeight = "window.height"
)

// Options configure the main window.
type Options struct {
	DBPath string // the measurement cache; "" for the default
}

// Icon is the application icon as a Fyne resource.
var Icon = fyne.NewStaticResource("icon.png", assets.Icon)

// NewMainWindow builds cnntime's main window: the selection panel on the left, the
// min-time vs cost scatter and the time vs batch size curves side by side, and the
// machine, results and benchmark tabs below.
func NewMainWindow(a fyne.App, opts Options) fyne.Window {
	w := a.NewWindow("cnntime")
	w.SetIcon(Icon)
	w.SetMaster()

	left := selectionPanel()
	charts := container.NewHSplit(
		chartArea("Min time vs cost", "One point per CNN × machine at its fastest batch size."),
		chartArea("Training time vs batch size", "One curve per CNN × machine."),
	)
	tabs := container.NewAppTabs(
		container.NewTabItem("Machines", widget.NewLabel("Machine specifications")),
		container.NewTabItem("Results", widget.NewLabel("Best batch size, time and cost per CNN × machine")),
		container.NewTabItem("Benchmark", widget.NewLabel("Measure this workstation's GPU")),
	)
	right := container.NewVSplit(charts, tabs)
	right.Offset = 0.62
	body := container.NewHSplit(left, right)
	body.Offset = 0.22
	w.SetContent(body)
	w.SetMainMenu(mainMenu(a, w))

	prefs := a.Preferences()
	width := float32(prefs.FloatWithFallback(prefWindowWidth, 1280))
	height := float32(prefs.FloatWithFallback(prefWindowHeight, 800))
	w.Resize(fyne.NewSize(width, height))
	w.SetCloseIntercept(func() {
		size := w.Canvas().Size()
		prefs.SetFloat(prefWindowWidth, float64(size.Width))
		prefs.SetFloat(prefWindowHeight, float64(size.Height))
		w.Close()
	})
	return w
}

func selectionPanel() fyne.CanvasObject {
	search := widget.NewEntry()
	search.SetPlaceHolder("Search CNNs")
	machines := widget.NewEntry()
	machines.SetPlaceHolder("Search machines")
	epochs := widget.NewEntry()
	epochs.SetText("90")
	images := widget.NewEntry()
	images.SetText("1281167")
	precision := widget.NewSelect([]string{"fp32", "fp32-strict", "amp"}, nil)
	precision.SetSelected("fp32")
	form := widget.NewForm(
		widget.NewFormItem("Epochs", epochs),
		widget.NewFormItem("Images", images),
		widget.NewFormItem("Precision", precision),
	)
	return container.NewVBox(
		widget.NewCard("CNNs", "", search),
		widget.NewCard("Machines", "", machines),
		widget.NewCard("Training run", "", form),
	)
}

func chartArea(title, subtitle string) fyne.CanvasObject {
	return widget.NewCard(title, subtitle, widget.NewLabel(""))
}

func mainMenu(a fyne.App, w fyne.Window) *fyne.MainMenu {
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Import…", func() {
			dialog.ShowInformation("Import", "Import another machine's cache or a CSV of measured step times.", w)
		}),
		fyne.NewMenuItem("Export…", func() {
			dialog.ShowInformation("Export", "Export the charts as PNG, SVG or PDF and the tables as CSV.", w)
		}),
	) // Fyne adds Quit to the first menu.
	help := fyne.NewMenu("Help",
		fyne.NewMenuItem("About", func() {
			dialog.ShowInformation("About cnntime", fmt.Sprintf("cnntime %s\n\nPredicts how long and how much it costs to train a CNN\non a GPU machine at every mini-batch size.", app.Version), w)
		}),
	)
	return fyne.NewMainMenu(file, help)
}

package views

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"cnntime/app/prices"
)

// updatePricesDialog asks before it downloads SkyPilot's price catalog (the window
// never goes on the network unasked), then downloads it with a Cancel button and
// shows every machine at the new prices. It is the window's `cnntime prices update`.
func (mw *MainWindow) updatePricesDialog() {
	if mw.Backend == nil {
		mw.showError(fmt.Errorf("updating prices is not available in this window: it has no measurement cache to keep them in"))
		return
	}
	msg := fmt.Sprintf("Download today's on-demand and spot prices of %s\nfrom SkyPilot's public catalog?\n\n%s\n\nA cloud whose download fails keeps its prices; a file that has not\nchanged since the last update is not downloaded again.",
		strings.Join(prices.DefaultClouds, ", "), prices.URL())
	d := dialog.NewConfirm("Update prices", msg, func(ok bool) {
		if ok {
			mw.runPriceJob("Downloading prices from SkyPilot's catalog…", mw.Backend.UpdatePrices)
		}
	}, mw.Window)
	d.SetConfirmText("Download")
	d.SetDismissText("Cancel")
	closeOnEscape(d, mw.Window)
	d.Show()
}

// importPricesDialog reads a SkyPilot vms.csv the user picks (its cloud is the name of
// its folder, as SkyPilot lays its catalog out: …/catalogs/v7/aws/vms.csv) or a whole
// catalog folder of clouds, all or nothing: `cnntime prices import` in the window, for
// a machine with no network. The file picker lists only .csv files.
func (mw *MainWindow) importPricesDialog() {
	if mw.Backend == nil {
		mw.showError(fmt.Errorf("importing prices is not available in this window: it has no measurement cache to keep them in"))
		return
	}
	var d dialog.Dialog
	file := widget.NewButton("A cloud's vms.csv…", func() { d.Hide(); mw.pickFile(mw.importPrices, ".csv") })
	folder := widget.NewButton("A catalog folder (one folder per cloud)…", func() { d.Hide(); mw.pickFolder(mw.importPrices) })
	text := widget.NewLabel("Import SkyPilot's prices from a cloud's vms.csv (its cloud is its folder's name,\n…/catalogs/v7/aws/vms.csv) or from a catalog folder holding one folder per cloud.")
	d = dialog.NewCustom("Import prices", "Cancel", container.NewVBox(text, file, folder), mw.Window)
	closeOnEscape(d, mw.Window)
	d.Show()
}

// importPrices imports the SkyPilot catalog at path (see prices.Import).
func (mw *MainWindow) importPrices(path string) {
	mw.runPriceJob("Importing prices from "+path+"…", func(ctx context.Context) (prices.Report, error) {
		return mw.Backend.ImportPrices(ctx, path)
	})
}

// runPriceJob runs a price download or import off the UI goroutine behind a dialog
// with a Cancel button, then shows the machines at their new prices (when any changed)
// and says what it did, cloud by cloud, in a dialog (the status line goes on to the new
// prediction). A job that failed for some clouds still updated the others; one
// cancelled changed nothing.
func (mw *MainWindow) runPriceJob(what string, job func(context.Context) (prices.Report, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	bar := widget.NewProgressBarInfinite()
	progress := dialog.NewCustom("Prices", "Cancel", container.NewVBox(widget.NewLabel(what), bar), mw.Window)
	progress.SetOnClosed(cancel)
	progress.Show()
	mw.setStatus(what)
	go func() {
		rep, err := job(ctx)
		cancelled := ctx.Err() != nil
		fyne.Do(func() {
			mw.uiMu.Lock()
			progress.Hide()
			cancel()
			if cancelled {
				mw.notify("Prices: cancelled; every machine keeps the prices it had.")
			}
			mw.uiMu.Unlock()
			if cancelled {
				return
			}
			if rep.Changed() { // a failed cloud leaves the others updated
				mw.reloadChoices()
			}
			mw.uiMu.Lock()
			defer mw.uiMu.Unlock()
			var offline *prices.OfflineError
			if errors.As(err, &offline) {
				err = fmt.Errorf("%w (in this window: File › Import prices (SkyPilot vms.csv)…)", err)
			}
			if err != nil {
				mw.showError(err)
				return
			}
			label := widget.NewLabel(strings.Join(rep.Lines(), "\n"))
			d := dialog.NewCustom("Prices updated", "OK", container.NewVScroll(label), mw.Window)
			d.Resize(fyne.NewSize(560, 280))
			closeOnEscape(d, mw.Window)
			d.Show()
			mw.notify(rep.Summary())
		})
	}()
}

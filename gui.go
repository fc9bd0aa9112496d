//go:build !headless

package main

import (
	"embed"
	"os"

	fyneapp "fyne.io/fyne/v2/app"

	"cnntime/views"
)

// appID is the application's unique id; Fyne keeps preferences under it.
const appID = "io.github.cnntime"

// docs are the README and the manual the Help menu's sections show, as this build has them.
//
//go:embed README.md docs/*.md
var docs embed.FS

func runGUI(dbPath string) error {
	if err := checkDisplay(os.Getenv); err != nil {
		return err
	}
	a := fyneapp.NewWithID(appID)
	a.SetIcon(views.Icon)
	w := views.NewMainWindow(a, views.Options{DBPath: dbPath, Docs: docs})
	w.ShowAndRun()
	return nil
}

package main

import (
	_ "embed"

	fyneapp "fyne.io/fyne/v2/app"

	"cnntime/views"
)

// appID is the application's unique id; Fyne keeps preferences under it.
const appID = "io.github.cnntime"

// readme is the README the Help menu's sections show, as this build has it.
//
//go:embed README.md
var readme string

func runGUI(dbPath string) error {
	a := fyneapp.NewWithID(appID)
	a.SetIcon(views.Icon)
	w := views.NewMainWindow(a, views.Options{DBPath: dbPath, Readme: readme})
	w.ShowAndRun()
	return nil
}

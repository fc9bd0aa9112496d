package main

import (
	fyneapp "fyne.io/fyne/v2/app"

	"cnntime/views"
)

// appID is the application's unique id; Fyne keeps preferences under it.
const appID = "io.github.cnntime"

func runGUI(dbPath string) error {
	a := fyneapp.NewWithID(appID)
	a.SetIcon(views.Icon)
	w := views.NewMainWindow(a, views.Options{DBPath: dbPath})
	w.ShowAndRun()
	return nil
}

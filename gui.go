//go:build !headless

package main

import (
	"embed"
	"fmt"
	"os"
	"strings"

	fyneapp "fyne.io/fyne/v2/app"

	"cnntime/views"
)

// appID is the application's unique id; Fyne keeps preferences under it.
const appID = "io.github.cnntime"

// docs are the README and the manual the Help menu's sections show, as this build has them.
//
//go:embed README.md docs/*.md
var docs embed.FS

func runGUI(dbPath string) (err error) {
	if err := checkDisplay(os.Getenv); err != nil {
		return err
	}
	// A display that answers can still refuse the graphics library (GLFW found no
	// platform it could start: Fyne logs it, then panics when the window is made): one
	// line that says so, not a stack trace. Any other panic is a bug and goes on up.
	defer func() {
		if r := recover(); r != nil {
			if err = windowError(r); err == nil {
				panic(r)
			}
		}
	}()
	a := fyneapp.NewWithID(appID)
	a.SetIcon(views.Icon)
	w := views.NewMainWindow(a, views.Options{DBPath: dbPath, Docs: docs})
	w.ShowAndRun()
	return nil
}

// windowError is the error a panic of the graphics library's start-up means (nil for
// any other panic): GLFW not initialised, or no platform it could start.
func windowError(r any) error {
	msg := fmt.Sprint(r)
	for _, glfw := range []string{"NotInitialized", "PlatformUnavailable", "failed to initialise GLFW"} {
		if strings.Contains(msg, glfw) {
			return fmt.Errorf("could not open the window: the graphics library (GLFW) did not start on display %q (%s); run cnntime again, or use the commands without a window (cnntime help; cnntime-headless)",
				os.Getenv("DISPLAY"), strings.TrimSpace(msg))
		}
	}
	return nil
}

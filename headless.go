//go:build headless

package main

import "errors"

// This is the headless build (make headless: cnntime-headless): every command, no
// window, and no graphics library linked, for servers, cluster nodes and containers.

// runGUI has no window to open here: it says which build has one.
func runGUI(string) error {
	return errors.New("this is cnntime's headless build, for servers: it has every command but no window. Run a command (cnntime-headless help lists them), or the desktop build (cnntime) for the window")
}

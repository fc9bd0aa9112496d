// Command cnntime predicts CNN training time and cost on GPU machines at every batch
// size. With no arguments it opens the desktop app; with a command it runs headless:
// run "cnntime help" for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"cnntime/app"
)

func main() {
	args := os.Args[1:]
	if app.IsCLI(args) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.RunCLI(ctx, args, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	g, err := app.ParseGlobals(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnntime:", err)
		os.Exit(2)
	}
	if err := runGUI(g.DBPath); err != nil {
		fmt.Fprintln(os.Stderr, "cnntime:", err)
		os.Exit(1)
	}
}

// Command cnntime predicts CNN training time and cost on GPU machines at every batch
// size. With no arguments it opens the desktop app; with a command it runs headless:
// run "cnntime help" for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"cnntime/app/cli"
)

func main() {
	args := os.Args[1:]
	if cli.IsCLI(args) {
		if code, ran := cli.Supervise(args); ran { // the command ran in a watched child
			os.Exit(code)
		}
		ctx, stop := cli.SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		// Fyne's desktop driver locks the main goroutine to its OS thread in init, for
		// the GUI. A command run there pays a thread hand-off at every wait on other
		// goroutines, which made the CPU backend's parallel kernels 2–3× slower in
		// sweeps and validate than in tests; commands run on a goroutine of their own.
		done := make(chan int, 1)
		go func() { done <- cli.RunCLI(ctx, args, os.Stdin, os.Stdout, os.Stderr) }()
		code := <-done
		stop()
		os.Exit(code)
	}
	g, err := cli.ParseGlobals(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnntime:", err)
		os.Exit(2)
	}
	if err := runGUI(g.DBPath); err != nil {
		fmt.Fprintln(os.Stderr, "cnntime:", err)
		os.Exit(1)
	}
}

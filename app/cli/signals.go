package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// SignalError is the cause of a command's context cancelled by a signal (SIGINT,
// SIGTERM, SIGHUP): RunCLI then exits 128 + the signal's number, as a shell reports a
// program the signal ended, whatever the command made of its cancelled context.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string {
	switch e.Signal {
	case os.Interrupt:
		return "stopped by SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "stopped by SIGTERM"
	case syscall.SIGHUP:
		return "stopped by SIGHUP"
	}
	return fmt.Sprintf("stopped by signal %v", e.Signal)
}

// SignalContext is signal.NotifyContext whose cause, once a signal came, is a
// *SignalError naming it; stop releases the signals.
func SignalContext(parent context.Context, signals ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, signals...)
	go func() {
		select {
		case s := <-ch:
			cancel(&SignalError{Signal: s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// signalStatus is the exit status of a command whose context a signal cancelled:
// 128 + its number (130 for SIGINT, 143 for SIGTERM); 0 when no signal did.
func signalStatus(ctx context.Context) (int, *SignalError) {
	var se *SignalError
	if ctx == nil || ctx.Err() == nil || !errors.As(context.Cause(ctx), &se) {
		return 0, nil
	}
	if n, ok := se.Signal.(syscall.Signal); ok {
		return 128 + int(n), se
	}
	return 0, nil
}

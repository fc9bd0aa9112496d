package app

import (
	"fmt"
	"os"
	"path/filepath"

	"cnntime/app/inputerr"
)

// Version is the application's version; the build may override it with -ldflags.
var Version = "0.1.0"

// InputError is a request the app refuses because of what was asked (a bad setting, an
// unknown name), not because something failed (package inputerr). It names no flag: the
// command line shows it as a usage error (exit status 2), the GUI as a message about the
// setting.
type InputError = inputerr.Error

// Inputf returns an InputError.
func Inputf(format string, args ...any) error { return inputerr.Errorf(format, args...) }

// DefaultDBPath is the cache file used when neither --db nor CNNTIME_DB names one:
// cnntime/cache.db in the user's configuration directory.
func DefaultDBPath() (string, error) {
	if p := os.Getenv("CNNTIME_DB"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user's configuration directory for the cache (set --db or CNNTIME_DB): %w", err)
	}
	return filepath.Join(dir, "cnntime", "cache.db"), nil
}

// DefaultEpochs is the training length every surface assumes when the user names none:
// the GUI's Epochs setting and the CLI's --epochs (90: the classic ImageNet schedule).
const DefaultEpochs = 90

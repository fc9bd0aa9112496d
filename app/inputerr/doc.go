// Package inputerr is the error of a request refused because of what was asked (a bad
// setting, an unknown name), not because something failed. It names no flag: the
// command line shows it as a usage error (exit status 2), the GUI as a message about
// the setting. app.InputError is this error; packages under app that app itself uses
// (prices) return it without importing app.
//
// Imports: the standard library only.
package inputerr

// Package clock is the time as cnntime's app sees it. The day is an input: prices are
// aged against it, user prices are dated with it and imports dated after it are
// refused. Everything that depends on the date reads it here, so a test pins the day
// with Set and its goldens do not age. A build with the tag clockahead starts a year
// ahead of the wall clock (ahead.go): `make test-ahead` runs the date-dependent tests
// that way, so a test that reads the wall clock fails the day it is written rather
// than months later.
//
// Imports: the standard library only.
package clock

package app

import (
	"sync"
	"time"
)

// The day is an input: prices are aged against it, user prices are dated with it and
// imports dated after it are refused. Everything in app that depends on the date reads
// it through clock, so a test pins the day with SetClock and its goldens do not age.
// A build with the tag clockahead starts a year ahead of the wall clock (clock_ahead.go):
// `make test-ahead` runs the date-dependent tests that way, so a test that reads the
// wall clock fails the day it is written rather than months later.
var (
	clockMu  sync.RWMutex
	clockNow = defaultClock
)

// clock is the current time as the app sees it.
func clock() time.Time {
	clockMu.RLock()
	defer clockMu.RUnlock()
	return clockNow()
}

// today is the day prices are aged against, in UTC.
func today() time.Time { return clock().UTC() }

// SetClock makes the app read the time from now until restore is called. Tests use it
// to fix the day their expected outputs were written on; a nil now restores the
// default clock at once.
func SetClock(now func() time.Time) (restore func()) {
	clockMu.Lock()
	defer clockMu.Unlock()
	old := clockNow
	if now == nil {
		now = defaultClock
	}
	clockNow = now
	return func() {
		clockMu.Lock()
		defer clockMu.Unlock()
		clockNow = old
	}
}

// FixedClock is a clock that always reads t.
func FixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

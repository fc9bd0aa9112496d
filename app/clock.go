package app

import (
	"time"

	appclock "cnntime/app/clock"
)

// clock is the current time as the app sees it (package clock says why it is an input).
func clock() time.Time { return appclock.Now() }

// today is the day prices are aged against, in UTC.
func today() time.Time { return appclock.Today() }

// SetClock makes the app read the time from now until restore is called. Tests use it
// to fix the day their expected outputs were written on; a nil now restores the
// default clock at once.
func SetClock(now func() time.Time) (restore func()) { return appclock.Set(now) }

// FixedClock is a clock that always reads t.
func FixedClock(t time.Time) func() time.Time { return appclock.Fixed(t) }

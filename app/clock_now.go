//go:build !clockahead

package app

import "time"

// defaultClock is the wall clock.
func defaultClock() time.Time { return time.Now() }

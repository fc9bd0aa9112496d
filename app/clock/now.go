//go:build !clockahead

package clock

import "time"

// defaultClock is the wall clock.
func defaultClock() time.Time { return time.Now() }

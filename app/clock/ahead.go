//go:build clockahead

package clock

import "time"

// defaultClock, in a clockahead build, is the wall clock a year ahead: a test that
// depends on today's date without pinning it with SetClock fails in `make test-ahead`.
func defaultClock() time.Time { return time.Now().AddDate(1, 0, 0) }

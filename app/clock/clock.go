package clock

import (
	"sync"
	"time"
)

var (
	mu  sync.RWMutex
	now = defaultClock
)

// Now is the current time as the app sees it.
func Now() time.Time {
	mu.RLock()
	defer mu.RUnlock()
	return now()
}

// Today is the day prices are aged against, in UTC.
func Today() time.Time { return Now().UTC() }

// Default is the time the clock reads when nothing is pinned: the wall clock (a year
// ahead in a clockahead build).
func Default() time.Time { return defaultClock() }

// Set makes the clock read the time from f until restore is called. Tests use it to
// fix the day their expected outputs were written on; a nil f restores the default
// clock at once.
func Set(f func() time.Time) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := now
	if f == nil {
		f = defaultClock
	}
	now = f
	return func() {
		mu.Lock()
		defer mu.Unlock()
		now = old
	}
}

// Fixed is a clock that always reads t.
func Fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

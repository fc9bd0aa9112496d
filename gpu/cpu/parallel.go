package cpu

import (
	"runtime"
	"sync"
)

// parallelFor runs fn over [0, n) split into one contiguous range per core. Work is
// only split when each range has at least minPer iterations; small loops run inline,
// where starting goroutines would cost more than it saves.
func parallelFor(n, minPer int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPer, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

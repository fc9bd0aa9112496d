package db

import (
	"fmt"
	"math"
	"time"
)

// A measurement's time is stored as Unix nanoseconds, an int64: from 1970 to
// 2262-04-11. A time outside that range would overflow into another date (9999-12-31
// was stored as 2261-07-22), and a time in the future would hide every later genuine
// measurement of its key, which replaces a row only when measured later. So a time is
// refused before it is stored (checkMeasuredAt), and a stored time that lies ahead of
// the clock (within clockSlack, or from before this check) is replaced by any new
// measurement (storedInFuture).

// Measurement times a cache can store, and how far ahead of this computer's clock one
// may be (another machine's clock may run a little ahead).
var (
	earliestTime = time.Unix(0, 0).UTC()
	latestTime   = time.Unix(0, math.MaxInt64).UTC()
)

const clockSlack = 24 * time.Hour

// checkMeasuredAt refuses a measurement time the cache cannot store or must not trust;
// the zero time (unknown) passes.
func checkMeasuredAt(at time.Time) error {
	now := time.Now()
	switch {
	case at.IsZero():
		return nil
	case at.Before(earliestTime):
		return fmt.Errorf("measured_at %s is before 1970: a measurement time is from 1970 to %s", at.Format(time.RFC3339), latestTime.Format(time.DateOnly))
	case at.After(latestTime):
		return fmt.Errorf("measured_at %s is after %s, the latest time a cache stores: a measurement time is from 1970 to then", at.Format(time.RFC3339), latestTime.Format(time.DateOnly))
	case at.After(now.Add(clockSlack)):
		return fmt.Errorf("measured_at %s is in the future (this computer's clock says %s): it would hide every later measurement of the same key; correct the time, or the clock that wrote it", at.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// storedInFuture is an SQL condition on a stored time column: it lies ahead of this
// computer's clock, so it is not a time a measurement was made at (yet), and any new
// measurement of its key replaces it. (clockSlack only lets such a time in, from a
// clock that runs ahead: a step stamped 20 h ahead, taken in, hid the measurement made
// now until its time came.)
func storedInFuture(column string) string {
	return fmt.Sprintf("%s > CAST(strftime('%%s', 'now') AS INTEGER) * 1000000000", column)
}

package app

import (
	"testing"
	"time"

	appclock "cnntime/app/clock"
)

func TestSetClockPinsTodayAndRestores(t *testing.T) {
	day := time.Date(2026, 11, 27, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))
	restore := SetClock(FixedClock(day))
	if got := today().Format(time.DateOnly); got != "2026-11-28" {
		t.Errorf("today() with the clock at %v = %s, want the UTC day 2026-11-28", day, got)
	}
	if got := userPriceSource(); got != "set by the user on 2026-11-28" {
		t.Errorf("userPriceSource() = %q, want the pinned day", got)
	}
	inner := SetClock(nil) // nil is the default clock
	if d := clock().Sub(appclock.Default()); d > time.Minute || d < -time.Minute {
		t.Errorf("SetClock(nil) reads %v, want the default clock", clock())
	}
	inner()
	if !clock().Equal(day) {
		t.Errorf("after restoring the inner clock: %v, want %v", clock(), day)
	}
	restore()
	if clock().Equal(day) {
		t.Errorf("restore() left the pinned day in place")
	}
}

package app

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"cnntime/db"
	"cnntime/predictor/measure"

	_ "modernc.org/sqlite"
)

// The Benchmark tab's holdings line says how a device's newest sweep ended: one left
// 'running' by a process that is gone (SIGKILLed, out of memory) reads "interrupted
// (resume continues it)", not "running" forever; the other states read as recorded.
func TestCacheHoldingsSayASweepOfADeadProcessIsInterrupted(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		recorded, want string
	}{
		{"running", "interrupted (resume continues it)"},
		{"paused", "paused"},
		{"done", "done"},
		{"cancelled", "cancelled"},
		{"failed", "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.recorded, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.db")
			d, err := OpenCache(path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			dev := measure.Device{Key: "cpu:lab:epyc", Backend: "cpu", Name: "AMD EPYC"}
			if err := d.PutDevice(ctx, dev); err != nil {
				t.Fatal(err)
			}
			// As a process recorded it before it died: no process of this test holds it.
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = raw.Exec(`INSERT INTO sweeps (device_key, plan, state, total, done, created_at, updated_at)
				VALUES (?, '{}', 'done', 4, 4, 1, 1), (?, '{}', ?, 10, 3, 2, 2)`, dev.Key, dev.Key, tc.recorded)
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}
			hs, err := CacheHoldings(ctx, d)
			if err != nil || len(hs) != 1 {
				t.Fatalf("CacheHoldings = %+v, %v; want the one device", hs, err)
			}
			if got := SweepStateText(hs[0].LastSweep); got != tc.want {
				t.Errorf("the newest sweep, recorded %s, reads %q (state %q), want %q", tc.recorded, got, hs[0].LastSweep, tc.want)
			}
			if tc.recorded == "running" && hs[0].LastSweep != db.SweepInterrupted {
				t.Errorf("state %q, want db.SweepInterrupted", hs[0].LastSweep)
			}
		})
	}
}

package app

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"cnntime/predictor/hw"
)

// Another program's write to the cache (a machine added as `cnntime machine add` adds
// it) is seen within a few looks; a read is not a change.
func TestWatchCacheSeesAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	mine, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan struct{}, 8)
	go WatchCache(ctx, path, 20*time.Millisecond, func() { changes <- struct{}{} })

	// Reads change nothing.
	if _, err := Machines(ctx, mine); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("a read was taken for a change")
	case <-time.After(200 * time.Millisecond):
	}

	other, err := OpenCache(path) // another process's handle
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	m := hw.Machine{ID: "user/workstation", Provider: "user", Instance: "workstation", GPUID: "t4", GPUCount: 1}
	if err := other.PutUserMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not see a machine added by another handle")
	}
	ms, err := Machines(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range ms {
		found = found || x.ID == m.ID
	}
	if !found {
		t.Error("the machine the other handle added is not listed")
	}
}

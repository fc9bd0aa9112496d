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
	from := StampCache(path)
	go watchFrom(ctx, path, 20*time.Millisecond, from, func() { changes <- struct{}{} })

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

// The backend's watch reloads the engine after another program's write, so a machine
// it added can be predicted; it lets a change pass while busy, and ends with the backend.
func TestBackendWatchReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	b, err := OpenEngineBackend(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	busy := make(chan bool, 1)
	busy <- false
	isBusy := func() bool { v := <-busy; busy <- v; return v }
	reloaded := make(chan struct{}, 8)
	b.Watch(context.Background(), isBusy, func() { reloaded <- struct{}{} }, func(err error) { t.Error(err) })

	other, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	m := hw.Machine{ID: "user/box", Provider: "user", Instance: "box", GPUID: "t4", GPUCount: 1, PriceUSDPerHour: 0.3}
	if err := other.PutUserMachine(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	// Opening the other handle may write too: reloads come until one has the machine.
	s := DefaultSessionSettings()
	s.Models, s.Machines = []string{"resnet18"}, []string{m.ID}
	deadline := time.After(10 * time.Second)
	for predicted := false; !predicted; {
		select {
		case <-reloaded:
			curves, err := b.PredictCurves(context.Background(), s)
			predicted = err == nil && len(curves) == 1
		case <-deadline:
			t.Fatal("no reload brought the machine another program added")
		}
	}
	for len(reloaded) > 0 {
		<-reloaded
	}

	// Busy (a sweep of this window's): the change passes without a reload.
	<-busy
	busy <- true
	if err := other.RemoveUserMachine(context.Background(), m.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
		t.Error("reloaded while busy")
	case <-time.After(3 * DefaultCacheWatch / 2):
	}
	<-busy
	busy <- false
	b.Close()
	if err := other.PutUserMachine(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
		t.Error("reloaded after the backend closed")
	case <-time.After(3 * DefaultCacheWatch / 2):
	}
}

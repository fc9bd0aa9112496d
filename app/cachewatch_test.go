package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	b.Watch(context.Background(), isBusy, func() { reloaded <- struct{}{} }, func(err error) { t.Error(err) }, func(string) {})

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

// The window's cache deleted, then created again by another program, then replaced by
// a backup restored with mv: the watch says each in a sentence, and the window reads the
// file that is at the path now; the restored backup keeps its own content, and what the
// window had written to the file it replaced is saved beside it.
func TestBackendWatchFollowsADeletedAndReplacedCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.db")
	b, err := OpenEngineBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	notices := make(chan string, 8)
	reloaded := make(chan struct{}, 64)
	b.Watch(ctx, func() bool { return false }, func() { reloaded <- struct{}{} }, func(err error) { t.Error(err) },
		func(msg string) { notices <- msg })
	wait := func(what string) string {
		t.Helper()
		select {
		case msg := <-notices:
			return msg
		case <-time.After(20 * time.Second):
			t.Fatalf("the watch said nothing of the cache %s", what)
		}
		return ""
	}
	hasMachine := func(id string) bool {
		ms, err := b.MachineChoices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.ID == id {
				return true
			}
		}
		return false
	}
	machine := func(id string) hw.Machine {
		return hw.Machine{ID: "user/" + id, Provider: "user", Instance: id, GPUID: "t4", GPUCount: 1, PriceUSDPerHour: 0.3}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if msg := wait("deleted"); !strings.Contains(msg, "was deleted") {
		t.Errorf("after the delete the watch said %q", msg)
	}
	other, err := OpenCache(path) // another program makes a new cache there
	if err != nil {
		t.Fatal(err)
	}
	if err := other.PutUserMachine(ctx, machine("recreated")); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if msg := wait("created again"); !strings.Contains(msg, "was created again: the window now reads the new file") {
		t.Errorf("after the new cache the watch said %q", msg)
	}
	for deadline := time.After(20 * time.Second); !hasMachine("user/recreated"); {
		select {
		case <-reloaded:
		case <-deadline:
			t.Fatal("the window does not read the cache created again")
		}
	}

	// The window writes, then a backup is restored over its cache.
	if err := b.DB().PutUserMachine(ctx, machine("window")); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	bk, err := OpenCache(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.PutUserMachine(ctx, machine("backup")); err != nil {
		t.Fatal(err)
	}
	bk.Close()
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	rescue := filepath.Join(dir, "cache.rescued-1.db")
	if msg := wait("replaced"); !strings.Contains(msg, "was replaced by another file: the window now reads the new file") || !strings.Contains(msg, rescue) {
		t.Errorf("after the restore the watch said %q, want it to say so and name %s", msg, rescue)
	}
	for deadline := time.After(20 * time.Second); !hasMachine("user/backup"); {
		select {
		case <-reloaded:
		case <-deadline:
			t.Fatal("the window does not read the restored backup")
		}
	}
	if hasMachine("user/window") {
		t.Error("the restored backup shows the machine the window wrote to the file it replaced")
	}
	for _, f := range []struct {
		path    string
		has     string
		hasNone string
	}{{path, "user/backup", "user/window"}, {rescue, "user/window", "user/backup"}} {
		d, err := OpenCache(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if problems, err := d.Check(ctx); err != nil || len(problems) > 0 {
			t.Errorf("%s: %v %v", f.path, problems, err)
		}
		ms, err := d.UserMachines(ctx)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, m := range ms {
			ids[m.ID] = true
		}
		if !ids[f.has] || ids[f.hasNone] {
			t.Errorf("%s holds %v, want %s and not %s", f.path, ids, f.has, f.hasNone)
		}
	}
}

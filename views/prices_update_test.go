package views

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"cnntime/app/prices"
)

// skyPilotFixture is app's SkyPilot catalog in its real v7 layout.
var skyPilotFixture = filepath.Join("..", "app", "prices", "testdata", "skypilot-catalog", "catalogs", "v7")

// TestUpdatePricesThroughTheWindow runs File → Update prices from SkyPilot… against a
// catalog served here: the confirmation names the address, Download stores every
// cloud's prices and lists the new machines; a download still running when Cancel is
// pressed stops and changes nothing; File → Import prices… of a file that is not a
// catalog is an error dialog, and of a cloud's vms.csv imports it.
func TestUpdatePricesThroughTheWindow(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	hold := make(chan struct{})
	var stalled atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stalled.Load() { // a download that does not come until it is cancelled
			select {
			case <-r.Context().Done():
			case <-hold:
			}
			return
		}
		http.ServeFile(w, r, filepath.Join(skyPilotFixture, strings.TrimPrefix(r.URL.Path, "/catalogs/v7/")))
	}))
	defer srv.Close()
	defer close(hold)
	t.Setenv(prices.URLEnv, srv.URL+"/catalogs/v7")

	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: filepath.Join(t.TempDir(), "cache.db")})
		mw.Window.Resize(fyne.NewSize(1400, 900))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(func() { mw.Session.Close(); mw.Backend.Close() })
	ctx := context.Background()
	if err := mw.Session.Wait(ctx); err != nil { // the first prediction's status comes and goes first
		t.Fatal(err)
	}
	before, err := mw.Session.Machines(ctx)
	if err != nil {
		t.Fatal(err)
	}

	clickMenu(t, mw, "Update prices from SkyPilot…")
	if text := dialogText(t, mw); !strings.Contains(text, srv.URL+"/catalogs/v7") || !strings.Contains(text, "aws, azure, gcp, lambda, runpod") {
		t.Errorf("the confirmation says:\n%s\nwant the catalog's address and the clouds", text)
	}
	tapDialogButton(t, mw, "Download")
	if text := waitDialog(t, mw, "Prices updated"); !strings.Contains(text, "aws as of ") || !strings.Contains(text, "runpod as of ") {
		t.Errorf("after the update the dialog says:\n%s\nwant every cloud's date", text)
	}
	tapDialogButton(t, mw, "OK")
	if err := mw.Session.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := mw.Session.Machines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) {
		t.Errorf("machines after the update: %d, before: %d; want the catalog's instance types added", len(after), len(before))
	}

	// Cancel while the server holds the download: nothing changes.
	stalled.Store(true)
	clickMenu(t, mw, "Update prices from SkyPilot…")
	tapDialogButton(t, mw, "Download")
	waitStatus(t, mw, "Downloading prices")
	tapDialogButton(t, mw, "Cancel")
	waitStatus(t, mw, "Prices: cancelled")
	if again, err := mw.Session.Machines(ctx); err != nil || len(again) != len(after) {
		t.Errorf("a cancelled update changed the machines: %d, %v; want %d", len(again), err, len(after))
	}
	stalled.Store(false)

	// Import: a file that is not a catalog is refused with what to pick.
	bad := filepath.Join(t.TempDir(), "aws", "vms.csv")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("name,price\nx,abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(mw, func() { mw.importPrices(bad) })
	if text := waitDialog(t, mw, "not a SkyPilot catalog"); !strings.Contains(text, "nothing was imported") {
		t.Errorf("importing a file that is not a catalog: the dialog says:\n%s", text)
	}
	tapDialogButton(t, mw, "OK")
	onUI(mw, func() { mw.importPrices(filepath.Join(skyPilotFixture, "lambda", "vms.csv")) })
	if text := waitDialog(t, mw, "Prices updated"); !strings.Contains(text, "lambda as of ") {
		t.Errorf("after importing lambda's vms.csv the dialog says:\n%s", text)
	}
	tapDialogButton(t, mw, "OK")

	// Offline: the CLI's sentence, and where to go in the window instead.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(prices.URLEnv, "http://"+l.Addr().String()+"/catalogs/v7")
	l.Close() // nothing answers there
	clickMenu(t, mw, "Update prices from SkyPilot…")
	tapDialogButton(t, mw, "Download")
	if text := waitDialog(t, mw, "seems to be offline"); !strings.Contains(text, "File › Import prices") {
		t.Errorf("offline, the dialog says:\n%s\nwant the window's way to import a copy", text)
	}
}

// waitDialog waits until the top dialog shows want and returns all its text.
func waitDialog(t *testing.T, mw *MainWindow, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		onUI(mw, func() {
			got = ""
			if top := mw.Window.Canvas().Overlays().Top(); top != nil {
				got = dialogText(t, mw)
			}
		})
		if strings.Contains(got, want) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no dialog says %q; the top one says %q", want, got)
	return ""
}

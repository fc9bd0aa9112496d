package db

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/measure"
)

// exportChildDB and exportChildTo make this test binary a child that exports the cache
// it names to a file, prints "copied TEMP" once the copy is in its temporary file, and
// waits there to be killed.
const (
	exportChildDB = "CNNTIME_DB_TEST_EXPORT_CHILD_DB"
	exportChildTo = "CNNTIME_DB_TEST_EXPORT_CHILD_TO"
)

func exportChild(path, to string) int {
	d, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testHookExportCopied = func(temp string) {
		fmt.Println("copied", temp)
		time.Sleep(time.Hour) // until killed
	}
	if _, err := d.ExportCache(context.Background(), to, ExportFilter{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 1
}

// startExportChild starts an export of the cache at path to `to` in a child process and
// returns it, stopped with its copy made, with the temporary file it fills.
func startExportChild(t *testing.T, path, to string) (*exec.Cmd, string) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), exportChildDB+"="+path, exportChildTo+"="+to)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	temp, ok := strings.CutPrefix(strings.TrimSpace(line), "copied ")
	if err != nil || !ok {
		t.Fatalf("the export child said %q, %v", line, err)
	}
	return child, temp
}

// A killed `cache export` leaves its partial file beside the destination. While the
// export lives nothing touches its file (another export to the same place, cache info);
// once it is dead, cache info names the partial file, and the next export to the same
// place removes it (with its journal) and says so; then nothing is named any more.
func TestAKilledExportsPartialFileIsNamedThenRemoved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := seededCache(t, dir)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(out, "colleague.db")
	child, temp := startExportChild(t, path, dest)
	if filepath.Dir(temp) != out || !strings.HasPrefix(filepath.Base(temp), ".colleague.db.") {
		t.Fatalf("the export's temporary file is %s", temp)
	}

	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if info, err := d.Info(ctx); err != nil || len(info.InterruptedExports) != 0 {
		t.Errorf("while the export runs, cache info names %+v (%v)", info.InterruptedExports, err)
	}
	// A second export to the same place while the first lives: it leaves the first's file.
	rep, err := d.ExportCache(ctx, dest, ExportFilter{})
	if err != nil || len(rep.RemovedLeftovers) != 0 {
		t.Fatalf("a second export beside a live one: %+v, %v", rep, err)
	}
	if _, err := os.Stat(temp); err != nil {
		t.Fatalf("another export removed a live export's file: %v", err)
	}
	os.Remove(dest)

	child.Process.Kill() // SIGKILL: no chance to clean up
	child.Wait()
	if err := os.WriteFile(temp+"-journal", []byte("journal"), 0o644); err != nil { // as SQLite may leave one
		t.Fatal(err)
	}
	info, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []InterruptedExport{{To: dest, Partial: temp}}
	if !slices.Equal(info.InterruptedExports, want) {
		t.Errorf("after the export was killed, cache info names %+v, want %+v", info.InterruptedExports, want)
	}
	rep, err = d.ExportCache(ctx, dest, ExportFilter{})
	if err != nil || !slices.Equal(rep.RemovedLeftovers, []string{temp}) || rep.Measurements != 2 {
		t.Errorf("the next export to the same place: %+v, %v; want it to remove %s", rep, err, temp)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "colleague.db" {
		t.Errorf("the destination's folder holds %v, want colleague.db alone", entries)
	}
	if info, err := d.Info(ctx); err != nil || len(info.InterruptedExports) != 0 {
		t.Errorf("after the leftover was removed, cache info names %+v (%v)", info.InterruptedExports, err)
	}
	if marks, _ := filepath.Glob(path + ".export-*.lock"); len(marks) != 0 {
		t.Errorf("marks left beside the cache: %v", marks)
	}
}

// The next export from the cache, to anywhere, clears the marks of its dead exports and
// the partial files they left.
func TestAnExportClearsTheCachesDeadExports(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := seededCache(t, dir)
	child, temp := startExportChild(t, path, filepath.Join(dir, "a.db"))
	child.Process.Kill()
	child.Wait()
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.PutMeasurements(ctx, []measure.Measurement{kernel("cuda:A", "conv/1", 128, measure.Forward, 5)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExportCache(ctx, filepath.Join(dir, "b.db"), ExportFilter{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("the dead export's partial file %s: %v", temp, err)
	}
	if marks, _ := filepath.Glob(path + ".export-*.lock"); len(marks) != 0 {
		t.Errorf("marks left beside the cache: %v", marks)
	}
}

package db

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"cnntime/predictor/measure"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Importing someone else's cache must not leave a log or log index owned by the
// importer next to it: its owner could no longer write it ("attempt to write a
// readonly database"). The import reads the committed state in each case.
func TestImportCacheLeavesNothingNextToTheSource(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// make writes a cache holding n measurements at path; the returned DB (or nil) is
		// the owner's handle, kept open through the import.
		make  func(t *testing.T, path string) *DB
		wantN int
	}{
		{"closed cache", func(t *testing.T, path string) *DB {
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.PutMeasurements(ctx, recoveryMeasurements(7)); err != nil {
				t.Fatal(err)
			}
			d.Close()
			return nil
		}, 7},
		{"cache its owner has open, commits in the log", func(t *testing.T, path string) *DB {
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			if err := d.PutMeasurements(ctx, recoveryMeasurements(9)); err != nil {
				t.Fatal(err)
			}
			return d
		}, 9},
		{"killed writer's log without its index", func(t *testing.T, path string) *DB {
			killedCache(t, path, true, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(11)); err != nil {
					t.Fatal(err)
				}
			})
			os.Remove(path + "-shm")
			wantUncheckpointed(t, path, applicationID)
			return nil
		}, 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "theirs.db")
			owner := tc.make(t, src)
			before := dirNames(t, dir)
			mainHash := fileHash(t, src)
			d := openTemp(t)
			rep, err := d.Import(ctx, src)
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if rep.Measurements.Added != tc.wantN {
				t.Errorf("Import added %d measurements, want %d", rep.Measurements.Added, tc.wantN)
			}
			if after := dirNames(t, dir); !slices.Equal(after, before) {
				t.Errorf("the source's directory held %q before the import and %q after", before, after)
			}
			if fileHash(t, src) != mainHash {
				t.Errorf("the source file was changed")
			}
			if owner != nil { // the owner goes on writing
				if err := owner.PutMeasurements(ctx, recoveryMeasurements(20)); err != nil {
					t.Errorf("the owner's write after the import: %v", err)
				}
			}
		})
	}
}

// unprivilegedChildEnv names the function a child process of this test binary runs as
// a user who may not write the test's directories (see runUnprivileged).
const unprivilegedChildEnv = "CNNTIME_DB_TEST_UNPRIVILEGED"

// unprivilegedChildren are the functions runUnprivileged can run; each reads its
// arguments from the environment, prints what the parent checks, and returns the exit code.
var unprivilegedChildren = map[string]func() int{
	"read": func() int { // opens the cache, reads it, tries to write it
		d, err := Open(os.Getenv("CNNTIME_DB_TEST_SRC"))
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		defer d.Close()
		info, err := d.Info(context.Background())
		if err != nil {
			fmt.Println("info:", err)
			return 1
		}
		steps, err := d.Steps(context.Background(), StepFilter{})
		fmt.Printf("read-only %v, %d measurements, %d steps, %v\n", d.ReadOnly(), info.Measurements, len(steps), err)
		werr := d.PutSteps(context.Background(), []measure.Step{{DeviceKey: "gpu:t4", Model: "m", Batch: 1,
			Precision: measure.FP32, Framework: "f", Source: "s", MedianMS: 1, Status: measure.OK}})
		fmt.Println("write:", werr)
		_, ierr := d.ImportCSV(context.Background(), strings.NewReader("gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source\nt4,m,1,fp32,f,1,,ok,s\n"), "in.csv")
		fmt.Println("import:", ierr)
		return 0
	},
	"import": func() int {
		d, err := Open(os.Getenv("CNNTIME_DB_TEST_DST"))
		if err != nil {
			fmt.Println(err)
			return 1
		}
		defer d.Close()
		rep, err := d.Import(context.Background(), os.Getenv("CNNTIME_DB_TEST_SRC"))
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("added %d\n", rep.Measurements.Added)
		return 0
	},
}

// runUnprivileged runs child in a child process that may read but not write readOnly
// (a directory, made read-only for the test): as this user where it is not root (which
// the directory's mode then stops), or as nobody (uid 65534) where it is root, which
// writes anywhere. env is added to the child's environment. It returns the child's
// combined output and its error.
func runUnprivileged(t *testing.T, child, readOnly string, env ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if os.Geteuid() == 0 {
		// nobody must reach the binary: copy it where every user can run it.
		bin, err := os.MkdirTemp("", "cnntime-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(bin) })
		if err := os.Chmod(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Path = filepath.Join(bin, "db.test")
		copyExecutable(t, exe, cmd.Path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := os.Chmod(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(readOnly, 0o755) })
	cmd.Env = append(os.Environ(), unprivilegedChildEnv+"="+child, "TMPDIR="+os.TempDir())
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// openToEveryone makes dir and the directories above it up to the temporary directory
// reachable by every user (t.TempDir makes them private).
func openToEveryone(t *testing.T, dir string) {
	t.Helper()
	for d := dir; strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
}

// A cache in a directory the importer may not write is imported like any other.
func TestImportCacheFromReadOnlyDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	ctx := context.Background()
	srcDir, dstDir := t.TempDir(), t.TempDir()
	openToEveryone(t, srcDir)
	openToEveryone(t, dstDir)
	src := filepath.Join(srcDir, "theirs.db")
	d, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.PutMeasurements(ctx, recoveryMeasurements(5)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	os.Chmod(src, 0o644)
	before := dirNames(t, srcDir)
	out, err := runUnprivileged(t, "import", srcDir,
		"CNNTIME_DB_TEST_SRC="+src, "CNNTIME_DB_TEST_DST="+filepath.Join(dstDir, "mine.db"))
	if err != nil || !strings.Contains(out, "added 5") {
		t.Errorf("import from a read-only directory: %v\n%s", err, out)
	}
	if after := dirNames(t, srcDir); !slices.Equal(after, before) {
		t.Errorf("the source's directory held %q before the import and %q after", before, after)
	}
}

// A cache in a folder this user may not write opens for reading (what predict, export
// and cache info need) without writing anything; a write says why it cannot be made.
// One of an older schema, which only an upgrade that writes could read, says what to do.
func TestReadOnlyCacheIsReadWithoutWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	ctx := context.Background()
	dir := t.TempDir()
	openToEveryone(t, dir)
	path := filepath.Join(dir, "shared.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.PutMeasurements(ctx, recoveryMeasurements(3)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	os.Chmod(path, 0o644)
	before := dirNames(t, dir)
	out, err := runUnprivileged(t, "read", dir, "CNNTIME_DB_TEST_SRC="+path)
	for _, want := range []string{"read-only true, 3 measurements, 0 steps, <nil>",
		"write: save 1 step measurements: cache " + path + " is read-only",
		"import: import in.csv: cache " + path + " is read-only"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("reading a read-only cache: %v\n%s\nwant %q", err, out, want)
		}
	}
	if after := dirNames(t, dir); !slices.Equal(after, before) {
		t.Errorf("the read-only folder held %q before and %q after", before, after)
	}

	old := filepath.Join(dir, "old.db")
	os.Chmod(dir, 0o755)
	o, err := openUnmigrated(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.migrateTo(ctx, latestVersion-1); err != nil {
		t.Fatal(err)
	}
	o.Close()
	os.Chmod(old, 0o644)
	out, _ = runUnprivileged(t, "read", dir, "CNNTIME_DB_TEST_SRC="+old)
	if !strings.Contains(out, "was written by an older cnntime") || !strings.Contains(out, "copy it to a folder of yours") {
		t.Errorf("an old cache in a read-only folder: %s", out)
	}
}

package heldtemp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// holderChildDest makes this test binary a child that creates a temporary file beside
// the destination it names, prints its name, and waits to be killed.
const holderChildDest = "CNNTIME_HELDTEMP_TEST_CHILD_DEST"

func TestMain(m *testing.M) {
	if dest := os.Getenv(holderChildDest); dest != "" {
		f, err := Create(dest, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(f.Name)
		time.Sleep(time.Hour) // until killed (select{} would end as a deadlock)
	}
	os.Exit(m.Run())
}

// startHolder starts a child process holding a temporary file beside dest and returns
// it with the file's name.
func startHolder(t *testing.T, dest string) (*exec.Cmd, string) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), holderChildDest+"="+dest)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child said %q: %v", line, err)
	}
	return child, strings.TrimSpace(line)
}

// A temporary file whose writer lives is never stale, not even to its own process; once
// the writer is killed it is, and RemoveStale removes it with its journals and leaves
// everything else beside the destination alone.
func TestLeftoversOfDeadWritersAreRemovedLiveOnesKept(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.db")
	_, liveName := startHolder(t, dest)
	dead, deadName := startHolder(t, dest)
	own, err := Create(dest, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Release()
	others := []string{"out.db", ".out.db.tmp", ".out.db.x-y.tmp", ".other.db.abc.tmp", ".out.db.abc.tmp.keep", "notes.txt"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(deadName+"-journal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Stale(dest); len(got) != 0 {
		t.Errorf("while every writer lives, Stale = %v", got)
	}
	if got := RemoveStale(dest, "-journal"); len(got) != 0 {
		t.Errorf("while every writer lives, RemoveStale removed %v", got)
	}

	dead.Process.Kill()
	dead.Wait()
	if got := Stale(dest); !slices.Equal(got, []string{deadName}) {
		t.Errorf("after the writer of %s was killed, Stale = %v", deadName, got)
	}
	if got := RemoveStale(dest, "-journal"); !slices.Equal(got, []string{deadName}) {
		t.Errorf("RemoveStale removed %v, want %s", got, deadName)
	}
	for _, gone := range []string{deadName, deadName + "-journal"} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	for _, kept := range append([]string{liveName, own.Name}, others...) {
		if !filepath.IsAbs(kept) {
			kept = filepath.Join(dir, kept)
		}
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
}

// Create makes a new file each time, with the umask's permissions, held until Release.
func TestCreateHoldsUntilRelease(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "x.csv")
	a, err := Create(dest, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(dest, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name == b.Name || !strings.HasPrefix(filepath.Base(a.Name), ".x.csv.") || !strings.HasSuffix(a.Name, ".tmp") {
		t.Errorf("names %s and %s", a.Name, b.Name)
	}
	if st, err := os.Stat(a.Name); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
	if IsStale(a.Name) {
		t.Error("a held file is stale")
	}
	a.Release()
	if !IsStale(a.Name) {
		t.Error("a released file is not stale")
	}
	b.Release()
}

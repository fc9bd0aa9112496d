package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Inputs are read bounded, their start checked first: 300 MB of NULs as DeepBench's CSV
// (1.7 GB of memory before it said the header was wrong), --convergence /dev/zero (it
// grew to 24 GB until the OOM killer came), a 400 MB custom model file (read whole).
// Each is refused with a sentence, without reading it all.
func TestInputsAreReadBounded(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name, start string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(start)
		f.Truncate(size) // NULs on no disk
		f.Close()
		return p
	}
	nuls := sparse("nuls.csv", "", 300<<20)
	model := sparse("big.json", `{"name": "big", "layers": [`, 400<<20)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"calibrate", "--deepbench", nuls}, 1, nuls + " is larger than 64 MB, more than a DeepBench results CSV may be"},
		{[]string{"calibrate", "--convergence", "/dev/zero"}, 1, "/dev/zero is not a CSV of epochs-to-target figures: its first line holds the control byte 0x00"},
		{[]string{"predict", "--model", model, "--gpu", "t4", "--batch", "8"}, 2, model + " is larger than 16 MB, more than a custom model file (JSON) may be"},
		{[]string{"model", "import", model}, 1, model + " is larger than 16 MB"},
	} {
		done := make(chan string, 1)
		go func() {
			var out, errOut bytes.Buffer
			code := RunCLI(context.Background(), append([]string{"--db", filepath.Join(dir, "c.db")}, c.args...), nil, &out, &errOut)
			done <- string(rune('0'+code)) + " " + errOut.String()
		}()
		select {
		case got := <-done:
			if !strings.HasPrefix(got, string(rune('0'+c.code))+" ") || !strings.Contains(got, c.want) {
				t.Errorf("%s: %q; want exit %d and %q", strings.Join(c.args, " "), got, c.code, c.want)
			}
		case <-time.After(120 * time.Second):
			t.Fatalf("%s: still reading after 2 minutes", strings.Join(c.args, " "))
		}
	}
}

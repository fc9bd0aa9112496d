package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistyped --db makes no folder and no cache for a command that only reads one
// (predict made both, and answered from the empty cache without a word): predicting
// goes on without a cache and says so when even the folder is missing; a command that
// has nothing to do without a cache says there is none.
func TestAMistypedDBCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "cnntme", "cahce.db")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"predict", "--model", "resnet18", "--gpu", "t4", "--batch", "32"}, 0, "note: no cache at " + typo + ", nor its folder"},
		{[]string{"best", "--model", "resnet18", "--gpu", "t4"}, 0, "note: no cache at"},
		{[]string{"explain", "--model", "resnet18", "--gpu", "t4", "--batch", "32"}, 0, "note: no cache at"},
		{[]string{"machines", "--provider", "aws"}, 0, ""},
		{[]string{"models"}, 0, ""},
		{[]string{"cache", "info"}, 1, "no cache at " + typo + ": nothing to describe"},
		{[]string{"cache", "check"}, 1, "no cache at " + typo + ": nothing to check"},
		{[]string{"cache", "export", filepath.Join(dir, "out.db")}, 1, "nothing to export"},
		{[]string{"validate", "--table", "steps"}, 1, "no cache at"},
	} {
		var out, errOut bytes.Buffer
		code := RunCLI(context.Background(), append([]string{"--db", typo}, c.args...), nil, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.says) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut.String(), c.code, c.says)
		}
		if _, err := os.Stat(filepath.Dir(typo)); err == nil {
			t.Fatalf("%s made the folder %s", strings.Join(c.args, " "), filepath.Dir(typo))
		}
	}
}

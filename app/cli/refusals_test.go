package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Command lines that panicked, did nothing with exit 0, misled or ran for minutes are
// refused, or answered, with a sentence: an empty machine list as --model , is, a
// provider of the user's with no machines yet, a name of letters outside ASCII, a Slurm
// time limit of millennia, an empty --table; and no control character of an argument
// reaches the terminal raw.
func TestRefusalsAndAnswers(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"explain", "--model", "resnet18", "--gpu", ",", "--batch", "32"}, 2, `--gpu "," names nothing`},
		{[]string{"explain", "--model", "resnet18", "--machine", " , ", "--batch", "32"}, 2, `--machine " , " names nothing`},
		{[]string{"predict", "--model", "resnet18", "--machine", ","}, 2, `--machine "," names nothing`},
		{[]string{"best", "--model", "resnet18", "--gpu", ",,"}, 2, `--gpu ",," names nothing`},
		{[]string{"export", "--model", "resnet18", "--machine", ",", "--csv", filepath.Join(dir, "r.csv")}, 2, `--machine "," names nothing`},
		{[]string{"machines", "--provider", "user"}, 0, "no machines of your own yet: add one with 'cnntime machine add"},
		{[]string{"machines", "--provider", "usr"}, 2, `no machines of provider "usr" (did you mean "user"?)`},
		{[]string{"machine", "add", "--name", "é名", "--gpu", "t4", "--price", "0.5"}, 0, "added user/é名"},
		{[]string{"predict", "--model", "resnet18", "--machine", "user/é名", "--batch", "32"}, 0, "user/é名"},
		{[]string{"machine", "add", "--name", "-- _", "--gpu", "t4", "--price", "0.5"}, 2, "has no letter or digit"},
		{[]string{"cluster", "slurm", "--models", "resnet18", "--batches", "1-4", "--time", "1514010609-05:43:00", "--out", filepath.Join(dir, "s.sbatch")}, 2,
			"--time 1514010609-05:43:00 is 1514010609 days, more than a job may ask for (365 days)"},
		{[]string{"launch", "slurm", "--model", "resnet18", "--machine", "aws/p3.2xlarge", "--batch", "64", "--epochs", "100000", "--out", filepath.Join(dir, "l.sbatch")}, 2,
			"longer than the 365 days a time limit here may ask"},
		{[]string{"validate", "--table", ""}, 2, `--table "" names no table`},
		{[]string{"predict", "--mo\ndel", "x"}, 2, `flag provided but not defined: -mo\x0adel`},
		{[]string{"cache", "import", filepath.Join(dir, "no\nfile")}, 1, `no\x0afile: no such file`},
	} {
		var out, errOut bytes.Buffer
		code := RunCLI(context.Background(), append([]string{"--db", db}, c.args...), nil, &out, &errOut)
		got := out.String() + errOut.String()
		if code != c.code || !strings.Contains(got, c.want) || strings.Contains(got, "internal error") {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", c.args, code, got, c.code, c.want)
		}
		if strings.ContainsAny(errOut.String(), "\x1b\x07") || strings.Contains(errOut.String(), "no\nfile") || strings.Contains(errOut.String(), "mo\ndel") {
			t.Errorf("%q: stderr holds a raw control character of an argument: %q", c.args, errOut.String())
		}
	}
}

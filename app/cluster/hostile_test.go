package cluster

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileModels are model names (custom model files, as the nodes see them) that a
// careless script would run as commands or a spreadsheet as formulas.
var hostileModels = []string{`a'b; rm -rf /`, `=HYPERLINK("http://x","y")`, "-y", "$(touch PWNED) `touch PWNED`", "normal"}

// Each name is written as one single-quoted shell word, in the Slurm script and in the
// Kubernetes Job's command alike.
func TestHostileNamesAreQuoted(t *testing.T) {
	want := map[string]string{
		`a'b; rm -rf /`:                `--models 'a'\''b; rm -rf /' --batches`,
		`=HYPERLINK("http://x","y")`:   `--models '=HYPERLINK("http://x","y")' --batches`,
		"-y":                           `--models '-y' --batches`,
		"$(touch PWNED) `touch PWNED`": "--models '$(touch PWNED) `touch PWNED`' --batches",
		"normal":                       `--models 'normal' --batches`,
	}
	sw := Sweep{Models: hostileModels, Batches: []int{1, 2}, Device: "cpu"}
	s, err := Slurm{Sweep: sw, Shards: "/tmp/a'b; rm -rf /", Binary: "/opt/x'y; rm -rf ~/cnntime"}.Script()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hostileModels {
		if !strings.Contains(s, "\tsweep "+want[m]) {
			t.Errorf("Slurm script lacks %q:\n%s", want[m], s)
		}
	}
	for _, line := range []string{
		`cnntime=${CNNTIME:-'/opt/x'\''y; rm -rf ~/cnntime'}` + "\n",
		`shards='/tmp/a'\''b; rm -rf /'` + "\n",
		`#   cnntime cache import '/tmp/a'\''b; rm -rf /'/shard-*.db` + "\n", // a comment people paste
	} {
		if !strings.Contains(s, line) {
			t.Errorf("Slurm script lacks %q:\n%s", line, s)
		}
	}

	y, err := K8s{Sweep: sw, Image: "registry.example.com/cnntime:1.0"}.YAML()
	if err != nil {
		t.Fatal(err)
	}
	const prefix = `          command: ["/bin/sh", "-c", `
	i := strings.Index(y, prefix)
	if i < 0 {
		t.Fatalf("no command line:\n%s", y)
	}
	line := y[i+len(prefix):]
	line = line[:strings.Index(line, "\n")]
	var cmd string
	if err := json.Unmarshal([]byte(strings.TrimSuffix(line, "]")), &cmd); err != nil {
		t.Fatalf("the command is not one JSON (YAML) string: %v\n%s", err, line)
	}
	for _, m := range hostileModels {
		if !strings.Contains(cmd, "\tsweep "+want[m]) {
			t.Errorf("Kubernetes command lacks %q:\n%s", want[m], cmd)
		}
	}
}

// The Slurm script, run by bash as a task would be, hands every hostile name, the
// shard folder and the binary's path to cnntime as single arguments and runs nothing
// they contain. (The payloads here only touch a file.)
func TestSlurmScriptRunsHostileNamesAsArguments(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	evil := "a'b; touch PWNED; $(touch PWNED) `touch PWNED` =HYPERLINK(\"x\")"
	bin := filepath.Join(dir, evil, "cnntime")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in records its arguments, one per line, and touches the shard.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$LOG\"\necho --- >> \"$LOG\"\ntouch \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	models := []string{"a'b; touch PWNED", `=HYPERLINK("http://x","y")`, "-y", "$(touch PWNED) `touch PWNED`"}
	shards := filepath.Join(dir, "shards "+evil)
	s, err := Slurm{Sweep: Sweep{Models: models, Batches: []int{4}, Device: "cpu"}, Tasks: 1, Shards: shards, Binary: bin}.Script()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log")
	cmd := exec.Command(bash, "-c", s)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_JOB_ID=9", "SLURM_ARRAY_TASK_ID=0", "LOG="+log, "CNNTIME=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s\n%s", err, out, s)
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the stand-in cnntime did not run: %v\n%s", err, out)
	}
	runs := strings.Split(strings.TrimSuffix(string(got), "---\n"), "---\n")
	if len(runs) != len(models) {
		t.Fatalf("%d sweeps ran, want %d:\n%s", len(runs), len(models), got)
	}
	for i, r := range runs {
		args := strings.Split(strings.TrimSuffix(r, "\n"), "\n")
		if len(args) != 9 || args[0] != "--db" || !strings.HasPrefix(args[1], shards+"/shard-9-0-") || args[3] != "--models" || args[4] != models[i] {
			t.Errorf("sweep %d got the arguments %q; want --db in %q and --models %q", i, args, shards, models[i])
		}
	}
	for _, d := range []string{dir, work, shards, filepath.Dir(bin)} {
		if _, err := os.Stat(filepath.Join(d, "PWNED")); err == nil {
			t.Errorf("a name ran as a command: %s/PWNED exists", d)
		}
	}
}

// ShellQuoteText reads back, in bash, as the very text it quotes, and writes no control
// character raw: a region from a price catalog with a line break never starts a line.
func TestShellQuoteTextRoundTripsWithoutRawControls(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{"us-east-1", "it's", "a\nb", "us\x1b[2J\a", `back\slash'`, "x\u2028y\u202e", "\u0085é名", "\n#SBATCH --partition=evil"} {
		q := ShellQuoteText(s)
		if strings.ContainsFunc(q, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x202e }) {
			t.Errorf("ShellQuoteText(%q) = %q holds a raw control character", s, q)
		}
		out, err := exec.Command(bash, "-c", "printf %s "+q).Output()
		if err != nil || string(out) != s {
			t.Errorf("bash reads ShellQuoteText(%q) = %s back as %q (%v)", s, q, out, err)
		}
	}
}

func TestCheckTime(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"", true}, {"90", true}, {"90:30", true}, {"02:00:00", true}, {"1-12", true}, {"1-12:30", true}, {"365-00:00:00", true},
		{"INFINITE", true}, {"unlimited", true},
		{"1514010609-05:43:00", false}, {"366-00:00:00", false}, {"525601", false}, {"8761:00:00", false},
		{"2h", false}, {"-1", false}, {"1:2:3:4", false},
	} {
		if err := CheckTime(c.v); (err == nil) != c.ok {
			t.Errorf("CheckTime(%q) = %v, want ok %v", c.v, err, c.ok)
		}
	}
}

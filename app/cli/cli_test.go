package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
)

// runCLI runs the CLI with a temporary cache and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--db", filepath.Join(t.TempDir(), "cache.db")}, args...)
	code = RunCLI(context.Background(), full, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCLIExitCodesAndOutput(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"help lists commands", []string{"help"}, 0, "version    print the version", ""},
		{"no command prints help", nil, 0, "usage: cnntime [--db PATH] [--json] COMMAND", ""},
		{"--help", []string{"--help"}, 0, "commands:", ""},
		{"version", []string{"version"}, 0, "cnntime " + app.Version + "\n", ""},
		{"--version", []string{"--version"}, 0, "cnntime " + app.Version, ""},
		{"help for a command", []string{"help", "version"}, 0, "usage: cnntime version [--json]", ""},
		{"unknown command suggests", []string{"verison"}, 2, "", `unknown command "verison" (did you mean "version"?)`},
		{"help for unknown command", []string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{"bad flag", []string{"version", "--frobnicate"}, 2, "", "flag provided but not defined: -frobnicate"},
		{"stray argument", []string{"version", "extra"}, 2, "", "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
		})
	}
}

// help COMMAND shows every command's usage and exits 0, a command whose flags belong
// to its actions (cluster slurm …) and help itself included.
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range Commands() {
		code, stdout, stderr := runCLI(t, "help", c.Name)
		if code != 0 || !strings.Contains(stdout, "usage: cnntime ") || stderr != "" {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q; want exit 0 and the usage on stdout", c.Name, code, stdout, stderr)
		}
	}
}

func TestVersionJSONIsStable(t *testing.T) {
	for _, args := range [][]string{{"--json", "version"}, {"version", "--json"}} {
		code, stdout, _ := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit status %d", args, code)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v: output is not JSON: %v\n%s", args, err, stdout)
		}
		if got["name"] != "cnntime" || got["version"] != app.Version || len(got) != 2 {
			t.Errorf("%v: got %v, want exactly name and version", args, got)
		}
	}
}

func TestParseGlobals(t *testing.T) {
	tests := []struct {
		args    []string
		db      string
		json    bool
		rest    []string
		wantErr bool
	}{
		{[]string{"--db", "x.db", "models"}, "x.db", false, []string{"models"}, false},
		{[]string{"--db=y.db", "--json", "models", "--json"}, "y.db", true, []string{"models", "--json"}, false},
		{[]string{"-db", "z.db"}, "z.db", false, nil, false},
		{[]string{"--db"}, "", false, nil, true},
		{[]string{"--db", "", "models"}, "", false, nil, true},
		{[]string{"--db=", "models"}, "", false, nil, true},
		{[]string{"--db", "  ", "models"}, "", false, nil, true},
		{nil, "", false, nil, false},
	}
	for _, tt := range tests {
		g, err := ParseGlobals(tt.args)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseGlobals(%q) error %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if g.DBPath != tt.db || g.JSON != tt.json || strings.Join(g.Rest, " ") != strings.Join(tt.rest, " ") {
			t.Errorf("ParseGlobals(%q) = %+v, want db %q json %v rest %q", tt.args, g, tt.db, tt.json, tt.rest)
		}
	}
}

func TestIsCLI(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--db", "x.db"}, false}, // the GUI with another cache
		{[]string{"version"}, true},
		{[]string{"--db", "x.db", "models"}, true},
		{[]string{"--db"}, true}, // a mistake the CLI reports
	}
	for _, tt := range tests {
		if got := IsCLI(tt.args); got != tt.want {
			t.Errorf("IsCLI(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestDefaultDBPathHonoursEnvironment(t *testing.T) {
	t.Setenv("CNNTIME_DB", "/tmp/elsewhere.db")
	if p, err := app.DefaultDBPath(); err != nil || p != "/tmp/elsewhere.db" {
		t.Errorf("DefaultDBPath() = %q, %v; want CNNTIME_DB's value", p, err)
	}
	t.Setenv("CNNTIME_DB", "")
	t.Setenv("XDG_CONFIG_HOME", "/tmp/cfg")
	if p, err := app.DefaultDBPath(); err != nil || p != filepath.Join("/tmp/cfg", "cnntime", "cache.db") {
		t.Errorf("DefaultDBPath() = %q, %v; want it under the config directory", p, err)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"resnet50", "resnet18", "vgg16", "mobilenet_v2"}
	tests := []struct{ in, want string }{
		{"resnet5", ` (did you mean "resnet50"?)`},
		{"VGG16", ` (did you mean "vgg16"?)`},
		{"mobilenetv2", ` (did you mean "mobilenet_v2"?)`},
		{"transformer", ""},
	}
	for _, tt := range tests {
		if got := app.Suggest(tt.in, names); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

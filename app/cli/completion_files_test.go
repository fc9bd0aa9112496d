package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Bash completes file names whole and as they are: "my model.onnx" is one name (it was
// offered as "my" and "model.onnx"), and a file named * is that file (it expanded into
// every file of the folder).
func TestBashCompletesFileNamesWhole(t *testing.T) {
	bash := needShell(t, "bash")
	script := completionScript(t, "bash")
	dir := t.TempDir()
	for _, name := range []string{"my model.onnx", "*", "a b.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		words []string
		want  string // the entries offered, each in brackets
	}{
		{[]string{"export", "--out", "my"}, "[my model.onnx]"},
		{[]string{"predict", "--model", "my"}, "[my model.onnx]"},
		{[]string{"cache", "import", ""}, "[*][a b.csv][my model.onnx]"},
		{[]string{"cache", "import", "*"}, "[*]"},
	} {
		q := completionQuery{words: c.words}
		line := "source " + shellQuote(script) + "\nCOMP_WORDS=(" + shellWordsOf(q) + "); COMP_CWORD=" + strconv.Itoa(len(c.words)) +
			"; COMPREPLY=(); _cnntime; printf '[%s]' \"${COMPREPLY[@]}\"; echo\n"
		cmd := exec.Command(bash, "--norc", "-c", line)
		cmd.Dir = dir
		cmd.Env = cnntimeOnPath(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.words, err, out)
		}
		if got := sortedEntries(strings.TrimSpace(string(out))); got != c.want {
			t.Errorf("cnntime %s<TAB> offers %s, want %s", strings.Join(c.words, " "), got, c.want)
		}
	}
}

// sortedEntries sorts "[a][b]" entries.
func sortedEntries(s string) string {
	if s == "" {
		return ""
	}
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "][")
	sort.Strings(parts)
	return "[" + strings.Join(parts, "][") + "]"
}

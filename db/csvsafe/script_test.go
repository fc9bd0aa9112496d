package csvsafe

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// scripts/pytorch_sweep.py writes step CSVs that cnntime imports; its csv_text must
// neutralise cells exactly as Text does, so that Untext reads every name back.
func TestPytorchSweepScriptAgrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	in := []string{"=1+2", "+x", "-y", "@z", "normal", "", "'", "'=q", "''", "'a", "-", "\tt", "a'b; rm -rf /", `=HYPERLINK("http://x")`}
	arg, _ := json.Marshal(in)
	script, _ := filepath.Abs(filepath.Join("..", "..", "scripts"))
	out, err := exec.Command(py, "-B", "-c",
		"import json, sys; sys.path.insert(0, sys.argv[1]); import pytorch_sweep as p; print(json.dumps([p.csv_text(s) for s in json.loads(sys.argv[2])]))",
		script, string(arg)).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(in) {
		t.Fatalf("python3 printed %s (%v)", out, err)
	}
	for i, s := range in {
		if got[i] != Text(s) {
			t.Errorf("pytorch_sweep.csv_text(%q) = %q, Text gives %q", s, got[i], Text(s))
		}
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPartialAnswers: a model that cannot take the run's input, or a machine the one
// batch does not fit, is said beside the others' answers, which are all printed (it
// used to fail the whole command).
func TestPartialAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		stdout    []string // each printed
		stderr    []string
		notStdout []string // none of these on stdout
	}{
		{"best, one model cannot take 32 px", []string{"best", "--model", "resnet18,inception_v3", "--machine", "aws/g4dn.xlarge", "--dataset", "cifar-10"},
			[]string{"resnet18      aws/g4dn.xlarge", "inception_v3  aws/g4dn.xlarge  1×t4  not predicted", "warning: inception_v3 on aws/g4dn.xlarge: not predicted: "}, nil, nil},
		{"predict --json, one model cannot take 32 px", []string{"predict", "--model", "resnet18,inception_v3", "--gpu", "t4", "--dataset", "cifar-10", "--batches", "64,128", "--json"},
			[]string{`"model": "resnet18"`}, []string{"warning: inception_v3 on gpu/t4: not predicted: "}, []string{`"model": "inception_v3"`}},
		{"predict --batch, one machine too small", []string{"predict", "--model", "resnet50", "--machine", "aws/p3.2xlarge,aws/p4d.24xlarge", "--batch", "512"},
			[]string{"aws/p3.2xlarge    1×v100-sxm2-16gb  224    512    out of memory", "aws/p4d.24xlarge", "warning: batch 512 of resnet50 does not fit in aws/p3.2xlarge's GPU memory"}, nil, nil},
	} {
		code, out, errOut := runPredictCLI(t, tc.args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.name, code, errOut)
			continue
		}
		for _, w := range tc.stdout {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", tc.name, w, out)
			}
		}
		for _, w := range tc.stderr {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errOut)
			}
		}
		for _, w := range tc.notStdout {
			if strings.Contains(out, w) {
				t.Errorf("%s: stdout has %q:\n%s", tc.name, w, out)
			}
		}
	}
	// best --json names the reason in the row.
	code, out, errOut := runPredictCLI(t, "best", "--model", "resnet18,inception_v3", "--gpu", "t4", "--dataset", "cifar-10", "--json")
	var rows []BestRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 {
		t.Fatalf("best --json: exit %d, %s%s", code, out, errOut)
	}
	if rows[0].Unavailable != "" || rows[0].Best == nil || rows[1].Unavailable == "" || rows[1].Best != nil {
		t.Errorf("best --json rows: resnet18 %q %v, inception_v3 %q %v; want the first predicted, the second unavailable with its reason",
			rows[0].Unavailable, rows[0].Best != nil, rows[1].Unavailable, rows[1].Best != nil)
	}
	// Nothing fits anywhere: still the error it was.
	if code, _, errOut := runPredictCLI(t, "predict", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batch", "512"); code != 1 || !strings.Contains(errOut, "does not fit") {
		t.Errorf("predict --batch that fits nowhere: exit %d, %s", code, errOut)
	}
}

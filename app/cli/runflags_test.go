package cli

import (
	"strings"
	"testing"
)

// predict, best and export share one flag vocabulary: both spellings of a list work, and
// a flag left without its value is answered with what to type.
func TestRunFlagsOneVocabulary(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"predict plural lists", []string{"predict", "--models", "resnet50", "--machines", "aws/p3.2xlarge", "--batch", "32"}, 0, ""},
		{"best singular lists", []string{"best", "--model", "resnet50", "--gpu", "t4", "--batches", "8-16"}, 0, ""},
		{"best plural gpus", []string{"best", "--models", "resnet50", "--gpus", "t4", "--batches", "8-16"}, 0, ""},
		{"export csv without its file", []string{"export", "--models", "resnet50", "--machines", "aws/p3.2xlarge", "--csv", "--out", "r.csv"}, 2, "--csv needs a value before --out: write --csv VALUE"},
		{"predict stray argument", []string{"predict", "--model", "resnet50", "--gpu", "t4", "vgg16"}, 2, "every value follows its flag"},
		{"predict zero epochs", []string{"predict", "--model", "resnet50", "--gpu", "t4", "--batch", "8", "--epochs", "0"}, 2, "--epochs 0: must be positive (default 90)"},
		{"best empty batches", []string{"best", "--model", "resnet50", "--gpu", "t4", "--batches", ""}, 2, "write --batches 1-1024"},
	}
	for _, tc := range tests {
		code, _, errOut := runPredictCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, errOut, tc.code, tc.wantErr)
		}
	}
}

// help predict and help export show the same default for every shared run flag.
func TestHelpShowsOneDefaultPerMeaning(t *testing.T) {
	flagsOf := func(cmd string) map[string]string {
		code, out, errOut := runPredictCLI(t, "help", cmd)
		if code != 0 {
			t.Fatalf("help %s: exit %d: %s", cmd, code, errOut)
		}
		lines := strings.Split(out, "\n")
		got := map[string]string{}
		for i, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "-") && i+1 < len(lines) {
				got[f[0]] = strings.TrimSpace(lines[i+1])
			}
		}
		return got
	}
	predict, export := flagsOf("predict"), flagsOf("export")
	for _, f := range []string{"--model", "--models", "--machine", "--machines", "--gpu", "--gpus", "--batches", "--precision", "--policy", "--epochs", "--images"} {
		if predict[f] == "" || predict[f] != export[f] {
			t.Errorf("%s: predict says %q, export says %q", f, predict[f], export[f])
		}
	}
}

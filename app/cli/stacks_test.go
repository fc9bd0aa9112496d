package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"cnntime/predictor"
)

// TestPredictAndExplainNameTheStack runs issue 34's commands: ResNet-50 on an H100
// SXM at batch 256 under amp with DALI, NHWC and a tight loop, optimised and compiled.
// Every row says its stack, the optimised stack is the fastest, and explain lists the
// fused kernels and every stack's cost, in JSON and in its table.
func TestPredictAndExplainNameTheStack(t *testing.T) {
	args := []string{"--model", "resnet50", "--gpu", "h100-sxm", "--batch", "256", "--precision", "amp", "--loader", "dali",
		"--memory-format", "nhwc", "--script", "lean"}
	ips := map[string]float64{}
	for _, f := range []string{"optimized", "compiled", "pytorch2"} {
		code, out, errOut := runPredictCLI(t, append(append([]string{"predict"}, args...), "--framework", f, "--json")...)
		if code != 0 {
			t.Fatalf("predict --framework %s: exit %d: %s", f, code, errOut)
		}
		var rows []PredictRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("predict --framework %s: %v, %d rows", f, err, len(rows))
		}
		if rows[0].Framework != f || rows[0].ImagesPerS == nil || !(*rows[0].ImagesPerS > 0) {
			t.Errorf("predict --framework %s: row %+v does not name its stack or has no throughput", f, rows[0])
			continue
		}
		ips[f] = *rows[0].ImagesPerS
	}
	if !(ips["optimized"] > ips["compiled"] && ips["compiled"] > ips["pytorch2"]) {
		t.Errorf("images/s %v: want optimized > compiled > pytorch2", ips)
	}
	for _, f := range []string{"optimized", "compiled"} {
		code, out, errOut := runPredictCLI(t, append(append([]string{"explain"}, args...), "--framework", f, "--json")...)
		if code != 0 {
			t.Fatalf("explain --framework %s: exit %d: %s", f, code, errOut)
		}
		var x predictor.Explanation
		if err := json.Unmarshal([]byte(out), &x); err != nil {
			t.Fatal(err)
		}
		if string(x.Stack.Framework) != f || len(x.Stack.Fused) == 0 || len(x.Stack.Costs) != len(predictor.Frameworks) || !x.Stack.CUDAGraphs {
			t.Errorf("explain --framework %s --json: stack %+v; want the stack, its fused kernels and every stack's cost", f, x.Stack)
		}
		code, text, _ := runPredictCLI(t, append(append([]string{"explain"}, args...), "--framework", f)...)
		if code != 0 || !strings.Contains(text, "stack      "+f+":") || !strings.Contains(text, "FUSED KERNEL") ||
			!strings.Contains(text, "batchnorm2d+relu") || !strings.Contains(text, f+" (this)") {
			t.Errorf("explain --framework %s: the table lacks the stack, its fused kernels or the stacks' costs:\n%s", f, text)
		}
	}
	code, _, errOut := runPredictCLI(t, append(append([]string{"predict"}, args...), "--framework", "inductor")...)
	if code == 0 || !strings.Contains(errOut, "compiled") || !strings.Contains(errOut, "optimized") {
		t.Errorf("an unknown stack: exit %d, %q; want an error naming the stacks", code, errOut)
	}
}

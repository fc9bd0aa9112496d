package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

func TestParseScript(t *testing.T) {
	for in, want := range map[string]Script{"": Lean, "lean": Lean, " Reference ": Reference, "LIGHTNING": Lightning} {
		if got, err := ParseScript(in); err != nil || got != want {
			t.Errorf("ParseScript(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseScript("keras"); err == nil || !strings.Contains(err.Error(), "lean") {
		t.Errorf("ParseScript(keras) = %v; want an error naming the scripts", err)
	}
	req := Request{Network: buildNet(t, "resnet18"), Machine: hw.Machine{ID: "x", GPUCount: 1}, GPU: v100,
		Precision: measure.FP32, Batches: []int{8}, Run: Run{Epochs: 1, Images: 8}, Script: "keras"}
	if err := req.Check(); err == nil {
		t.Error("a request with an unknown script passed its check")
	}
}

// A script's cost is its host work, its kernels at the forward launch cost and every
// .item() read after the first: the reference script's 0.1 ms + 10 × 20 µs + 2 × 15 µs.
// It adds that to every step's time, once, at every batch, and Explain shows it as the
// "script" phase of a step whose phases still add up to the curve's.
func TestScriptAddsItsCostToEveryStep(t *testing.T) {
	if got, want := Reference.Cost().StepMS(20), 0.1+10*0.020+2*0.015; math.Abs(got-want) > 1e-12 {
		t.Errorf("the reference script costs %v ms per step, want %v", got, want)
	}
	if got := Lean.Cost().StepMS(20); got != 0 {
		t.Errorf("a tight loop costs %v ms per step, want 0", got)
	}
	e := priorEngine()
	base := Request{Network: buildNet(t, "resnet50"), Machine: hw.Machine{ID: "aws/p3.2xlarge", GPUCount: 1, VCPUs: 8},
		GPU: v100, Precision: measure.FP32, Policy: measure.Heuristic, Batches: []int{1, 32, 128}, Run: Run{Epochs: 1, Images: 1000}}
	lean, err := e.Curve(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []Script{Reference, Lightning} {
		req := base
		req.Script = sc
		c, err := e.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		want := sc.Cost().StepMS(DefaultOverheads.LaunchForwardUS)
		if c.Script != sc {
			t.Errorf("the curve says script %q, want %q", c.Script, sc)
		}
		for i, p := range c.Points {
			if d := p.IterMS - lean.Points[i].IterMS; math.Abs(d-want) > 1e-9 || math.Abs(p.ScriptMS-want) > 1e-12 {
				t.Errorf("%s at batch %d: the step grew by %v ms and says script_ms %v; want %v", sc, p.Batch, d, p.ScriptMS, want)
			}
		}
		x, err := e.Explain(req, 32)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(x.Phases.ScriptMS-want) > 1e-12 || math.Abs(x.Phases.Total()-x.IterMS) > 1e-9*x.IterMS || x.Script != sc {
			t.Errorf("%s: explain's script phase %v ms (want %v), phases add up to %v of %v ms", sc, x.Phases.ScriptMS, want, x.Phases.Total(), x.IterMS)
		}
		named := false
		for _, ph := range x.Phases.List() {
			named = named || ph.Phase == "script"
		}
		if !named {
			t.Errorf("explain's phases %+v do not list the script", x.Phases.List())
		}
	}
}

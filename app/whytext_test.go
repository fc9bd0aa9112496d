package app

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// whyExplained is an explanation and the bound its curve's point at that batch has:
// what the results table says.
type whyExplained struct {
	predictor.Explanation
	pointBound string
}

// whyExplanations explains the real engine's curves where the Why tab used to
// contradict itself or the results table: a loader-paced L4, T4 and A10G (the
// issue's efficientnet_b0 on g5.xlarge), an 8-GPU A100 machine, four one-GPU
// instances joined by the network (the all-reduce dominates), and fp32 and amp.
func whyExplanations(t *testing.T) []whyExplained {
	t.Helper()
	ctx := context.Background()
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []whyExplained
	for _, c := range []struct {
		model, machine string
		prec           measure.Precision
		nodes          int
		data           RunData
	}{
		{"resnet50", "aws/g6.xlarge", measure.FP32, 1, DefaultRunData()},
		{"efficientnet_b0", "aws/g5.xlarge", measure.FP32, 1, DefaultRunData()},
		{"resnet50", "aws/g4dn.xlarge", measure.AMP, 1, DefaultRunData()},
		{"resnet50", "aws/p4d.24xlarge", measure.AMP, 1, DefaultRunData()},
		{"resnet50", "aws/g6.xlarge", measure.FP32, 4, DefaultRunData()},
		{"vgg16", "aws/p3.2xlarge", measure.FP32, 4, RunData{}},
		{"mobilenet_v2", "gcp/a2-highgpu-1g", measure.AMP, 1, DefaultRunData()},
	} {
		tg, err := eng.MachineTarget(c.machine)
		if err != nil {
			t.Fatal(err)
		}
		q := Query{Models: []string{c.model}, Targets: []Target{tg}, Precision: c.prec, Policy: measure.Heuristic,
			Run: predictor.Run{Epochs: 90, Images: 1281167}, Data: c.data, Nodes: c.nodes, Span: BatchSpan{Min: 1}}
		curves, err := eng.Curves(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range curves[0].Points {
			if !p.Fits || (i%5 != 0 && i != curves[0].Best) { // every fifth batch size, and the best
				continue
			}
			x, err := eng.Explain(ctx, q, c.model, tg, p.Batch)
			if err != nil {
				t.Fatalf("%s on %s ×%d at batch %d: %v", c.model, c.machine, c.nodes, p.Batch, err)
			}
			out = append(out, whyExplained{x, p.Bound})
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d explanations", len(out))
	}
	return out
}

// The Why tab's verdict is the results table's: the headline's bound is the curve
// point's at that batch (explain prints the same explanation's), whatever paces the
// step; the largest part it names is the largest group the chart draws, and no other
// bound is named.
func TestWhyHeadlineBoundIsTheTables(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range whyExplanations(t) {
		x := e.Explanation
		if x.Bound != e.pointBound {
			t.Errorf("%s on %s at batch %d: the explanation's bound %q, the curve's %q", x.Model, x.Machine, x.Batch, x.Bound, e.pointBound)
		}
		// The groups as the chart draws them: bars under a "name: share" heading.
		sums := map[string]float64{}
		for _, b := range WhyBars(&x) {
			if b.Group == KindsGroup {
				continue
			}
			name, _, _ := strings.Cut(b.Group, ":")
			sums[name] += b.Value
		}
		largest := ""
		for name, ms := range sums {
			if largest == "" || ms > sums[largest] {
				largest = name
			}
		}
		total := 0.0
		for _, g := range PhaseGroups(&x) {
			total += g.MS
		}
		if d := total - x.Phases.Total(); d > 1e-9 || d < -1e-9 {
			t.Errorf("%s on %s at batch %d: the groups add to %v ms, the phases to %v", x.Model, x.Machine, x.Batch, total, x.Phases.Total())
		}
		head := WhyHeadline(&x)
		if want := "Bound: " + BoundWords(e.pointBound) + ","; !strings.Contains(head, want) {
			t.Errorf("%s on %s at batch %d: the table says %q but the headline %q lacks %q", x.Model, x.Machine, x.Batch, e.pointBound, head, want)
		}
		for _, other := range []string{BoundGPU, BoundInput} {
			if other != e.pointBound && strings.Contains(head, "Bound: "+BoundWords(other)) {
				t.Errorf("%s on %s at batch %d: the headline names a second bound, %s: %q", x.Model, x.Machine, x.Batch, other, head)
			}
		}
		if !strings.Contains(head, "the largest part of the step is the "+largest) && !strings.Contains(head, "the largest part of the step is "+largest) {
			t.Errorf("%s on %s at batch %d: the chart's largest group is %q (%v) but the headline says %q", x.Model, x.Machine, x.Batch, largest, sums, head)
		}
		seen[e.pointBound] = true
		seen[largest] = true
	}
	// The cases reach the verdicts and groups the issue was about.
	for _, g := range []string{BoundGPU, BoundInput, GroupGPU, GroupCommunication} {
		if !seen[g] {
			t.Errorf("no case is bounded by %s: the test does not cover it", g)
		}
	}
}

// The case: efficientnet_b0 on aws/g5.xlarge at ImageNet, batch 17, where the
// Why tab said the GPU kernels bound the step and the table said input. Both say input now.
func TestWhyEfficientNetOnG5IsInputBound(t *testing.T) {
	ctx := context.Background()
	eng, tg := engineOn(t, "aws/g5.xlarge")
	q := Query{Models: []string{"efficientnet_b0"}, Targets: []Target{tg}, Batches: []int{17}, Precision: measure.FP32, Policy: measure.Heuristic,
		Run: predictor.Run{Epochs: 90, Images: 1281167}, Data: DefaultRunData()}
	curves, err := eng.Curves(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	x, err := eng.Explain(ctx, q, "efficientnet_b0", tg, 17)
	if err != nil {
		t.Fatal(err)
	}
	row := Summarize(curves)[0]
	if row.Bound != BoundInput || x.Bound != BoundInput || !strings.Contains(WhyHeadline(&x), "Bound: the input pipeline,") {
		t.Errorf("table %q, explanation %q, headline %q: want input everywhere", row.Bound, x.Bound, WhyHeadline(&x))
	}
	if got, want := row.Cell(ColumnBound), "input (pytorch "+RateText(x.LoaderImagesPerS)+"/s)"; got != want {
		t.Errorf("the table's bound cell %q, want %q", got, want)
	}
}

// batchText finds "batch B (G GPUs × b images)" in a Why text.
var batchText = regexp.MustCompile(`batch (\d+) \((\d+) GPUs × (\d+) images\)`)

// Per-GPU batch × GPUs = global batch in every Why text: the headline and the
// status line's sentence, on one GPU and on many.
func TestWhyTextsSplitTheBatchEvenly(t *testing.T) {
	multi := 0
	for _, e := range whyExplanations(t) {
		x := e.Explanation
		for _, text := range []string{WhyHeadline(&x), BatchWords(&x) + ": " + BoundSentence(&x)} {
			if x.GPUCount*x.PerGPUBatch != x.Batch {
				t.Errorf("%s on %s: batch %d over %d GPUs is %d each", x.Model, x.Machine, x.Batch, x.GPUCount, x.PerGPUBatch)
			}
			m := batchText.FindStringSubmatch(text)
			if x.GPUCount == 1 {
				if m != nil || !strings.Contains(text, fmt.Sprintf("batch %d", x.Batch)) {
					t.Errorf("%s on one GPU: %q", x.Machine, text)
				}
				continue
			}
			multi++
			if m == nil {
				t.Errorf("%s on %s ×%d GPUs: no per-GPU batch in %q", x.Model, x.Machine, x.GPUCount, text)
				continue
			}
			b, _ := strconv.Atoi(m[1])
			g, _ := strconv.Atoi(m[2])
			per, _ := strconv.Atoi(m[3])
			if g*per != b || b != x.Batch || g != x.GPUCount {
				t.Errorf("%q: %d GPUs × %d images is not batch %d", text, g, per, b)
			}
		}
	}
	if multi == 0 {
		t.Error("no multi-GPU explanation")
	}
}

// A global batch that does not split evenly over data-parallel GPUs is refused with
// the two batches that do, instead of an explanation of ceil(B/GPUs) images each.
func TestExplainRefusesAnUnevenSplit(t *testing.T) {
	ctx := context.Background()
	eng, tg := engineOn(t, "aws/g6.xlarge")
	q := Query{Precision: measure.FP32, Policy: measure.Heuristic, Data: DefaultRunData(), Nodes: 4}
	_, err := eng.Explain(ctx, q, "resnet50", tg, 21)
	if err == nil || !strings.Contains(err.Error(), "use 20 or 24") {
		t.Fatalf("batch 21 on 4 instances: %v, want a refusal naming 20 and 24", err)
	}
	if _, err := eng.Explain(ctx, q, "resnet50", tg, 24); err != nil {
		t.Fatalf("batch 24 on 4 instances: %v", err)
	}
}

// engineOn is the engine over the embedded catalog and calibration, and one machine of it.
func engineOn(t *testing.T, machine string) (*Engine, Target) {
	t.Helper()
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := eng.MachineTarget(machine)
	if err != nil {
		t.Fatal(err)
	}
	return eng, tg
}

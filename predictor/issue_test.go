package predictor

import (
	"math"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// issueReference is compose's issue simulation as it was written before issueSim:
// every launch tests, at every batch, whether the GPU waits for the host.
func issueReference(p *stepPlan, lo, hi int) []float64 {
	n := hi - lo
	gpuEnd := make([]float64, n)
	hostMS := 0.0
	var waited []float64
	for j, k := range p.seq {
		if j == p.syncAt {
			waited = make([]float64, n)
			for i := range waited {
				waited[i] = math.Max(0, gpuEnd[i]-hostMS)
			}
		}
		ms := p.ms[k.timing][lo:hi]
		hostMS += k.issueUS / 1000
		for i, t := range ms {
			end := gpuEnd[i]
			h := hostMS
			if waited != nil {
				h = hostMS + waited[i]
			}
			if end < h {
				end = h
			}
			gpuEnd[i] = end + t
		}
	}
	return gpuEnd
}

// issueBySim is the same simulation as compose runs it, through issueSim.
func issueBySim(p *stepPlan, lo, hi int) []float64 {
	n := hi - lo
	gpuEnd := make([]float64, n)
	sim := newIssueSim(p, lo, hi)
	hostMS := 0.0
	var waited []float64
	for j, k := range p.seq {
		if j == p.syncAt {
			waited = make([]float64, n)
			for i := range waited {
				waited[i] = math.Max(0, gpuEnd[i]-hostMS)
			}
			sim.sync(j, gpuEnd, waited)
		}
		hostMS += k.issueUS / 1000
		sim.kernel(k.timing, gpuEnd, waited, hostMS)
	}
	return gpuEnd
}

// sameBits reports the first batch index where a and b differ in any bit, or -1.
func sameBits(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// The issue simulation that stops testing for the host once the GPU is past its last
// issue gives every batch's GPU end bit for bit as testing at every launch did: for
// networks of every family, scripts with and without a sync after the forward pass,
// stacks that issue from Python, C++ or a CUDA graph (no issue time), at batches 1–1024,
// and for plans with negative, NaN and infinite kernel times and a sync at the first
// launch or after the last.
func TestIssueSimMatchesEveryLaunchTested(t *testing.T) {
	e := priorEngine()
	var batches []int
	for b := 1; b <= 1024; b++ {
		batches = append(batches, b)
	}
	freed := 0
	for _, name := range []string{"resnet50", "mobilenet_v2", "vgg11", "densenet121", "efficientnet_b0", "convnext_tiny", "inception_v3"} {
		net := buildNet(t, name)
		for _, script := range Scripts {
			for _, f := range []Framework{PyTorch1, PyTorch2, Compiled, Graph} {
				req := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: v100, Precision: measure.AMP,
					Policy: measure.Heuristic, Script: script, Framework: f, MemoryFormat: NCHW, Batches: batches}
				p := e.plan(&req, batches)
				want, got := issueReference(&p, 0, len(batches)), issueBySim(&p, 0, len(batches))
				if i := sameBits(want, got); i >= 0 {
					t.Fatalf("%s, %s script, %s: batch %d ends at %v, testing every launch gives %v", name, script, f, batches[i], got[i], want[i])
				}
				sim := newIssueSim(&p, 0, len(batches))
				if sim.hostMax > 0 && want[len(want)-1] > sim.hostMax {
					freed++
				}
				p.release()
			}
		}
	}
	if freed == 0 {
		t.Error("no plan's largest batch got past the host's issue time: the simulation's shortcut was never taken")
	}

	// Odd plans: three timings over 8 batches, one of them negative, NaN or infinite at
	// some batch, issued at 0.3 ms or at no cost, synced at several points.
	odd := [][]float64{
		{0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8},
		{0.5, -2, 0.5, 0.5, -30, 0.5, 0.5, 0.5},
		{0.2, 0.2, math.NaN(), 0.2, math.Inf(1), 0.2, 0.2, 0.2},
	}
	for _, issueUS := range []float64{300, 0} {
		for _, syncAt := range []int{-1, 0, 3, 7, 12} {
			p := stepPlan{ms: odd, syncAt: syncAt}
			for j := range 12 {
				p.seq = append(p.seq, kernelSeq{timing: []int{0, 0, 1, 0, 2, 0}[j%6], issueUS: issueUS})
			}
			want, got := issueReference(&p, 0, 8), issueBySim(&p, 0, 8)
			if i := sameBits(want, got); i >= 0 {
				t.Errorf("odd plan issued at %v µs, sync at %d: batch %d ends at %v, want %v", issueUS, syncAt, i, got[i], want[i])
			}
			want, got = issueReference(&p, 2, 7), issueBySim(&p, 2, 7)
			if i := sameBits(want, got); i >= 0 {
				t.Errorf("odd plan's batches 2:7 issued at %v µs, sync at %d: batch %d ends at %v, want %v", issueUS, syncAt, i, got[i], want[i])
			}
		}
	}
}

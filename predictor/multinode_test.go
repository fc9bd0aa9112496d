package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// Over several nodes NCCL's ring runs through every GPU: each node's network carries
// 2(N−1)/N of the data for N GPUs in all, and the slower of it and the GPUs' own link
// bounds the time.
func TestAllReduceByHand(t *testing.T) {
	const mb = 100e6
	for _, tc := range []struct {
		name     string
		g, nodes int
		want     float64 // ms
	}{
		{"one GPU", 1, 1, 0},
		// 8 GPUs at 100 GB/s, 1 µs: 2·7/8·100 MB / 100 GB/s = 1.75 ms, 14 steps = 0.014 ms.
		{"one node of 8", 8, 1, 1.75 + 0.014},
		// 4 nodes of 1 GPU at 10 GB/s, 20 µs: 2·3/4·100 MB / 10 GB/s = 15 ms; the ring's
		// 6 steps (0.12 ms) against the tree's 2·log2 4 = 4 (0.08 ms).
		{"four nodes of 1", 1, 4, 15 + 0.08},
		// 32 GPUs through 10 GB/s per node: 2·31/32·100 MB / 10 GB/s = 19.375 ms (the
		// NVLink ring over 32, 1.9375 ms, hides under it); the tree's 4 network steps and
		// 14 link steps (0.08 + 0.014 ms) against the ring's 62 network steps (1.24 ms).
		{"four nodes of 8", 8, 4, 19.375 + 0.094},
		// Two nodes of 8 carry 2·15/16 of the data over the network, not the 2·1/2 a
		// hierarchical all-reduce would: 18.75 ms, and the tree's 2 + 14 steps.
		{"two nodes of 8", 8, 2, 18.75 + 0.054},
		// Two nodes of 1: the ring's 2 steps are the tree's 2.
		{"two nodes of 1", 1, 2, 10 + 0.04},
	} {
		got := AllReduceMS(mb, tc.g, tc.nodes, 100, 1, 10, 20)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v ms, want %v", tc.name, got, tc.want)
		}
	}
	// A network faster than the GPUs' link leaves the link to bound it.
	if got, want := AllReduceMS(mb, 8, 2, 10, 1, 1000, 20), 18.75+0.054; math.Abs(got-want) > 1e-9 {
		t.Errorf("slow link, fast network: %v ms, want the link's ring over 16, %v", got, want)
	}
}

func TestScalingStepHidesUnderBackward(t *testing.T) {
	o := DefaultOverheads
	o.CommInterference, o.StepJitter = 0, 0
	nm := NetworkModel{Efficiency: 0.5, LatencyUS: 20}
	gpu := hw.GPU{InterconnectGBs: 300, Interconnect: "NVLink"}
	intra := 300 * o.NVLinkAllReduceEfficiency
	fast := hw.Network{Fabric: "EFA", Gbps: 400}
	slow := hw.Network{Fabric: "Ethernet", Gbps: 10}
	grad := 100e6
	// A long backward pass hides all but the last bucket over the fast network.
	long := ScalingStep(o, nm, 200, 150, grad, 8, 4, gpu, fast)
	lastBucket := AllReduceMS(o.BucketBytes, 8, 4, intra, o.AllReduceLatencyUS, 400.0/8*0.5, 20)
	if math.Abs(long-(200+lastBucket)) > 1e-9 {
		t.Errorf("long backward: %v ms, want the step plus the last bucket, %v", long, 200+lastBucket)
	}
	// Over 10 Gbit/s the all-reduce (2·31/32·100 MB / 0.625 GB/s = 310 ms) outlasts it.
	exposed := ScalingStep(o, nm, 200, 150, grad, 8, 4, gpu, slow) - 200
	total := AllReduceMS(grad, 8, 4, intra, o.AllReduceLatencyUS, 10.0/8*0.5, 20)
	if math.Abs(exposed-(total-o.OverlapFraction*150)) > 1e-9 {
		t.Errorf("slow network exposes %v ms, want %v", exposed, total-o.OverlapFraction*150)
	}
	// One node is the instance's own ring.
	one := ScalingStep(o, nm, 200, 150, grad, 8, 1, gpu, slow) - 200
	if want := ringAllReduceMS(o.BucketBytes, 8, intra, o.AllReduceLatencyUS); math.Abs(one-want) > 1e-9 {
		t.Errorf("one node %v, want its last bucket's ring %v", one, want)
	}
	// A GPU on PCIe reaches PCIeAllReduceEfficiency of its link.
	pcie := hw.GPU{InterconnectGBs: 16, Interconnect: "PCIe"}
	p := Sync(o, nm, 200, 150, grad, 4, 1, pcie, slow)
	if want := ringAllReduceMS(grad, 4, 16*o.PCIeAllReduceEfficiency, o.AllReduceLatencyUS); math.Abs(p.AllReduceMS-want) > 1e-9 {
		t.Errorf("PCIe all-reduce %v ms, want %v", p.AllReduceMS, want)
	}
}

// TestSyncInterferenceAndStragglers checks the two costs beyond the exposed
// all-reduce: CommInterference of the hidden time, and StepJitter × step ×
// sqrt(2 ln N) for the slowest of N workers; neither on one GPU.
func TestSyncInterferenceAndStragglers(t *testing.T) {
	o := DefaultOverheads
	o.CommInterference, o.StepJitter = 0.25, 0.02
	nm := NetworkModel{Efficiency: 0.5, LatencyUS: 20}
	gpu := hw.GPU{InterconnectGBs: 300, Interconnect: "NVLink"}
	s := Sync(o, nm, 200, 150, 100e6, 8, 1, gpu, hw.Network{})
	hidden := s.AllReduceMS - s.ExposedMS
	if !(hidden > 0) || math.Abs(s.InterferenceMS-0.25*hidden) > 1e-12 {
		t.Errorf("interference %v ms for %v ms hidden, want a quarter", s.InterferenceMS, hidden)
	}
	if want := 0.02 * 200 * math.Sqrt(2*math.Log(8)); math.Abs(s.StragglerMS-want) > 1e-12 {
		t.Errorf("stragglers %v ms, want %v", s.StragglerMS, want)
	}
	if got := Sync(o, nm, 200, 150, 100e6, 1, 1, gpu, hw.Network{}); got != (SyncParts{}) {
		t.Errorf("one GPU: %+v, want nothing", got)
	}
	if s.Total() != s.ExposedMS+s.InterferenceMS+s.StragglerMS {
		t.Errorf("total %v is not the sum of %+v", s.Total(), s)
	}
	// Over several nodes the slowest node adds NodeJitter × step × sqrt(2 ln nodes); one
	// node has none.
	nm.NodeJitter = 0.03
	if one := Sync(o, nm, 200, 150, 100e6, 8, 1, gpu, hw.Network{}); one.NodeStragglerMS != 0 {
		t.Errorf("one node: a node straggler of %v ms", one.NodeStragglerMS)
	}
	four := Sync(o, nm, 200, 150, 100e6, 8, 4, gpu, hw.Network{Gbps: 100})
	if want := 0.03 * 200 * math.Sqrt(2*math.Log(4)); math.Abs(four.NodeStragglerMS-want) > 1e-12 {
		t.Errorf("four nodes: node stragglers %v ms, want %v", four.NodeStragglerMS, want)
	}
	if want := 0.02 * 200 * math.Sqrt(2*math.Log(32)); math.Abs(four.StragglerMS-want) > 1e-12 {
		t.Errorf("four nodes of 8: stragglers %v ms, want %v over 32 GPUs", four.StragglerMS, want)
	}
	if four.Total() != four.ExposedMS+four.InterferenceMS+four.StragglerMS+four.NodeStragglerMS {
		t.Errorf("total %v is not the sum of %+v", four.Total(), four)
	}
}

func TestRequestNodesChecked(t *testing.T) {
	net := tinyNet()
	base := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 8}, GPU: hw.GPU{ID: "g"},
		Precision: "fp32", Batches: []int{32}, Run: Run{Epochs: 1, Images: 100}}
	for _, tc := range []struct {
		name  string
		nodes int
		link  hw.Network
		batch int
		want  string
	}{
		{"negative", -1, hw.Network{Gbps: 100}, 64, "-1 nodes"},
		{"too many", MaxNodes + 1, hw.Network{Gbps: 100}, 1 << 20, "nodes"},
		{"no network", 2, hw.Network{}, 64, "no bandwidth"},
		{"batch under the GPUs", 4, hw.Network{Gbps: 100}, 16, "batch ≥ 32"},
		{"fine", 4, hw.Network{Gbps: 100}, 32, ""},
	} {
		r := base
		r.Nodes, r.NodeNetwork, r.Batches = tc.nodes, tc.link, []int{tc.batch}
		err := r.Check()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A network without a published latency is predicted with the model's own and the
// curve says so, rather than showing a latency of 0.
func TestCurveNamesAnAssumedLatency(t *testing.T) {
	tests := []struct {
		name        string
		latency     float64
		wantLatency float64
		wantAssumed bool
	}{
		{"published", 15, 15, false},
		{"unknown", 0, DefaultNetworkModel.LatencyUS, true},
	}
	for _, tt := range tests {
		e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU,
			Precision: measure.FP32, Batches: []int{16}, Run: Run{Epochs: 1, Images: 64}, Nodes: 2,
			NodeNetwork: hw.Network{Fabric: "EFA", Gbps: 400, LatencyUS: tt.latency, Source: "test"}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Network == nil || c.Network.LatencyUS != tt.wantLatency || c.Network.LatencyAssumed != tt.wantAssumed {
			t.Errorf("%s: network %+v; want latency %g, assumed %v", tt.name, c.Network, tt.wantLatency, tt.wantAssumed)
		}
	}
}

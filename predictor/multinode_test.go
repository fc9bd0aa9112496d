package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

func TestHierarchicalAllReduceByHand(t *testing.T) {
	const mb = 100e6
	for _, tc := range []struct {
		name     string
		g, nodes int
		want     float64 // ms
	}{
		{"one GPU", 1, 1, 0},
		// 8 GPUs at 100 GB/s, 1 µs: 2·7/8·100 MB / 100 GB/s = 1.75 ms, 14 steps = 0.014 ms.
		{"one node of 8", 8, 1, 1.75 + 0.014},
		// 4 nodes of 1 GPU at 10 GB/s, 20 µs: 2·3/4·100 MB / 10 GB/s = 15 ms, 6 steps = 0.12 ms.
		{"four nodes of 1", 1, 4, 15 + 0.12},
		{"four nodes of 8", 8, 4, 1.75 + 0.014 + 15 + 0.12},
	} {
		got := HierarchicalAllReduceMS(mb, tc.g, tc.nodes, 100, 1, 10, 20)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v ms, want %v", tc.name, got, tc.want)
		}
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
	lastBucket := HierarchicalAllReduceMS(o.BucketBytes, 8, 4, intra, o.AllReduceLatencyUS, 400.0/8*0.5, 20)
	if math.Abs(long-(200+lastBucket)) > 1e-9 {
		t.Errorf("long backward: %v ms, want the step plus the last bucket, %v", long, 200+lastBucket)
	}
	// Over 10 Gbit/s the all-reduce (2·3/4·100 MB / 0.625 GB/s = 240 ms) outlasts it.
	exposed := ScalingStep(o, nm, 200, 150, grad, 8, 4, gpu, slow) - 200
	total := HierarchicalAllReduceMS(grad, 8, 4, intra, o.AllReduceLatencyUS, 10.0/8*0.5, 20)
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

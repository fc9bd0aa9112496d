package validate

import (
	"context"
	"math"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// The scaling table: rows within one node and over several in both sets, whole
// sources held out (a third of them), the shipped figures the fit on the tuning
// sources finds, every prediction an efficiency in (0, 1], and the held-out sources
// within the 8% the issue asks (figures published, not timed here).
func TestScalingTable(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := Scaling(eng)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{}
	scopes := map[string]bool{}
	for _, r := range acc.Rows {
		if s, ok := sets[r.Source]; ok && s != r.Set {
			t.Errorf("%s has rows in both %q and %q: hold out whole sources", r.Source, s, r.Set)
		}
		sets[r.Source] = r.Set
		scopes[r.Set+"/"+map[bool]string{true: "several", false: "one"}[r.MultiNode()]] = true
		if !(r.Predicted > 0 && r.Predicted <= 1) {
			t.Errorf("%s: predicted efficiency %v outside (0, 1]", r.Run, r.Predicted)
		}
	}
	held := 0
	for _, s := range sets {
		if s == "held out" {
			held++
		}
	}
	if 3*held < len(sets) || held == len(sets) {
		t.Errorf("%d sources, %d held out: want a third held out", len(sets), held)
	}
	for _, k := range []string{"tuning/one", "tuning/several", "held out/one", "held out/several"} {
		if !scopes[k] {
			t.Errorf("no %s-node rows", k)
		}
	}
	s, f := acc.Shipped, acc.Refit
	if s.NetworkEfficiency != f.NetworkEfficiency || s.Interference != f.Interference || s.Jitter != f.Jitter || s.NodeJitter != f.NodeJitter {
		t.Errorf("shipped %+v, the fit on the tuning sources finds %+v: update predictor.DefaultNetworkModel and DefaultOverheads", s, f)
	}
	// Issue 34: 2 to 8 nodes were predicted about 6 points too well. The held-out runs
	// over 2 to 8 nodes must not be optimistic on average by more than 4 points: the
	// ring and node jitter brought them to +0.3%; as the step model changed and the
	// tuning fit moved the node jitter with it (0.04, 0.035, 0.03, 0.0175, 0.0125) they
	// drifted to +1.5%, +3.1% and +3.7%. The jitter is fitted on the tuning sources alone,
	// whose MAPE is flat in it (3.398% at 0.0125, 3.403% at 0.0175, 3.41% at 0.03).
	sum, n := 0.0, 0
	for _, r := range acc.Rows {
		if r.Set == "held out" && r.Nodes >= 2 && r.Nodes <= 8 {
			sum += r.ErrorPct
			n++
		}
	}
	if n < 3 || sum/float64(n) > 4 {
		t.Errorf("held-out runs over 2 to 8 nodes: %d, mean error %+.1f%%; want at least 3 and at most +4%%", n, sum/float64(n))
	}
	for _, g := range acc.Groups {
		t.Logf("%-8s %-13s %2d rows: MAPE %.1f%% (before %.1f%%), bias %+.1f%%", g.Set, g.Scope, g.Rows, g.MAPEPct, g.BeforeMAPE, g.BiasPct)
		if g.Set == "held out" && g.Scope == "all" && g.MAPEPct > 8 {
			t.Errorf("held-out MAPE %.1f%% > 8%%", g.MAPEPct)
		}
	}
}

func TestParseScalingRowsRefusesBadRows(t *testing.T) {
	head := "source,run,where,model,framework,precision,gpu,intra_gbps,interconnect,gpus_per_node,nodes,baseline_gpus,network,network_gbps,batch_per_gpu,scaling_efficiency,set\n"
	for name, row := range map[string]string{
		"no network over nodes":  "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,2,8,,,64,0.9,tuning\n",
		"one node from itself":   "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,8,,,64,0.9,tuning\n",
		"uneven baseline":        "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,4,12,IB,100,64,0.9,tuning\n",
		"efficiency of 3":        "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,3,tuning\n",
		"unknown link":           "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,Infinity Fabric,8,1,1,,,64,0.9,tuning\n",
		"bad set":                "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,maybe\n",
		"negative batch":         "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,-64,0.9,tuning\n",
		"no source":              ",r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,tuning\n",
		"efficiency not a value": "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,abc,tuning\n",
	} {
		if _, err := ParseScalingRows([]byte(head + row)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	rows, err := ParseScalingRows(assets.Scaling)
	if err != nil || len(rows) == 0 {
		t.Errorf("the embedded file: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if math.IsNaN(r.Measured) {
			t.Errorf("%s: NaN", r.Run)
		}
	}
	// The data column is optional (real when absent or empty) and names real or synthetic data.
	withData := strings.TrimSuffix(head, "\n") + ",data\n"
	if _, err := ParseScalingRows([]byte(withData + "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,tuning,imagined\n")); err == nil || !strings.Contains(err.Error(), "neither real nor synthetic") {
		t.Errorf("unknown data: %v", err)
	}
	for text, want := range map[string]string{
		head + "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,tuning\n":               "real",
		withData + "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,tuning,\n":          "real",
		withData + "a,r,w,resnet50,PyTorch,fp32,v100-sxm2-16gb,,,8,1,1,,,64,0.9,tuning,synthetic\n": "synthetic",
	} {
		if rows, err := ParseScalingRows([]byte(text)); err != nil || len(rows) != 1 || rows[0].Data != want {
			t.Errorf("%q: %+v, %v; want data %q", text, rows, err, want)
		}
	}
	if _, err := ParseScalingRows([]byte("source,where\n")); err == nil || !strings.Contains(err.Error(), "lacks column") {
		t.Errorf("a short header: %v", err)
	}
}

// A run on synthetic data has no input pipeline: the node jitter leaves it alone and
// costs a run on real data NodeJitter × step × sqrt(2 ln nodes), within one node nothing.
func TestNodeJitterOnlyOnRealData(t *testing.T) {
	o := predictor.DefaultOverheads
	nm := predictor.DefaultNetworkModel
	nm.NodeJitter = 0.04
	gpu := hw.GPU{InterconnectGBs: 150, Interconnect: "NVLink"}
	row := func(data string, nodes int) *ScalingRow {
		return &ScalingRow{Data: data, GPUsPerNode: 8, Nodes: nodes, BaseGPUs: 8, Network: "InfiniBand", NetworkGbps: 100,
			step: 300, bwd: 200, grad: 100e6, gpu: gpu}
	}
	synthetic := scalingEfficiency(row("synthetic", 4), o, nm)
	nm0 := nm
	nm0.NodeJitter = 0
	if want := scalingEfficiency(row("real", 4), o, nm0); math.Abs(synthetic-want) > 1e-12 {
		t.Errorf("synthetic data: %v, want the efficiency without node jitter %v", synthetic, want)
	}
	// The baseline, one node, has no node jitter: its step over each efficiency is the
	// full step, and they differ by the node jitter's wait.
	base := predictor.ScalingStep(o, nm, 300, 200, 100e6, 8, 1, gpu, hw.Network{Fabric: "InfiniBand", Gbps: 100})
	real := scalingEfficiency(row("real", 4), o, nm)
	if got, want := base/real-base/synthetic, 0.04*300*math.Sqrt(2*math.Log(4)); math.Abs(got-want) > 1e-9 {
		t.Errorf("real data over 4 nodes waits %v ms more than synthetic, want %v", got, want)
	}
	if one := scalingEfficiency(&ScalingRow{Data: "real", GPUsPerNode: 8, Nodes: 1, BaseGPUs: 1, step: 300, bwd: 200, grad: 100e6, gpu: gpu}, o, nm); one != scalingEfficiency(&ScalingRow{Data: "real", GPUsPerNode: 8, Nodes: 1, BaseGPUs: 1, step: 300, bwd: 200, grad: 100e6, gpu: gpu}, o, nm0) {
		t.Errorf("one node: node jitter changed the efficiency to %v", one)
	}
}

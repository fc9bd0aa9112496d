package app

import (
	"context"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/measure"
)

func TestHostTextsSayWhatIsAssumed(t *testing.T) {
	grace := host.Resolve(&host.CPU{Model: "NVIDIA Grace", Source: "lscpu"}, 64, 432)
	pod := host.Resolve(nil, 5, 29)
	bare := host.Resolve(nil, 0, 0)
	for _, tt := range []struct {
		name             string
		h                *host.Host
		hostErr          float64
		text, assumption string
	}{
		{"a named host", &grace, 0, "NVIDIA Grace, 64 vCPUs", ""},
		{"a pod with no CPU named", &pod, 46.2, "CPU assumed: Intel Xeon Gold 5118, 5 vCPUs (±46% on the time)",
			"CPU assumed: no CPU is named for this machine, so the loader's reference core (Intel Xeon Gold 5118) stands in, and the host's cores may do 0.92× to 1.85× its work"},
		{"a bare GPU", &bare, 0.2, "CPU assumed: Intel Xeon Gold 5118, vCPUs unknown",
			"CPU assumed: no CPU is named for this machine, so the loader's reference core (Intel Xeon Gold 5118) stands in, and the host's cores may do 0.92× to 1.85× its work; vCPUs assumed: none are published, each loader worker is taken to have a core of its own"},
		{"a measured CPU: none", nil, 0, "–", ""},
	} {
		if got := HostText(tt.h, tt.hostErr); got != tt.text {
			t.Errorf("%s: HostText = %q, want %q", tt.name, got, tt.text)
		}
		if got := HostAssumption(tt.h); got != tt.assumption {
			t.Errorf("%s: HostAssumption = %q, want %q", tt.name, got, tt.assumption)
		}
	}
	if got := BoundText(BoundInput, "pytorch", 331, true); got != "input (pytorch 331/s, CPU assumed)" {
		t.Errorf("BoundText of an assumed host = %q", got)
	}
	if got := BoundText(BoundInput, "pytorch", 3043, false); got != "input (pytorch 3,043/s)" {
		t.Errorf("BoundText of a named host = %q", got)
	}
}

// Sorted by total time or cost, a machine with an assumed host sits at the slow end
// of its range: it never outranks a named one on the reference core standing in.
func TestAnAssumedHostRanksAtItsSlowEnd(t *testing.T) {
	pod, named := host.Resolve(nil, 5, 29), host.Resolve(&host.CPU{Model: "Intel Xeon Platinum 8480+"}, 26, 225)
	rows := []Summary{
		{Machine: "pod", BestBatch: 8, TotalS: 100, CostUSD: 10, CostKnown: true, Host: &pod, HostErrorPct: 40, HostSlowPct: 8},
		{Machine: "named", BestBatch: 8, TotalS: 105, CostUSD: 10.5, CostKnown: true, Host: &named},
	}
	for _, col := range []SummaryColumn{ColumnTotal, ColumnCost} {
		SortSummaries(rows, col, false)
		if rows[0].Machine != "named" {
			t.Errorf("sorted by %s: %s first, want the named host (105) before the assumed one (100, up to 108)", SummaryColumns[col], rows[0].Machine)
		}
	}
	if got := rows[1].Cell(ColumnHost); got != "CPU assumed: Intel Xeon Gold 5118, 5 vCPUs (±40% on the time)" {
		t.Errorf("Host CPU cell %q", got)
	}
}

// The machines: the catalog's hosts decide them, not the reference core.
func TestTodaysMachinesNoLongerTieOnTheReferenceCore(t *testing.T) {
	ctx := context.Background()
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	predict := func(machine string, batch int) predictor.Curve {
		t.Helper()
		tg, err := eng.MachineTarget(machine)
		if err != nil {
			t.Fatal(err)
		}
		curves, err := eng.Curves(ctx, Query{Models: []string{"resnet50"}, Targets: []Target{tg}, Batches: []int{batch},
			Precision: measure.AMP, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 90, Images: 1281167}, Data: DefaultRunData()})
		if err != nil {
			t.Fatal(err)
		}
		return curves[0]
	}
	b200, h100 := predict("lambda/gpu_1x_b200_sxm6", 256), predict("lambda/gpu_1x_h100_sxm5", 256)
	pb, ph := b200.Points[0], h100.Points[0]
	if pb.TotalS >= ph.TotalS || pb.ImagesPerS == ph.ImagesPerS {
		t.Errorf("1×B200 %.0f s at %.0f images/s, 1×H100 %.0f s at %.0f: want the B200 faster, no tie", pb.TotalS, pb.ImagesPerS, ph.TotalS, ph.ImagesPerS)
	}
	if b200.Host == nil || b200.Host.CPUAssumed || b200.Host.Family != "emerald-rapids" || pb.HostErrorPct != 0 {
		t.Errorf("the B200's host %+v (±%.1f%%): want Lambda's Emerald Rapids, nothing assumed", b200.Host, pb.HostErrorPct)
	}
	p6, p5 := predict("aws/p6-b200.48xlarge", 2048), predict("aws/p5.48xlarge", 2048)
	if p6.Points[0].TotalS >= p5.Points[0].TotalS {
		t.Errorf("p6-b200 %.0f s, p5 %.0f s: want the B200s faster", p6.Points[0].TotalS, p5.Points[0].TotalS)
	}
	gh := predict("lambda/gpu_1x_gh200", 256)
	if gh.Host == nil || gh.Host.ThreadsPerCore != 1 || gh.Host.Family != "neoverse-v2" {
		t.Errorf("the GH200's host %+v: want Grace, a vCPU a core", gh.Host)
	}
	pod := predict("runpod/rtx-4090-community-cloud", 256)
	pp := pod.Points[0]
	if pod.Host == nil || !pod.Host.CPUAssumed || pod.Host.VCPUs != 5 || pp.Bound != BoundInput || !(pp.HostErrorPct > 20) || !(pp.ErrorPct > pp.HostErrorPct) {
		t.Errorf("the RunPod 4090: host %+v, bound %s, ±%.1f%% of which the host ±%.1f%%: want 5 vCPUs, CPU assumed, input-bound, a band the assumption widens",
			pod.Host, pp.Bound, pp.ErrorPct, pp.HostErrorPct)
	}
	tg, err := eng.MachineTarget("runpod/rtx-4090-community-cloud")
	if err != nil {
		t.Fatal(err)
	}
	x, err := eng.Explain(ctx, Query{Precision: measure.AMP, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 90, Images: 1281167},
		Data: DefaultRunData()}, "resnet50", tg, 256)
	if err != nil {
		t.Fatal(err)
	}
	if why := WhyHeadline(&x); !strings.Contains(why, "Host: CPU assumed: no CPU is named for this machine") || !strings.Contains(why, "The assumed CPU can move this step") {
		t.Errorf("the Why headline does not say the CPU is assumed and how far it moves the step: %s", why)
	}
}

func TestAssumedHostsNotesGroupTheMachines(t *testing.T) {
	pod, bare, named := host.Resolve(nil, 5, 29), host.Resolve(nil, 0, 0), host.Resolve(&host.CPU{Model: "NVIDIA Grace"}, 64, 0)
	hosts := map[string]*host.Host{"runpod/a": &pod, "gpu/h100-sxm": &bare, "lambda/gh200": &named}
	got := AssumedHostsNotes([]string{"runpod/a", "lambda/gh200", "gpu/h100-sxm"}, hosts)
	want := []string{
		"CPU assumed for runpod/a (5 vCPUs), gpu/h100-sxm: no CPU is named for them, so the loader's reference core (Intel Xeon Gold 5118) stands in, and their cores may do 0.92× to 1.85× its work (in the band; a ranking takes the slow end)",
		"vCPUs assumed for gpu/h100-sxm: none are published, each loader worker is taken to have a core of its own",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := AssumedHostsNotes([]string{"lambda/gh200"}, hosts); got != nil {
		t.Errorf("a named host got notes %v", got)
	}
	one := AssumedHostsNotes([]string{"runpod/a"}, hosts)
	if len(one) != 1 || !strings.Contains(one[0], "no CPU is named for it, so") || !strings.Contains(one[0], "and its cores may do") {
		t.Errorf("one machine's note %v", one)
	}
}

package gpu

import (
	"reflect"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func TestParseBatches(t *testing.T) {
	cases := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "1-4,8", want: []int{1, 2, 3, 4, 8}},
		{in: " 16 , 2-3 ,3", want: []int{2, 3, 16}},
		{in: "96,1-2,128", want: []int{1, 2, 96, 128}},
		{in: "", wantErr: "no batch sizes"},
		{in: "1,,2", wantErr: "empty item"},
		{in: "8-4", wantErr: "runs backwards: write 4-8"},
		{in: "0-4", wantErr: "out of range"},
		{in: "abc", wantErr: `"abc" in "abc" is not a whole number`},
		{in: "1-x", wantErr: "not a whole number"},
		{in: "70000", wantErr: "out of range"},
		{in: "8-64/8", want: []int{8, 16, 24, 32, 40, 48, 56, 64}},
		{in: "3-20/8,1", want: []int{1, 3, 11, 19}},
		{in: "1-9/0", wantErr: "the step after / must be"},
		{in: "1-9/x", wantErr: "the step after / must be"},
	}
	for _, tc := range cases {
		got, err := ParseBatches(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseBatches(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseBatches(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FormatBatches writes sizes as ParseBatches reads them back, as ranges where it can.
func TestFormatBatches(t *testing.T) {
	cases := []struct {
		in   []int
		want string
	}{
		{[]int{1, 2, 3, 4, 8}, "1-4,8"},
		{[]int{5, 21, 37, 53, 69}, "5-69/16"},
		{[]int{1, 2, 96, 128}, "1,2,96,128"},
		{[]int{7}, "7"},
		{nil, ""},
		{DefaultBatches(1024), ""}, // checked by the round trip below
	}
	for _, tc := range cases {
		got := FormatBatches(tc.in)
		if tc.want != "" && got != tc.want {
			t.Errorf("FormatBatches(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if len(tc.in) == 0 {
			continue
		}
		back, err := ParseBatches(got)
		if err != nil || !reflect.DeepEqual(back, tc.in) {
			t.Errorf("ParseBatches(FormatBatches(%v)) = %v, %v", tc.in, back, err)
		}
	}
}

func TestDefaultBatches(t *testing.T) {
	got := DefaultBatches(64)
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 31, 32, 33, 40, 47, 48, 49, 56, 63, 64}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultBatches(64) = %v\nwant %v", got, want)
	}
	big := DefaultBatches(512)
	for _, n := range []int{255, 256, 257, 288, 319, 320, 321, 511, 512} {
		if !contains(big, n) {
			t.Errorf("DefaultBatches(512) lacks %d", n)
		}
	}
	if contains(big, 513) || contains(big, 300) {
		t.Errorf("DefaultBatches(512) = %v: has sizes off the grid", big)
	}
}

func contains(s []int, n int) bool {
	for _, v := range s {
		if v == n {
			return true
		}
	}
	return false
}

func TestSummarize(t *testing.T) {
	cases := []struct {
		in             []float64
		median, spread float64
	}{
		{[]float64{3}, 3, 0},
		{[]float64{4, 1, 3, 2}, 2.5, 0.75},
		{[]float64{10, 1, 2, 3, 4}, 3, 1},
		{nil, 0, 0},
	}
	for _, tc := range cases {
		m, s := Summarize(tc.in)
		if m != tc.median || s != tc.spread {
			t.Errorf("Summarize(%v) = %v, %v; want %v, %v", tc.in, m, s, tc.median, tc.spread)
		}
	}
}

func build(t *testing.T, name string) *cnn.Network {
	t.Helper()
	n, err := cnn.Build(name, cnn.Options{Resolution: 32, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// phaseItems counts the items a plan of these networks should have: per distinct
// configuration, the union of its layers' phases, times the batch sizes.
func phaseItems(nets []*cnn.Network, batches int) (configs, items int) {
	phases := map[cnn.Config]map[measure.Phase]bool{}
	for _, n := range nets {
		for i := range n.Layers {
			l := &n.Layers[i]
			if len(l.Phases()) == 0 {
				continue
			}
			if phases[l.Config] == nil {
				phases[l.Config] = map[measure.Phase]bool{}
			}
			for _, p := range l.Phases() {
				phases[l.Config][p] = true
			}
		}
	}
	for _, ps := range phases {
		items += len(ps) * batches
	}
	return len(phases), items
}

func TestPlanDeduplicatesSharedConfigurations(t *testing.T) {
	r18, r34 := build(t, "resnet18"), build(t, "resnet34")
	rate := Rate{FLOPS: 1e10, BytesPerSec: 1e10}
	batches := []int{1, 2, 3, 8, 16, 24}
	one, err := MakePlan(PlanOptions{Networks: []*cnn.Network{r18}, Batches: batches, Repeats: 3, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	both, err := MakePlan(PlanOptions{Networks: []*cnn.Network{r18, r34}, Batches: batches, Repeats: 3, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	wantConfigs, wantItems := phaseItems([]*cnn.Network{r18, r34}, len(batches))
	if both.Configs != wantConfigs || len(both.Items) != wantItems {
		t.Errorf("plan of resnet18+34 has %d configs, %d items; want %d, %d", both.Configs, len(both.Items), wantConfigs, wantItems)
	}
	// resnet34 has the same block shapes as resnet18, only more of them.
	if both.Configs != one.Configs {
		t.Errorf("resnet34 added %d configurations to resnet18's %d; its blocks repeat resnet18's shapes", both.Configs-one.Configs, one.Configs)
	}
	if both.Layers <= 2*one.Layers-10 {
		t.Errorf("plan counted %d layers for resnet18+34, resnet18 alone has %d", both.Layers, one.Layers)
	}
	seen := map[Key]bool{}
	for _, it := range both.Items {
		if seen[it.Key()] {
			t.Fatalf("item %+v planned twice", it.Key())
		}
		seen[it.Key()] = true
	}
	// Same configurations, same work: adding resnet34 costs no sweep time.
	if one.Estimate <= 0 || both.Estimate != one.Estimate {
		t.Errorf("estimates: resnet18 %v, resnet18+34 %v; want equal and positive", one.Estimate, both.Estimate)
	}
}

func TestPlanLeavesOutMeasuredAndOrdersCoarseFirst(t *testing.T) {
	net := build(t, "resnet18")
	rate := Rate{FLOPS: 1e10, BytesPerSec: 1e10}
	batches := []int{3, 4, 8, 12, 16, 24}
	full, err := MakePlan(PlanOptions{Networks: []*cnn.Network{net}, Batches: batches, Repeats: 1, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	measured := map[Key]bool{}
	for _, it := range full.Items[:10] {
		measured[it.Key()] = true
	}
	rest, err := MakePlan(PlanOptions{Networks: []*cnn.Network{net}, Batches: batches, Repeats: 1, Rate: rate, Measured: measured})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Cached != 10 || len(rest.Items) != len(full.Items)-10 {
		t.Errorf("with 10 measured: %d cached, %d items; want 10, %d", rest.Cached, len(rest.Items), len(full.Items)-10)
	}
	for _, it := range rest.Items {
		if measured[it.Key()] {
			t.Fatalf("measured item %+v is planned again", it.Key())
		}
	}
	// Levels never go down: powers of two (4, 8, 16), then 24 (a multiple of 8), then 3 and 12.
	last := -1
	for _, it := range full.Items {
		lv := batchLevel(it.Batch)
		if lv < last {
			t.Fatalf("batch %d (level %d) comes after level %d", it.Batch, lv, last)
		}
		last = lv
	}
	if full.Items[0].Batch != 4 || full.Items[len(full.Items)-1].Batch != 12 {
		t.Errorf("plan runs from batch %d to %d; want 4 first and 12 last", full.Items[0].Batch, full.Items[len(full.Items)-1].Batch)
	}
}

func TestPlanRejectsBadOptions(t *testing.T) {
	net := build(t, "resnet18")
	good := PlanOptions{Networks: []*cnn.Network{net}, Batches: []int{1}, Repeats: 1, Rate: Rate{FLOPS: 1, BytesPerSec: 1}}
	cases := []struct {
		name    string
		edit    func(*PlanOptions)
		wantErr string
	}{
		{"no networks", func(o *PlanOptions) { o.Networks = nil }, "no networks"},
		{"no batches", func(o *PlanOptions) { o.Batches = nil }, "no batch sizes"},
		{"zero batch", func(o *PlanOptions) { o.Batches = []int{0} }, "out of range"},
		{"no repeats", func(o *PlanOptions) { o.Repeats = 0 }, "at least once"},
		{"no rate", func(o *PlanOptions) { o.Rate = Rate{} }, "must be positive"},
	}
	for _, tc := range cases {
		o := good
		tc.edit(&o)
		if _, err := MakePlan(o); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestPlanMeasuresTheDevicesOwnPhases(t *testing.T) {
	net := build(t, "resnet18")
	rate := Rate{FLOPS: 1e10, BytesPerSec: 1e10}
	// A device that runs every layer's forward pass, views included, and nothing else.
	forwardOnly := func(*cnn.Layer) []measure.Phase { return []measure.Phase{measure.Forward} }
	p, err := MakePlan(PlanOptions{Networks: []*cnn.Network{net}, Batches: []int{1, 2}, Repeats: 1, Rate: rate, Phases: forwardOnly})
	if err != nil {
		t.Fatal(err)
	}
	configs := map[cnn.Config]bool{}
	flatten := false
	for i := range net.Layers {
		configs[net.Layers[i].Config] = true
		flatten = flatten || net.Layers[i].Op == cnn.OpFlatten
	}
	if !flatten {
		t.Fatal("resnet18 has no flatten layer to test a view with")
	}
	if p.Configs != len(configs) || len(p.Items) != 2*len(configs) {
		t.Errorf("plan has %d configs, %d items; want every one of the %d configurations' forward pass (flatten's too) at 2 batches", p.Configs, len(p.Items), len(configs))
	}
	for _, it := range p.Items {
		if it.Phase != measure.Forward {
			t.Fatalf("planned %s of %s; the device runs forward passes only", it.Phase, it.Config.Key())
		}
	}
}

func TestSettled(t *testing.T) {
	for _, c := range []struct {
		backend string
		status  measure.Status
		want    bool
	}{
		{"cuda", measure.OK, true}, {"cuda", measure.OutOfMemory, false}, {"cuda", measure.Unsupported, false},
		{"cpu", measure.OK, true}, {"cpu", measure.OutOfMemory, true}, {"cpu", measure.Unsupported, true},
	} {
		if got := Settled(c.backend, c.status); got != c.want {
			t.Errorf("Settled(%s, %s) = %v, want %v", c.backend, c.status, got, c.want)
		}
	}
}

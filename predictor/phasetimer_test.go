package predictor

import (
	"math"
	"slices"
	"testing"
	"time"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// onePlanTable is the table of per-GPU batches wanted (nil: every batch 1..size-1 of
// a dense table) composed from one plan over all of them and batches 1 and probe, as
// fill and fillAt composed their tables before their plans timed blocks of batches.
func onePlanTable(e *Engine, req Request, size int, wanted []int, probe int) *stepArrays {
	t, entries := newStepArrays(size), wanted
	t.probe = probe
	if wanted == nil {
		for b := 1; b < size; b++ {
			entries = append(entries, b)
		}
		wanted = entries
	} else {
		t = newStepArrays(len(wanted))
		t.batches, t.probe, entries = wanted, probe, nil
		for i := range wanted {
			entries = append(entries, i)
		}
	}
	batches := append(append([]int{1}, wanted...), probe)
	p := e.plan(&req, batches)
	defer p.release()
	e.compose(t, &p, 1, len(batches)-1, entries)
	return t
}

// sameTable reports the first entry where got and want differ in any bit, or -1.
func sameTable(got, want *stepArrays) int {
	if len(got.stepMS) != len(want.stepMS) {
		return 0
	}
	for i := range got.stepMS {
		for _, pair := range [][2]float64{{got.stepMS[i], want.stepMS[i]}, {got.gpuMS[i], want.gpuMS[i]},
			{got.backwardMS[i], want.backwardMS[i]}, {got.relErr[i], want.relErr[i]}} {
			if math.Float64bits(pair[0]) != math.Float64bits(pair[1]) {
				return i
			}
		}
		if got.source[i] != want.source[i] {
			return i
		}
	}
	return -1
}

// A table's plan, made once and timed a block of batches at a time with each kernel's
// figures prepared once (kernels.Prepared, the layout's transposes, the framework's
// operators), gives the figures of one plan over the whole table bit for bit: with
// the roofline alone, with a device's own measurements and another GPU's transferred,
// with a timer that prepares nothing, for eager and compiled stacks (fused kernels),
// FP32 and amp under NCHW (transposes, NCHW batch norm), dense and sparse tables.
func TestBlockPlansAreOnePlanOverTheTable(t *testing.T) {
	net := buildNet(t, "resnet18")
	var ms []measure.Measurement
	for i, l := range net.Layers[:12] {
		for _, p := range []measure.Precision{measure.FP32, measure.AMP} {
			for _, b := range []int{8, 32, 128} {
				ms = append(ms, measure.Measurement{DeviceKey: "cuda:v100", ConfigKey: l.Config.Key(), Batch: b, Precision: p,
					Phase: measure.Forward, Policy: measure.Heuristic, MedianMS: 0.01 * float64(b*(i+1)), SpreadMS: 0.001,
					Repeats: 10, Status: measure.OK, At: time.Unix(1_700_000_000, 0)})
			}
		}
	}
	devices := []measure.Device{{Key: "cuda:v100", Backend: "cuda", GPUID: v100.ID}}
	measured := NewEngine(kernels.NewModel(nil, []hw.GPU{v100, a100}, devices, ms), DefaultOverheads, DefaultMemoryModel)
	linear := NewEngine(newLinearTimer(0.01), DefaultOverheads, DefaultMemoryModel)
	sparse := []int{1, 2, 3, 7, 64, 100, 255, 256, 257, 300, 512, 513, 700, 1000}
	for _, tc := range []struct {
		name string
		e    *Engine
		gpu  hw.GPU
		key  string
	}{
		{"estimated", priorEngine(), v100, ""},
		{"measured on the device", measured, v100, "cuda:v100"},
		{"transferred from another GPU", measured, a100, ""},
		{"a timer that prepares nothing", linear, v100, ""},
	} {
		for _, name := range []string{"resnet18", "mobilenet_v2"} {
			net := buildNet(t, name)
			for _, p := range []measure.Precision{measure.FP32, measure.AMP} {
				for _, f := range []Framework{PyTorch2, Compiled} {
					req := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: tc.gpu, DeviceKey: tc.key,
						Precision: p, Policy: measure.Heuristic, Framework: f, MemoryFormat: NCHW}
					if i := sameTable(tc.e.fill(req, 600, 1024), onePlanTable(tc.e, req, 600, nil, 1024)); i >= 0 {
						t.Errorf("%s, %s, %s, %s: the dense table's entry %d differs from one plan's", tc.name, name, p, f, i)
					}
					if i := sameTable(tc.e.fillAt(req, sparse, 1024), onePlanTable(tc.e, req, 0, sparse, 1024)); i >= 0 {
						t.Errorf("%s, %s, %s, %s: the sparse table's batch %d differs from one plan's", tc.name, name, p, f, sparse[i])
					}
				}
			}
		}
	}
}

// BenchmarkFillResnet50 fills resnet50's dense step table on a V100 under amp
// (NCHW, the layout's transposes), batches 1–1024: one plan, its kernels timed a
// block of batches at a time; ns/batch is the cost of one batch's step.
func BenchmarkFillResnet50(b *testing.B) {
	e := priorEngine()
	net, err := cnn.Build("resnet50", cnn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: v100, Precision: measure.AMP,
		Policy: measure.Heuristic, MemoryFormat: NCHW}
	b.ReportAllocs()
	for b.Loop() {
		e.fill(req, 1025, 1024)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/batch")
}

// firstLayers names, for each layer, the first layer of its configuration: tinyNet's
// conv3 is conv2's configuration, every other layer its own; resnet18's repeated
// blocks point back to their first block's layers, and asking again gives the same.
func TestFirstLayers(t *testing.T) {
	e := priorEngine()
	if got, want := e.firstLayers(tinyNet()), []int{0, 1, 2, 2, 4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("tinyNet: %v, want %v", got, want)
	}
	net := buildNet(t, "resnet18")
	first := e.firstLayers(net)
	repeated := 0
	for i, j := range first {
		if j > i || net.Layers[j].Config != net.Layers[i].Config {
			t.Fatalf("resnet18 layer %d (%s) points to layer %d (%s)", i, net.Layers[i].Name, j, net.Layers[j].Name)
		}
		for k := range j {
			if net.Layers[k].Config == net.Layers[i].Config {
				t.Fatalf("resnet18 layer %d points to %d, but layer %d before it has its configuration", i, j, k)
			}
		}
		if j < i {
			repeated++
		}
	}
	if repeated == 0 {
		t.Error("no resnet18 layer repeats an earlier configuration: the test tries nothing")
	}
	if again := e.firstLayers(net); &again[0] != &first[0] {
		t.Error("a second call worked the network out again")
	}
}

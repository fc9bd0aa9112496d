package predictor

import (
	"reflect"
	"slices"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// The batches a curve reads the step of: every point's per-GPU batch that fits, and
// the per-GPU batch of its epoch's last, partial step.
func TestStepsRead(t *testing.T) {
	tests := []struct {
		name      string
		batches   []int
		gpus      int
		images    int
		perGPUMax int
		want      []int
	}{
		{"whole epochs", []int{8, 16, 100}, 1, 1000, -1, []int{8, 16, 100}},
		{"partial last steps", []int{8, 16, 100}, 1, 1001, -1, []int{1, 8, 9, 16, 100}},
		{"per GPU", []int{8, 16, 100}, 4, 1001, -1, []int{1, 2, 3, 4, 25}},
		{"beyond memory read nothing", []int{8, 16, 100}, 4, 1001, 10, []int{1, 2, 3, 4}},
		{"an epoch smaller than the batch", []int{64}, 1, 50, -1, []int{50, 64}},
	}
	for _, tc := range tests {
		req := Request{Machine: hw.Machine{GPUCount: tc.gpus}, Batches: tc.batches, Run: Run{Epochs: 1, Images: tc.images}}
		if got := req.stepsRead(tc.perGPUMax); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A curve reads a dense table where its points that fit are at least a quarter of the
// per-GPU batches up to the largest, a sparse one where they are fewer, none where
// none fits.
func TestReadsSteps(t *testing.T) {
	upTo := func(hi, step int) []int {
		var out []int
		for b := step; b <= hi; b += step {
			out = append(out, b)
		}
		return out
	}
	tests := []struct {
		name      string
		batches   []int
		gpus      int
		perGPUMax int
		want      int
	}{
		{"every batch", upTo(1024, 1), 1, -1, readsDense},
		{"every batch over 8 GPUs", upTo(8192, 8), 8, -1, readsDense},
		{"a window's grid", windowGrid(50000), 1, -1, readsSome},
		{"the grid cut by memory", windowGrid(50000), 1, 64, readsDense},
		{"4 of 16", []int{1, 2, 3, 16}, 1, -1, readsDense},
		{"4 of 17", []int{1, 2, 3, 17}, 1, -1, readsSome},
		{"one batch", []int{256}, 1, -1, readsSome},
		{"nothing fits", []int{256, 512}, 1, 100, readsNone},
	}
	for _, tc := range tests {
		req := Request{Machine: hw.Machine{GPUCount: tc.gpus}, Batches: tc.batches}
		if got := req.readsSteps(tc.perGPUMax); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// windowGrid is a window-like grid: every batch to 64, then multiples of 8 to 512 and
// of 128 to hi.
func windowGrid(hi int) []int {
	var out []int
	for b := 1; b <= hi; b++ {
		if b <= 64 || b <= 512 && b%8 == 0 || b%128 == 0 {
			out = append(out, b)
		}
	}
	return out
}

// A curve over a sparse grid works out only the steps it reads (a sparse table), and
// they are bit for bit the dense table's: the same networks, stacks, precisions,
// GPU counts and epochs give the same curve either way.
func TestSparseTablesMatchDense(t *testing.T) {
	model := kernels.NewModel(nil, []hw.GPU{a100}, nil, nil)
	tests := []struct {
		net       string
		framework Framework
		precision measure.Precision
		gpus      int
		images    int
	}{
		{"resnet50", PyTorch2, measure.AMP, 1, 50000},
		{"resnet50", Compiled, measure.AMP, 8, ImageNetImages},
		{"mobilenet_v2", PyTorch1, measure.FP32, 1, 50000},
		{"efficientnet_b0", Optimized, measure.AMP, 4, 12345},
		{"vgg11", Graph, measure.FP32Strict, 2, 50000},
	}
	for _, tc := range tests {
		net, err := cnn.Build(tc.net, cnn.Options{Resolution: 32, Classes: 100})
		if err != nil {
			t.Fatal(err)
		}
		req := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: tc.gpus, PriceUSDPerHour: 3}, GPU: a100,
			Precision: tc.precision, Policy: measure.Heuristic, Framework: tc.framework, MemoryFormat: NCHW,
			Run: Run{Epochs: 30, Images: tc.images}}
		for _, b := range windowGrid(8192) {
			if b >= tc.gpus && b%tc.gpus == 0 {
				req.Batches = append(req.Batches, b)
			}
		}
		sparse := NewEngine(model, DefaultOverheads, DefaultMemoryModel)
		got, err := sparse.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		dense := NewEngine(model, DefaultOverheads, DefaultMemoryModel)
		dense.table(req, req.Batches[len(req.Batches)-1]/tc.gpus) // every per-GPU batch up to the last
		want, err := dense.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			for i := range got.Points {
				if got.Points[i] != want.Points[i] {
					t.Errorf("%s %s on %d GPUs: batch %d: %+v from a sparse table, %+v from a dense one", tc.net, tc.framework, tc.gpus,
						got.Points[i].Batch, got.Points[i], want.Points[i])
					break
				}
			}
			t.Errorf("%s %s on %d GPUs: the curves differ", tc.net, tc.framework, tc.gpus)
		}
		_, st := sparse.stepTableOf(&req)
		_, dt := dense.stepTableOf(&req)
		if st.arrays.batches == nil || dt.arrays.batches != nil {
			t.Errorf("%s: the window's grid filled a table of %d entries (sparse %v); the dense one %d (sparse %v)",
				tc.net, len(st.arrays.stepMS), st.arrays.batches != nil, len(dt.arrays.stepMS), dt.arrays.batches != nil)
		}
		if n, max := len(st.arrays.stepMS), req.Batches[len(req.Batches)-1]/tc.gpus; n*sparseBelow > max {
			t.Errorf("%s: the sparse table holds %d steps of the %d up to its largest", tc.net, n, max)
		}
	}
}

// A sparse table gains the batches a later curve reads that it lacks (a machine of
// more GPUs of the same kind, a longer grid) and keeps the ones it had; the engine
// counts what it holds; a dense request afterwards replaces it with a dense table.
func TestSparseTableGrowsByWhatItLacks(t *testing.T) {
	model := kernels.NewModel(nil, []hw.GPU{a100}, nil, nil)
	net, err := cnn.Build("resnet18", cnn.Options{Resolution: 32, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(model, DefaultOverheads, DefaultMemoryModel)
	request := func(gpus int, batches []int) Request {
		var bs []int
		for _, b := range batches {
			if b >= gpus && b%gpus == 0 {
				bs = append(bs, b)
			}
		}
		return Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: gpus}, GPU: a100, Precision: measure.AMP,
			Policy: measure.Heuristic, Batches: bs, Run: Run{Epochs: 10, Images: 50000}}
	}
	var held []int
	for step, req := range []Request{request(1, windowGrid(2048)), request(8, windowGrid(16384)), request(1, windowGrid(4096))} {
		got, err := e.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewEngine(model, DefaultOverheads, DefaultMemoryModel).Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: the curve from a grown table differs from a fresh engine's", step)
		}
		_, tab := e.stepTableOf(&req)
		a := tab.arrays
		wanted := req.stepsRead(-1)
		if a.batches == nil || len(a.missing(wanted)) > 0 || len(a.missing(held)) > 0 || !slices.IsSorted(a.batches) {
			t.Fatalf("request %d: the table (sparse %v) lacks %v of what the curve read and %v of what it held",
				step, a.batches != nil, a.missing(wanted), a.missing(held))
		}
		if len(slices.Compact(slices.Clone(a.batches))) != len(a.batches) {
			t.Errorf("request %d: a batch is held twice", step)
		}
		held = a.batches
		e.mu.Lock()
		counted, size := e.tableBytes, tab.size
		e.mu.Unlock()
		if counted != a.bytes() || size != a.bytes() {
			t.Errorf("request %d: %d bytes counted, %d for the table; it takes %d", step, counted, size, a.bytes())
		}
	}
	every := request(1, nil)
	for b := 1; b <= 300; b++ {
		every.Batches = append(every.Batches, b)
	}
	if _, err := e.Curve(every); err != nil {
		t.Fatal(err)
	}
	if _, tab := e.stepTableOf(&every); !tab.arrays.denseTo(300) {
		t.Errorf("a curve of every batch to 300 left a table that is not dense to 300")
	}
}

// A curve predicted into the points of one before it (Request.Points) is the curve
// predicted into new ones: nothing of the earlier curve is left in it, not at the
// batches that no longer fit in memory either.
func TestCurveIntoReusedPoints(t *testing.T) {
	model := kernels.NewModel(nil, []hw.GPU{a100}, nil, nil)
	e := NewEngine(model, DefaultOverheads, DefaultMemoryModel)
	small, err := cnn.Build("resnet18", cnn.Options{Resolution: 32, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	big, err := cnn.Build("vgg16", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var batches []int
	for b := 1; b <= 4096; b *= 2 {
		batches = append(batches, b)
	}
	request := func(net *cnn.Network) Request {
		return Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 1, PriceUSDPerHour: 2}, GPU: a100, Precision: measure.AMP,
			Policy: measure.Heuristic, Batches: batches, Run: Run{Epochs: 10, Images: 50000}}
	}
	first, err := e.Curve(request(small))
	if err != nil {
		t.Fatal(err)
	}
	reused := request(big)
	reused.Points = first.Points
	got, err := e.Curve(reused)
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.Curve(request(big))
	if err != nil {
		t.Fatal(err)
	}
	if &got.Points[0] != &first.Points[0] {
		t.Error("the curve did not use the points it was given")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("into reused points: %+v\nnew points: %+v", got.Points, want.Points)
	}
	if fits := want.Points[len(want.Points)-1].Fits; fits {
		t.Errorf("vgg16 at batch %d fits in an A100: the test wants batches beyond memory", batches[len(batches)-1])
	}
}

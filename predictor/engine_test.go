package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// linearTimer times every phase of a configuration as perSample[op][phase] × batch
// milliseconds, so that step times can be summed by hand.
type linearTimer struct {
	perSample map[cnn.Op]map[measure.Phase]float64
	scale     float64
	source    Source
	relErr    float64
}

func (lt linearTimer) Times(_ kernels.Device, r kernels.Request, batches []int, out []kernels.Estimate) {
	for i, b := range batches {
		out[i] = kernels.Estimate{MS: lt.scale * lt.perSample[r.Config.Op][r.Phase] * float64(b), Source: lt.source, RelErr: lt.relErr}
	}
}

func newLinearTimer(scale float64) linearTimer {
	return linearTimer{scale: scale, source: Estimated, relErr: 0.1, perSample: map[cnn.Op]map[measure.Phase]float64{
		cnn.OpConv2d:  {measure.Forward: 1, measure.BackwardData: 2, measure.BackwardWeights: 3},
		cnn.OpReLU:    {measure.Forward: 0.5, measure.BackwardData: 0.5},
		cnn.OpAdd:     {measure.Forward: 0.25, measure.BackwardData: 0.25},
		cnn.OpFlatten: {},
		cnn.OpLinear:  {measure.Forward: 1, measure.BackwardData: 1, measure.BackwardWeights: 1},
		cnn.OpLoss:    {measure.Forward: 0.1, measure.BackwardData: 0.1},
	}}
}

// tinyNet is conv1 → relu (in place) → conv2 → conv3 (the same configuration) → add
// (relu + conv3) → flatten → linear → loss, on 3×8×8 images.
func tinyNet() *cnn.Network {
	img := cnn.Shape{C: 3, H: 8, W: 8}
	feat := cnn.Shape{C: 4, H: 8, W: 8}
	conv := func(name string, in cnn.Shape, input int) cnn.Layer {
		return cnn.Layer{Name: name, Config: cnn.Config{Op: cnn.OpConv2d, In: in, Out: feat, NumInputs: 1,
			Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1},
			Inputs: []int{input}, InShapes: []cnn.Shape{in}, Params: int64(in.C * feat.C * 9)}
	}
	flat := cnn.Shape{C: 256, H: 1, W: 1}
	out := cnn.Shape{C: 10, H: 1, W: 1}
	return &cnn.Network{Name: "tiny", Input: img, Classes: 10, Layers: []cnn.Layer{
		conv("conv1", img, -1),
		{Name: "relu", Config: cnn.Config{Op: cnn.OpReLU, In: feat, Out: feat, NumInputs: 1}, Inputs: []int{0}, InShapes: []cnn.Shape{feat}, InPlace: true},
		conv("conv2", feat, 1),
		conv("conv3", feat, 2),
		{Name: "add", Config: cnn.Config{Op: cnn.OpAdd, In: feat, Out: feat, NumInputs: 2}, Inputs: []int{1, 3}, InShapes: []cnn.Shape{feat, feat}},
		{Name: "flatten", Config: cnn.Config{Op: cnn.OpFlatten, In: feat, Out: flat, NumInputs: 1}, Inputs: []int{4}, InShapes: []cnn.Shape{feat}},
		{Name: "fc", Config: cnn.Config{Op: cnn.OpLinear, In: flat, Out: out, NumInputs: 1, Bias: true}, Inputs: []int{5}, InShapes: []cnn.Shape{flat}, Params: 2570},
		{Name: "loss", Config: cnn.Config{Op: cnn.OpLoss, In: out, Out: cnn.Shape{C: 1, H: 1, W: 1}, NumInputs: 1}, Inputs: []int{6}, InShapes: []cnn.Shape{out}},
	}}
}

// Per sample: forward 1+0.5+1+1+0.25+1+0.1 = 4.85 ms; backward 0.1 (loss) + 2 (fc) +
// 5 (conv3) + 5 (conv2) + 0.5 (relu) + 3 (conv1: weights only, its input is the
// image) = 15.6 ms; add passes its gradient through without a kernel.
const tinyPerSampleMS = 4.85 + 15.6

// tinyKernels is how many kernels tinyNet launches: 7 forward (flatten is a view),
// 9 backward.
const tinyKernels = 16

func noOverheads() Overheads {
	return Overheads{MemoryEfficiency: 1, NVLinkAllReduceEfficiency: 1, PCIeAllReduceEfficiency: 1, OverlapFraction: 0, BucketBytes: 25 << 20,
		MaxSweetSpots: 5, SweetSpotJumpPct: 3}
}

var testGPU = hw.GPU{ID: "test-gpu", MemoryGB: 16, MemoryBandwidthGBs: 1000, TDPW: 300, ComputeCapability: "7.0",
	InterconnectGBs: 100}

func TestStepSumsEveryKernelOnce(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1, PriceUSDPerHour: 3.6},
		GPU: testGPU, Precision: measure.FP32, Batches: []int{1, 2, 7}, Run: Run{Epochs: 2, Images: 10}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Points {
		if want := tinyPerSampleMS * float64(p.Batch); math.Abs(p.IterMS-want) > 1e-9 {
			t.Errorf("batch %d: step %v ms, want %v ms", p.Batch, p.IterMS, want)
		}
	}
	// Batch 7 over 10 images: one step of 7 and one of 3; two epochs; $3.6/h.
	p := c.Points[2]
	wantEpoch := tinyPerSampleMS * 10 / 1000
	if math.Abs(p.EpochS-wantEpoch) > 1e-9 || math.Abs(p.TotalS-2*wantEpoch) > 1e-9 {
		t.Errorf("batch 7: epoch %v s total %v s, want %v and %v", p.EpochS, p.TotalS, wantEpoch, 2*wantEpoch)
	}
	if want := 2 * wantEpoch / 3600 * 3.6; math.Abs(p.CostUSD-want) > 1e-12 || !c.CostKnown {
		t.Errorf("batch 7: cost $%v (known %t), want $%v", p.CostUSD, c.CostKnown, want)
	}
	if p.Source != Estimated || math.Abs(p.ErrorPct-10) > 1e-9 {
		t.Errorf("batch 7: source %q ± %v%%, want estimated ± 10%%", p.Source, p.ErrorPct)
	}
}

func TestStepIsLaunchBoundAtSmallBatches(t *testing.T) {
	over := noOverheads()
	over.LaunchForwardUS, over.LaunchBackwardUS = 1000, 1000 // 1 ms per kernel
	tests := []struct {
		name  string
		scale float64
		batch int
		want  float64
	}{
		// Kernels of microseconds: every kernel waits to be issued; the last one, conv1's
		// weight gradient (3 µs), starts when the 17th is issued.
		{"launch-bound", 0.001, 1, tinyKernels + 0.003},
		// Kernels of hundreds of ms: the host runs ahead; only the first launch shows.
		{"compute-bound", 1, 1000, 1 + tinyPerSampleMS*1000},
	}
	for _, tc := range tests {
		e := NewEngine(newLinearTimer(tc.scale), over, DefaultMemoryModel)
		gpu := testGPU
		gpu.MemoryGB = 0 // unknown: every batch is predicted
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
			Precision: measure.FP32, Batches: []int{tc.batch}, Run: Run{Epochs: 1, Images: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Points[0].IterMS; math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: step %v ms, want %v ms", tc.name, got, tc.want)
		}
		if c.MaxBatch != -1 || c.CostKnown {
			t.Errorf("%s: unknown memory and price should give max batch -1 and unknown cost, got %d and %t", tc.name, c.MaxBatch, c.CostKnown)
		}
	}
}

func TestBatchesBeyondMemoryAreNotPredicted(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	m := DefaultMemoryModel.NetworkMemory(tinyNet(), measure.FP32)
	gpu := testGPU
	// Room for exactly 100 samples.
	gpu.MemoryGB = (m.fixed() + 100.5*m.perSample()) / DefaultMemoryModel.UsableFraction / (1 << 30)
	c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 2}, GPU: gpu,
		Precision: measure.FP32, Batches: []int{200, 201}, Run: Run{Epochs: 1, Images: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxBatch != 200 {
		t.Errorf("max batch over 2 GPUs = %d, want 200", c.MaxBatch)
	}
	fit, over := c.Points[0], c.Points[1]
	if !fit.Fits || fit.IterMS <= 0 {
		t.Errorf("batch 200 (100 per GPU) should fit and be predicted: %+v", fit)
	}
	if over.Fits || over.IterMS != 0 || over.TotalS != 0 || over.Source != "" {
		t.Errorf("batch 201 (101 per GPU) should not fit and carry no times: %+v", over)
	}
	if c.Points[c.Best].Batch != 200 {
		t.Errorf("best batch = %d, want 200", c.Points[c.Best].Batch)
	}
}

func TestDataParallelAddsExposedAllReduce(t *testing.T) {
	over := noOverheads()
	over.OverlapFraction = 0.5
	net := tinyNet()
	e := NewEngine(newLinearTimer(0.001), over, DefaultMemoryModel)
	c, err := e.Curve(Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 4}, GPU: testGPU,
		Precision: measure.FP32, Batches: []int{4, 7}, Run: Run{Epochs: 1, Images: 100}})
	if err != nil {
		t.Fatal(err)
	}
	grads := 4 * float64(net.Params())
	ring := ringAllReduceMS(grads, 4, 100, 0) // the whole gradient fits one bucket: nothing hides
	for i, perGPU := range []int{1, 2} {
		want := 0.001*tinyPerSampleMS*float64(perGPU) + ring
		if got := c.Points[i].IterMS; math.Abs(got-want) > 1e-9 {
			t.Errorf("batch %d (%d per GPU): step %v ms, want %v ms", c.Points[i].Batch, perGPU, got, want)
		}
	}
}

func TestBadRequestsAreRefused(t *testing.T) {
	good := Request{Network: tinyNet(), Machine: hw.Machine{ID: "aws/x", GPUCount: 2}, GPU: testGPU,
		Precision: measure.FP32, Batches: []int{2, 4}, Run: Run{Epochs: 1, Images: 100}}
	tests := []struct {
		name string
		edit func(*Request)
		want string
	}{
		{"no network", func(r *Request) { r.Network = nil }, "no network"},
		{"zero epochs", func(r *Request) { r.Run.Epochs = 0 }, "epochs must be positive"},
		{"negative images", func(r *Request) { r.Run.Images = -5 }, "images per epoch must be positive"},
		{"no batches", func(r *Request) { r.Batches = nil }, "no batch sizes"},
		{"zero batch", func(r *Request) { r.Batches = []int{0, 2} }, "batch size 0"},
		{"descending", func(r *Request) { r.Batches = []int{4, 2} }, "must ascend"},
		{"fewer images than GPUs", func(r *Request) { r.Batches = []int{1, 2} }, "at least one image per GPU"},
		{"unknown precision", func(r *Request) { r.Precision = "fp8" }, "unknown training precision"},
	}
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	if _, err := e.Curve(good); err != nil {
		t.Fatalf("the good request failed: %v", err)
	}
	for _, tc := range tests {
		r := good
		tc.edit(&r)
		if _, err := e.Curve(r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestKernelPrecision(t *testing.T) {
	v100 := hw.GPU{ComputeCapability: "7.0"}
	a100 := hw.GPU{ComputeCapability: "8.0"}
	tests := []struct {
		train measure.Precision
		op    cnn.Op
		gpu   hw.GPU
		want  measure.Precision
	}{
		{measure.FP32, cnn.OpConv2d, a100, measure.TF32},
		{measure.FP32, cnn.OpConv2d, v100, measure.FP32},
		{measure.FP32, cnn.OpLinear, a100, measure.FP32},
		{measure.FP32Strict, cnn.OpConv2d, a100, measure.FP32},
		{measure.AMP, cnn.OpConv2d, v100, measure.AMP},
		{measure.AMP, cnn.OpBatchNorm, a100, measure.AMP},
		{measure.AMP, cnn.OpLoss, a100, measure.FP32},
		{measure.TF32, cnn.OpConv2d, a100, measure.TF32}, // tf32: convolutions ...
		{measure.TF32, cnn.OpLinear, a100, measure.TF32}, // ... and matrix multiplies
		{measure.TF32, cnn.OpBatchNorm, a100, measure.FP32},
		{measure.TF32, cnn.OpLinear, v100, measure.FP32}, // no TF32 before Ampere
		{measure.BF16, cnn.OpConv2d, a100, measure.BF16},
		{measure.BF16, cnn.OpReLU, a100, measure.BF16}, // 16-bit activations
		{measure.BF16, cnn.OpLoss, a100, measure.FP32},
	}
	for _, tc := range tests {
		if got := KernelPrecision(tc.train, tc.op, tc.gpu); got != tc.want {
			t.Errorf("KernelPrecision(%s, %s, cc %s) = %s, want %s", tc.train, tc.op, tc.gpu.ComputeCapability, got, tc.want)
		}
	}
}

func TestCurveCoversTheTableEdges(t *testing.T) {
	e := NewEngine(newLinearTimer(0.001), noOverheads(), DefaultMemoryModel)
	gpu := testGPU
	gpu.MemoryGB = 0
	for _, batches := range [][]int{{1024}, {1, 1025}, {2048, 4096}} {
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
			Precision: measure.FP32, Batches: batches, Run: Run{Epochs: 1, Images: 5000}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range c.Points {
			if want := 0.001 * tinyPerSampleMS * float64(p.Batch); math.Abs(p.IterMS-want) > 1e-9 {
				t.Errorf("batch %d: step %v ms, want %v ms", p.Batch, p.IterMS, want)
			}
		}
	}
}

func TestForwardBackwardOnlyLeavesOutTheUpdate(t *testing.T) {
	over := noOverheads()
	over.UpdateBytesPerParam = 1e6 // a fused update: 2966 params × 1 MB at 1000 GB/s: 2.966 ms
	e := NewEngine(newLinearTimer(1), over, DefaultMemoryModel)
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU,
		Precision: measure.FP32, Batches: []int{3}, Run: Run{Epochs: 1, Images: 3}, Framework: Graph}
	full, err := e.Curve(req)
	if err != nil {
		t.Fatal(err)
	}
	req.ForwardBackwardOnly = true
	fb, err := e.Curve(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * tinyPerSampleMS; math.Abs(fb.Points[0].IterMS-want) > 1e-9 {
		t.Errorf("forward+backward: %v ms, want %v ms", fb.Points[0].IterMS, want)
	}
	if want := 3*tinyPerSampleMS + 2.966; math.Abs(full.Points[0].IterMS-want) > 1e-9 {
		t.Errorf("whole step: %v ms, want %v ms", full.Points[0].IterMS, want)
	}
}

func TestEveryPhaseKernelsRunsViewsAndPassThroughGradients(t *testing.T) {
	timer := newLinearTimer(1)
	timer.perSample[cnn.OpFlatten] = map[measure.Phase]float64{measure.Forward: 0.5, measure.BackwardData: 0.5}
	e := NewEngine(timer, noOverheads(), DefaultMemoryModel)
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "cpu", GPUCount: 1}, GPU: testGPU,
		Precision: measure.FP32, Batches: []int{2}, Run: Run{Epochs: 1, Images: 2}, ForwardBackwardOnly: true}
	tests := []struct {
		rule KernelRule
		want float64 // ms per sample
	}{
		{FrameworkKernels, tinyPerSampleMS},
		// The add's data gradient (0.25) and the flatten's copy both ways (0.5 + 0.5) run too.
		{EveryPhaseKernels, tinyPerSampleMS + 0.25 + 1},
	}
	for _, tc := range tests {
		req.Kernels = tc.rule
		c, err := e.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Points[0].IterMS; math.Abs(got-2*tc.want) > 1e-9 {
			t.Errorf("rule %d: step %v ms, want %v ms", tc.rule, got, 2*tc.want)
		}
	}
}

func TestSynchronousDeviceAddsIssueToEveryKernel(t *testing.T) {
	over := noOverheads()
	over.Synchronous = true
	over.LaunchForwardUS, over.LaunchBackwardUS = 1000, 500 // 1 ms and 0.5 ms
	e := NewEngine(newLinearTimer(1), over, DefaultMemoryModel)
	c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "cpu", GPUCount: 1}, GPU: testGPU,
		Precision: measure.FP32, Batches: []int{4}, Run: Run{Epochs: 1, Images: 4}, ForwardBackwardOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	// 7 forward kernels × 1 ms and 9 backward × 0.5 ms on top of the kernels' own time.
	if want := 4*tinyPerSampleMS + 7 + 4.5; math.Abs(c.Points[0].IterMS-want) > 1e-9 {
		t.Errorf("step %v ms, want %v ms", c.Points[0].IterMS, want)
	}
}

// The engine keeps its step tables within its limit, dropping the least recently used,
// and a curve is the same whether its table was kept, dropped or never made.
func TestEngineBoundsItsStepTables(t *testing.T) {
	gpu := testGPU
	gpu.MemoryGB = 0 // unknown memory: every batch is predicted
	request := func(gpuID string, batches []int) Request {
		g := gpu
		g.ID = gpuID
		return Request{Network: tinyNet(), Machine: hw.Machine{ID: "m-" + gpuID, GPUCount: 1}, GPU: g,
			Precision: measure.FP32, Batches: batches, Run: Run{Epochs: 1, Images: 5000}}
	}
	bounded := NewEngine(newLinearTimer(0.001), noOverheads(), DefaultMemoryModel)
	bounded.tableLimit = 3 * (2048 + 1) * stepEntryBytes // three tables of 1..2048
	ids := []string{"a", "b", "c", "d", "e", "a", "b"}
	for round, id := range ids {
		var batches []int // every batch: a dense table
		for b := 1; b <= 1500+round; b++ {
			batches = append(batches, b)
		}
		got, err := bounded.Curve(request(id, batches))
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewEngine(newLinearTimer(0.001), noOverheads(), DefaultMemoryModel).Curve(request(id, batches))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got.Points {
			if got.Points[i] != want.Points[i] {
				t.Errorf("GPU %s batch %d: %+v with a bounded cache, %+v from a fresh engine", id, batches[i], got.Points[i], want.Points[i])
			}
		}
		bounded.mu.Lock()
		kept, bytes, sum := len(bounded.tables), bounded.tableBytes, 0
		for _, tab := range bounded.tables {
			sum += tab.size
		}
		bounded.mu.Unlock()
		if bytes > bounded.tableLimit || kept > 3 || sum != bytes {
			t.Errorf("after GPU %s: %d tables kept, %d bytes counted (%d summed), limit %d", id, kept, bytes, sum, bounded.tableLimit)
		}
	}
}

// A curve reads its step table without a lock while another request may grow it (a
// machine with more GPUs of the same kind, or a larger batch): the figures a table
// handed out must stay as they were. An export once wrote, now and then, epoch times
// of zero-time steps because a growing table was refilled in place under its reader.
func TestStepTablesAreNotChangedUnderTheirReaders(t *testing.T) {
	gpu := testGPU
	gpu.MemoryGB = 0
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
		Precision: measure.FP32, Batches: []int{8}, Run: Run{Epochs: 1, Images: 1001}}
	e := NewEngine(newLinearTimer(0.001), noOverheads(), DefaultMemoryModel)
	read := e.table(req, 60)
	size, step := len(read.stepMS), read.stepMS[8]
	if grown := e.table(req, 5000); len(grown.stepMS) <= 5000 || grown.stepMS[8] != step {
		t.Fatalf("the grown table has %d entries, step %v at batch 8; want more than 5000 and %v", len(grown.stepMS), grown.stepMS[8], step)
	}
	if len(read.stepMS) != size || read.stepMS[8] != step {
		t.Errorf("a table handed out changed when another request grew it: %d entries, step %v at batch 8; it had %d and %v",
			len(read.stepMS), read.stepMS[8], size, step)
	}
}

// An epoch's shorter last step is read from the curve's own point at that batch where
// it has one (a run of consecutive batches), else worked out: either way the epoch,
// total, cost and energy are, to the bit, those of the batch predicted on its own.
func TestEpochsLastStepIsTheStepAtItsBatch(t *testing.T) {
	over := noOverheads()
	over.OverlapFraction = 0.5
	e := NewEngine(newLinearTimer(0.001), over, DefaultMemoryModel)
	consecutive := make([]int, 96)
	for i := range consecutive {
		consecutive[i] = i + 1
	}
	for _, tc := range []struct {
		name    string
		gpus    int
		batches []int
	}{
		{"one GPU, 1-96", 1, consecutive},
		{"two GPUs, 2-96", 2, consecutive[1:]},
		{"two GPUs, 3-96", 2, consecutive[2:]},
		{"one GPU, apart", 1, []int{3, 5, 8, 33, 64, 96}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: tc.gpus, PriceUSDPerHour: 3}, GPU: testGPU,
				Precision: measure.FP32, Batches: tc.batches, Run: Run{Epochs: 1, Images: 1000}}
			c, err := e.Curve(req)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.Points {
				if p.Batch%tc.gpus != 0 || 1000%p.Batch == 0 {
					continue // no shorter last step, or one the GPUs cannot share
				}
				alone := req
				alone.Batches = []int{p.Batch}
				one, err := e.Curve(alone)
				if err != nil {
					t.Fatal(err)
				}
				want := one.Points[0]
				if !p.Fits || p.EpochS != want.EpochS || p.TotalS != want.TotalS || p.CostUSD != want.CostUSD || p.EnergyKWh != want.EnergyKWh {
					t.Errorf("batch %d: epoch %v s, total %v s, $%v, %v kWh; alone %v s, %v s, $%v, %v kWh",
						p.Batch, p.EpochS, p.TotalS, p.CostUSD, p.EnergyKWh, want.EpochS, want.TotalS, want.CostUSD, want.EnergyKWh)
				}
			}
		})
	}
}

package cudakern_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strings"
	"testing"

	"cnntime/gpu/cudakern"
	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// h100SMs is the SM count of an H100 SXM: the GPU the first real runs are on.
const h100SMs = 132

const (
	// maxSerial bounds the elements any one thread of any launch reads one after another:
	// a few thousand, where one thread walking a column of ConvNeXt's layer norm read
	// 802,816.
	maxSerial = 4096
	// smallWork is a launch too small to matter whatever its grid: it reads fewer
	// elements than a few microseconds of memory bandwidth move.
	smallWork = 1 << 20
)

// TestLaunchesFillTheGPU checks the launch geometry of every layer of ConvNeXt-T and
// ResNet-50 that the worker's own kernels run, in every phase, at batch 256 (the sizes
// where a serial reduction showed: ConvNeXt's layer norms reduce 802,816 rows) and at
// batch 32 on an H100: at least one block per SM for every launch that reads more than
// smallWork elements, and no thread reading more than maxSerial elements in sequence.
func TestLaunchesFillTheGPU(t *testing.T) {
	kernels := map[string]bool{}
	for _, model := range []string{"convnext_tiny", "resnet50"} {
		net, err := cnn.Build(model, cnn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		configs, _ := net.Configs()
		for _, batch := range []int{32, 256} {
			for _, c := range configs {
				p, err := cudakern.Build(c, batch, h100SMs)
				if errors.Is(err, cudakern.ErrNoKernel) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", c.Key(), err)
				}
				for _, phase := range measure.Phases {
					for _, l := range p.Phases[phase] {
						kernels[l.Kernel] = true
						for _, problem := range launchProblems(l) {
							t.Errorf("%s %s at batch %d: %s", c.Key(), phase, batch, problem)
						}
					}
				}
			}
		}
	}
	// The reductions the issue named are among those checked.
	for _, k := range []string{"rownorm_fwd", "rownorm_bwd", "rownorm_wgrad", "column_sum", "plane_dot", "plane_mean", "xent_fwd"} {
		if !kernels[k] {
			t.Errorf("no layer of ConvNeXt-T or ResNet-50 launches %s", k)
		}
	}
}

// launchProblems says what is wrong with a launch's geometry on an H100.
func launchProblems(l cudakern.Launch) []string {
	var out []string
	if l.Block != cudakern.Block || l.Grid < 1 {
		out = append(out, fmt.Sprintf("%s launches %d blocks of %d threads", l.Kernel, l.Grid, l.Block))
	}
	if l.Serial > maxSerial {
		out = append(out, fmt.Sprintf("a thread of %s reads %d elements in sequence (at most %d)", l.Kernel, l.Serial, maxSerial))
	}
	if l.Grid < h100SMs && l.Elems > smallWork {
		out = append(out, fmt.Sprintf("%s reads %d elements with %d blocks on %d SMs", l.Kernel, l.Elems, l.Grid, h100SMs))
	}
	return out
}

// TestLaunchProblemsFlagTheSerialReductions: the launches the worker made before its
// reductions were trees fail the check above. ConvNeXt-T's first layer norm at batch
// 256 had one thread per column (96) sum 802,816 rows for the weight gradient, and one
// thread per row of 96 for the statistics.
func TestLaunchProblemsFlagTheSerialReductions(t *testing.T) {
	const rows, c = 256 * 56 * 56, 96
	old := []cudakern.Launch{
		{Kernel: "rownorm_wgrad", Grid: 1, Block: cudakern.Block, Serial: rows * 2, Elems: rows * c * 2},
		{Kernel: "column_sum", Grid: 2, Block: cudakern.Block, Serial: rows, Elems: rows * 384},
	}
	for _, l := range old {
		if len(launchProblems(l)) != 2 {
			t.Errorf("%s with %d blocks and %d elements per thread: problems %q, want both", l.Kernel, l.Grid, l.Serial, launchProblems(l))
		}
	}
}

// TestLayerNormIsAWarpPerRow: ConvNeXt's first layer norm at batch 256 (802,816 rows of
// 96 channels) is reduced by one warp per row, eight rows per block, and its weight
// gradient by blocks of 32 columns over chunks of rows (not one thread per column over
// every row).
func TestLayerNormIsAWarpPerRow(t *testing.T) {
	s := cnn.Shape{C: 96, H: 56, W: 56}
	p, err := cudakern.Build(cnn.Config{Op: cnn.OpLayerNorm, In: s, Out: s, NumInputs: 1}, 256, h100SMs)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 256 * 56 * 56
	for _, phase := range []measure.Phase{measure.Forward, measure.BackwardData} {
		l := p.Phases[phase][0]
		if g := l.Args[len(l.Args)-1]; g != int64(32) {
			t.Errorf("%s: %s reduces a row with %v threads, want a warp (32)", phase, l.Kernel, g)
		}
		if l.Grid != 32*h100SMs { // the grid-stride cap: 4,224 blocks, 24 rows per warp
			t.Errorf("%s: %d blocks, want %d", phase, l.Grid, 32*h100SMs)
		}
	}
	w := p.Phases[measure.BackwardWeights]
	if len(w) != 3 || w[0].Kernel != "rownorm_wgrad" || w[1].Kernel != "column_sum" || w[2].Kernel != "column_sum" {
		t.Fatalf("weight-gradient launches %v: want rownorm_wgrad, then column_sum for dγ and dβ", w)
	}
	chunks := w[0].Args[len(w[0].Args)-3].(int64) // then the column tiles and the rows per chunk
	if perLane := (rows + chunks - 1) / chunks / 8; int64(w[0].Grid) != 3*chunks || perLane > 128 {
		t.Errorf("rownorm_wgrad: %d blocks over %d chunks (%d rows per thread): want 3 column tiles × chunks of at most 128 rows per thread", w[0].Grid, chunks, perLane)
	}
}

// TestOwnKindsAreTheKernelsBuilt: the self-test's list of the kinds cnntime's own
// kernels run (which it requires to run before it trusts a GPU) is exactly the kinds
// Build has a program for.
func TestOwnKindsAreTheKernelsBuilt(t *testing.T) {
	for _, c := range selftest.Cases() {
		_, err := cudakern.Build(c, 2, h100SMs)
		own := slices.Contains(selftest.OwnKinds, c.Op)
		switch {
		case own && err != nil:
			t.Errorf("%s is in selftest.OwnKinds but Build fails: %v", c.Op, err)
		case !own && err == nil:
			t.Errorf("Build runs %s with cnntime's own kernels but selftest.OwnKinds lacks it", c.Op)
		case !own && !errors.Is(err, cudakern.ErrNoKernel):
			t.Errorf("%s: %v", c.Op, err)
		}
	}
}

// TestPackDivisor checks the kernels' division by a multiply and a shift (udiv in
// kernels.cu, done here as the GPU does it) against Go's for divisors and indices up to
// the 32-bit limit.
func TestPackDivisor(t *testing.T) {
	udiv := func(n uint32, packed uint64) uint32 {
		d, m := uint32(packed), uint32(packed>>32)
		s := uint(32 - bits.LeadingZeros32(d-1))
		hi := uint32((uint64(n) * uint64(m)) >> 32)
		return (hi + n) >> s
	}
	divisors := []int64{1, 2, 3, 5, 7, 8, 9, 10, 31, 32, 49, 56, 96, 196, 768, 1000, 3136, 12544, 65535, 65537, 1 << 20, 1<<30 + 1, cudakern.MaxIndex}
	ns := []uint32{0, 1, 2, 3, 31, 32, 33, 1000, 65535, 65536, 1<<24 + 7, 1<<30 - 1, 1 << 30, cudakern.MaxIndex - 1, cudakern.MaxIndex}
	for i := uint32(0); i < 2000; i++ {
		ns = append(ns, i*1073741+i*i) // spread over the range
	}
	for _, d := range divisors {
		packed, err := cudakern.PackDivisor(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if n > cudakern.MaxIndex {
				continue
			}
			if got, want := udiv(n, packed), n/uint32(d); got != want {
				t.Fatalf("%d / %d = %d by the magic number, want %d", n, d, got, want)
			}
		}
	}
	for _, bad := range []int64{0, -3, cudakern.MaxIndex + 1} {
		if _, err := cudakern.PackDivisor(bad); err == nil {
			t.Errorf("PackDivisor(%d) accepted a divisor out of range", bad)
		}
	}
}

// TestTensorsOver2To31ElementsAreTooLarge: the kernels index in 32 bits; a larger
// tensor is refused (the worker records it unsupported), not indexed wrongly.
func TestTensorsOver2To31ElementsAreTooLarge(t *testing.T) {
	s := cnn.Shape{C: 64, H: 112, W: 112}
	relu := cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}
	if _, err := cudakern.Build(relu, 2048, h100SMs); err != nil { // 1.6 billion elements
		t.Errorf("batch 2048: %v", err)
	}
	if _, err := cudakern.Build(relu, 4096, h100SMs); !errors.Is(err, cudakern.ErrTooLarge) {
		t.Errorf("batch 4096 (3.3 billion elements): %v, want ErrTooLarge", err)
	}
}

// TestRunAllocatesNothing: a run of a program builds no argument lists (the host then
// issues kernels at the driver's rate), and dropout's seed still advances each forward.
func TestRunAllocatesNothing(t *testing.T) {
	s := cnn.Shape{C: 64, H: 14, W: 14}
	p, err := cudakern.Build(cnn.Config{Op: cnn.OpDropout, In: s, Out: s, NumInputs: 1}, 8, h100SMs)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	in := &cudakern.Instance{Program: p, Addrs: make([]uint64, len(p.Buffers)), Launch: func(k string, grid, block int, args []uint64) error {
		if len(seeds) < 3 {
			seeds = append(seeds, args[len(args)-1])
		}
		return nil
	}}
	if err := in.Run(measure.Forward); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = in.Run(measure.Forward) }); allocs != 0 {
		t.Errorf("a forward run allocates %v times", allocs)
	}
	if seeds[0] == seeds[1] || seeds[1] == seeds[2] {
		t.Errorf("dropout seeds %v: each forward run must draw a new mask", seeds)
	}
}

// TestSelfTestRunsTheWarpPerRowLayerNorm: on GPUs of 132 and 256 SMs one of the
// self-test's layer norms is reduced a warp per row, the path real layer norms take
// (72 rows were a block each).
func TestSelfTestRunsTheWarpPerRowLayerNorm(t *testing.T) {
	for _, sms := range []int{h100SMs, 256} {
		paths := map[int64]bool{}
		for _, c := range selftest.Cases() {
			if c.Op != cnn.OpLayerNorm {
				continue
			}
			p, err := cudakern.Build(c, selftest.Batch, sms)
			if err != nil {
				t.Fatal(err)
			}
			l := p.Phases[measure.Forward][0]
			paths[l.Args[len(l.Args)-1].(int64)] = true
		}
		if !paths[32] || !paths[cudakern.Block] {
			t.Errorf("%d SMs: the self-test's layer norms reduce rows with groups of %v threads, want both a warp (32) and a block", sms, paths)
		}
	}
}

// TestH200ElementwiseRowsRunSixteenByteLoads is built from the first real run (an H200,
// app/firstrun/testdata): its element-wise rows (activations and add) ran 1.2 to 1.7
// times slower than PyTorch's, with scalar loads. Every one of those configurations at
// its batch now launches the 16-byte vector kernels PyTorch's vectorised loops use.
func TestH200ElementwiseRowsRunSixteenByteLoads(t *testing.T) {
	raw, err := os.ReadFile("../../app/firstrun/testdata/h200-first-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Layers []struct {
			Config    string  `json:"config"`
			Op        string  `json:"op"`
			Phase     string  `json:"phase"`
			Batch     int     `json:"batch"`
			WorkerMS  float64 `json:"worker_ms"`
			PyTorchMS float64 `json:"pytorch_ms"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	elementwise := map[string]bool{"relu": true, "relu6": true, "silu": true, "hardswish": true, "hardsigmoid": true, "sigmoid": true, "gelu": true, "add": true}
	checked, slower := 0, 0
	for _, l := range rep.Layers {
		if !elementwise[l.Op] {
			continue
		}
		c, err := cnn.ParseKey(l.Config)
		if err != nil {
			t.Fatalf("%s: %v", l.Config, err)
		}
		p, err := cudakern.Build(c, l.Batch, 132)
		if err != nil {
			t.Fatalf("%s at batch %d: %v", l.Config, l.Batch, err)
		}
		for _, launch := range p.Phases[measure.Phase(l.Phase)] {
			if !strings.HasSuffix(launch.Kernel, "_v") {
				t.Errorf("%s %s at batch %d launches %s, not a 16-byte vector kernel", l.Config, l.Phase, l.Batch, launch.Kernel)
			}
		}
		checked++
		if l.WorkerMS > l.PyTorchMS {
			slower++
		}
	}
	if checked < 100 || slower == 0 {
		t.Errorf("%d element-wise rows of the H200 report checked (%d slower than PyTorch's): the report should hold hundreds", checked, slower)
	}
}

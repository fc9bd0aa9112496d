package cudakern_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"cnntime/gpu/cpu"
	"cnntime/gpu/cudakern"
	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// harness builds testdata/harness.cc (kernels.cu on the CPU, host_cuda.h emulating
// CUDA) once per element type; it skips the test where there is no C++20 compiler
// (make test-deps installs g++).
var harness = struct {
	sync.Mutex
	dir  string
	path map[format]string
	err  map[format]error
}{path: map[format]string{}, err: map[format]error{}}

// format is the data type the kernels are compiled for: FP32, FP16 (-DUSE_HALF) or
// bfloat16 (-DUSE_BF16).
type format string

const (
	f32  format = "fp32"
	f16  format = "fp16"
	bf16 format = "bf16"
)

// half says whether the data are 16 bits wide.
func (f format) half() bool { return f != f32 }

func harnessFor(t *testing.T, half format) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++ to build the kernel emulator (make test-deps installs it)")
	}
	harness.Lock()
	defer harness.Unlock()
	if p, ok := harness.path[half]; ok {
		return p
	}
	if err, ok := harness.err[half]; ok {
		t.Fatal(err)
	}
	if harness.dir == "" {
		if harness.dir, err = os.MkdirTemp("", "cudakern-harness"); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := filepath.Abs("testdata/harness.cc")
	kernels, _ := filepath.Abs("kernels.cu")
	out := filepath.Join(harness.dir, fmt.Sprintf("harness-%s", half))
	args := []string{"-std=c++20", "-O1", "-pthread", "-Wall", "-Werror", "-Wno-unused-function", fmt.Sprintf("-DKERNELS=%q", kernels), "-o", out, src}
	switch half {
	case f16:
		args = append([]string{"-DUSE_HALF"}, args...)
	case bf16:
		args = append([]string{"-DUSE_BF16"}, args...)
	}
	if msg, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
		harness.err[half] = fmt.Errorf("kernels.cu does not compile as C++ on the CPU emulator (half %v): %v\n%s", half, err, msg)
		t.Fatal(harness.err[half])
	}
	harness.path[half] = out
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if harness.dir != "" {
		os.RemoveAll(harness.dir)
	}
	os.Exit(code)
}

// launch is one kernel launch as the emulator takes it.
type launch struct {
	kernel      string
	grid, block int
	args        []uint64
	bufs        []bool // which arguments are buffers (args holds their indices)
}

// emulate runs launches over buffers (their bytes) in the emulator and returns the
// buffers afterwards.
func emulate(t *testing.T, half format, bufs [][]byte, launches []launch) [][]byte {
	t.Helper()
	var in bytes.Buffer
	w := func(v uint64) { _ = binary.Write(&in, binary.LittleEndian, v) }
	pad := func(b []byte) { in.Write(b); in.Write(make([]byte, (8-len(b)%8)%8)) }
	w(uint64(len(bufs)))
	for _, b := range bufs {
		w(uint64(len(b)))
		pad(b)
	}
	w(uint64(len(launches)))
	for _, l := range launches {
		w(uint64(len(l.kernel)))
		pad([]byte(l.kernel))
		w(uint64(l.grid))
		w(uint64(l.block))
		w(uint64(len(l.args)))
		for i, a := range l.args {
			kind := uint64(0)
			if l.bufs[i] {
				kind = 1
			}
			w(kind)
			w(a)
		}
	}
	cmd := exec.Command(harnessFor(t, half))
	cmd.Stdin = &in
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kernel emulator: %v: %s", err, errOut.String())
	}
	res := make([][]byte, len(bufs))
	data := out.Bytes()
	for i, b := range bufs {
		if len(data) < len(b) {
			t.Fatalf("kernel emulator returned %d bytes too few", len(b)-len(data))
		}
		res[i], data = data[:len(b)], data[len(b):]
	}
	return res
}

func encode(v []float32, half format) []byte {
	var b bytes.Buffer
	switch half {
	case f16:
		_ = binary.Write(&b, binary.LittleEndian, selftest.ToHalf(v))
	case bf16:
		_ = binary.Write(&b, binary.LittleEndian, selftest.ToBF16(v))
	default:
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

func decode(b []byte, half format) []float32 {
	if half.half() {
		h := make([]uint16, len(b)/2)
		_ = binary.Read(bytes.NewReader(b), binary.LittleEndian, h)
		if half == bf16 {
			return selftest.FromBF16(h)
		}
		return selftest.FromHalf(h)
	}
	v := make([]float32, len(b)/4)
	_ = binary.Read(bytes.NewReader(b), binary.LittleEndian, v)
	return v
}

// runOnCPU runs phase of program p as the worker does (the forward pass first for a
// backward phase), with the reference's values uploaded and every other buffer full of
// noise (a result the kernels fail to write shows), and returns what the self-test
// reads back beside the reference's values. It also returns the launches, for the
// caller to check their geometry.
func runOnCPU(t *testing.T, p *cudakern.Program, ref *cpu.Reference, phase measure.Phase, half format) (got, want [][]float32, ls []launch) {
	t.Helper()
	elemHalf := func(e cudakern.Elem) format {
		if e == cudakern.Data {
			return half
		}
		return f32
	}
	bufs := make([][]byte, len(p.Buffers))
	noise := uint32(12345)
	for i, b := range p.Buffers {
		bufs[i] = make([]byte, b.Elems*b.Elem.Bytes(half.half()))
		for j := range bufs[i] {
			noise = noise*1664525 + 1013904223
			bufs[i][j] = byte(noise >> 24)
		}
		if b.Elem != cudakern.Index { // noise that is a number: finite values of either type
			v := make([]float32, b.Elems)
			for j := range v {
				noise = noise*1664525 + 1013904223
				v[j] = float32(int32(noise))/float32(math.MaxInt32)*7 + 100
			}
			bufs[i] = encode(v, elemHalf(b.Elem))
		}
	}
	for _, tr := range p.In {
		v, err := tr.Values(ref)
		if err != nil {
			t.Fatal(err)
		}
		b := p.Buffers[tr.Buf]
		if int64(len(v)) != b.Elems {
			t.Fatalf("upload of %s: the reference has %d values, the buffer %d", b.Name, len(v), b.Elems)
		}
		bufs[tr.Buf] = encode(v, elemHalf(b.Elem))
	}
	addrs := make([]uint64, len(p.Buffers))
	for i := range addrs {
		addrs[i] = uint64(i)
	}
	// The launches in the order the worker makes them: the forward pass first for a
	// backward phase, then the phase; which of their arguments are buffers.
	var order []cudakern.Launch
	if phase != measure.Forward {
		order = append(order, p.Phases[measure.Forward]...)
	}
	order = append(order, p.Phases[phase]...)
	in := &cudakern.Instance{Program: p, Addrs: addrs, Launch: func(k string, grid, block int, args []uint64) error {
		l := order[len(ls)]
		bufs := make([]bool, len(l.Args))
		for i, a := range l.Args {
			_, bufs[i] = a.(cudakern.Buf)
		}
		ls = append(ls, launch{k, grid, block, append([]uint64(nil), args...), bufs}) // args is reused after the call
		return nil
	}}
	if err := in.Prepare(phase); err != nil {
		t.Fatal(err)
	}
	if err := in.Run(phase); err != nil {
		t.Fatal(err)
	}
	res := emulate(t, half, bufs, ls)
	for _, tr := range p.Out[phase] {
		v, err := tr.Values(ref)
		if err != nil {
			t.Fatal(err)
		}
		b := p.Buffers[tr.Buf]
		g := decode(res[tr.Buf], elemHalf(b.Elem))
		if int64(len(v)) != b.Elems {
			t.Fatalf("read-back of %s: the reference has %d values, the buffer %d", b.Name, len(v), b.Elems)
		}
		got, want = append(got, g), append(want, v)
	}
	return got, want, ls
}

// emulated are the configurations the kernels run on the CPU: the self-test's, and
// larger ones whose grid-stride loops go round more than once, whose rows are wider than
// a warp or a block, and whose pooling windows overlap and pad.
func emulated() []cnn.Config {
	var out []cnn.Config
	for _, c := range selftest.Cases() {
		out = append(out, c)
	}
	big := cnn.Shape{C: 40, H: 20, W: 20}
	out = append(out,
		cnn.Config{Op: cnn.OpLayerNorm, In: big, Out: big, NumInputs: 1},
		cnn.Config{Op: cnn.OpBatchNorm, In: big, Out: big, NumInputs: 1},
		cnn.Config{Op: cnn.OpScale, In: big, Out: big, NumInputs: 1},
		cnn.Config{Op: cnn.OpMul, In: big, Out: big, NumInputs: 2},
		cnn.Config{Op: cnn.OpAdaptiveAvg, In: big, Out: cnn.Shape{C: 40, H: 1, W: 1}, NumInputs: 1},
		cnn.Config{Op: cnn.OpAdaptiveAvg, In: cnn.Shape{C: 4, H: 10, W: 10}, Out: cnn.Shape{C: 4, H: 3, W: 3}, NumInputs: 1},
		cnn.Config{Op: cnn.OpMaxPool, In: big, Out: cnn.Shape{C: 40, H: 10, W: 10}, NumInputs: 1,
			Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{2, 2}, Padding: cnn.Pair{1, 1}},
		cnn.Config{Op: cnn.OpLoss, In: cnn.Shape{C: 1000, H: 1, W: 1}, Out: cnn.Shape{C: 1, H: 1, W: 1}, NumInputs: 1},
		cnn.Config{Op: cnn.OpConcat, In: cnn.Shape{C: 9, H: 5, W: 5}, Out: cnn.Shape{C: 9, H: 5, W: 5}, NumInputs: 2},
		cnn.Config{Op: cnn.OpStochasticDepth, In: big, Out: big, NumInputs: 1},
		// Element counts that are no multiple of 8 (2×3×5×5 = 150): the scalar kernels
		// that the 16-byte ones leave these to.
		cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 3, H: 5, W: 5}, Out: cnn.Shape{C: 3, H: 5, W: 5}, NumInputs: 1},
		cnn.Config{Op: cnn.OpAdd, In: cnn.Shape{C: 3, H: 5, W: 5}, Out: cnn.Shape{C: 3, H: 5, W: 5}, NumInputs: 3},
	)
	return out
}

// TestKernelsMatchTheCPUReference runs every layer kind the kernels serve, each phase,
// in FP32 and FP16 data, on the CPU emulator, and compares what the self-test reads back
// with the CPU reference: the reductions (warp and block, one and several rows per
// group), pooling, concat, permute, the loss, the layer scale and dropout included.
func TestKernelsMatchTheCPUReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the kernel emulator (seconds); not with -short")
	}
	groups := map[string]map[uint64]bool{} // row-reduction kernel -> group sizes seen
	kinds := map[cnn.Op]bool{}
	ran := map[string]bool{}
	for _, c := range emulated() {
		const batch = 2
		ref32, err := cpu.NewReference(c, batch, 1)
		if err != nil {
			t.Fatalf("%s: the CPU reference: %v", c.Key(), err)
		}
		ref16, err := cpu.NewRoundedReference(c, batch, 1, selftest.RoundToHalf)
		if err != nil {
			t.Fatalf("%s: the CPU reference: %v", c.Key(), err)
		}
		refBF, err := cpu.NewRoundedReference(c, batch, 1, selftest.RoundToBF16)
		if err != nil {
			t.Fatalf("%s: the CPU reference: %v", c.Key(), err)
		}
		for _, run := range []struct {
			half format
			sms  int
		}{{f32, 1}, {f32, 64}, {f16, 1}, {bf16, 1}} {
			p, err := cudakern.Build(c, batch, run.sms)
			if err != nil {
				continue // cuDNN's, cuBLAS's or a view
			}
			prec, ref := measure.FP32, ref32
			switch run.half {
			case f16:
				prec, ref = measure.AMP, ref16
			case bf16:
				prec, ref = measure.BF16, refBF
			}
			for _, phase := range measure.Phases {
				if _, ok := p.Phases[phase]; !ok {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s/sms=%d", c.Key(), prec, phase, run.sms)
				t.Run(name, func(t *testing.T) {
					if len(p.Out[phase]) == 0 {
						t.Fatal("nothing is read back")
					}
					kinds[c.Op] = true
					got, want, ls := runOnCPU(t, p, ref, phase, run.half)
					for i := range got {
						if e, ok := selftest.Compare(got[i], want[i], prec); !ok {
							t.Errorf("result %d is off by %.3g of its largest value (tolerance %g)\n got %v\nwant %v", i, e, selftest.Tolerance(prec), head(got[i]), head(want[i]))
						}
					}
					for _, l := range ls {
						ran[l.kernel] = true
						switch l.kernel {
						case "plane_dot", "plane_mean", "rownorm_fwd", "rownorm_bwd", "xent_fwd":
							if groups[l.kernel] == nil {
								groups[l.kernel] = map[uint64]bool{}
							}
							groups[l.kernel][l.args[len(l.args)-1]] = true
						}
					}
				})
			}
		}
	}
	for _, op := range []cnn.Op{cnn.OpBatchNorm, cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg, cnn.OpConcat, cnn.OpPermute, cnn.OpLoss,
		cnn.OpScale, cnn.OpDropout, cnn.OpStochasticDepth, cnn.OpLayerNorm, cnn.OpMul, cnn.OpAdd, cnn.OpChannelShuffle, cnn.OpGELU} {
		if !kinds[op] {
			t.Errorf("%s was not run against the reference", op)
		}
	}
	for _, k := range []string{"act_fwd", "act_bwd", "act_fwd_v", "act_bwd_v", "add_v", "binary"} {
		if !ran[k] {
			t.Errorf("kernel %s was not run against the reference", k)
		}
	}
	for _, k := range []string{"plane_dot", "plane_mean", "rownorm_fwd", "rownorm_bwd", "xent_fwd"} {
		if !groups[k][32] || !groups[k][cudakern.Block] {
			t.Errorf("%s ran with groups %v: want both a warp and a block per row", k, groups[k])
		}
	}
}

func head(v []float32) []float32 { return v[:min(len(v), 8)] }

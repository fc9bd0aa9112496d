package gemm_test

import (
	"fmt"
	"math"
	"testing"

	"cnntime/gpu/cpu"
	"cnntime/gpu/gemm"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// sgemm is cublasSgemm's definition on the CPU: column-major C = op(A)·op(B) + beta·C.
func sgemm(c gemm.Call, a, b, out []float32) {
	at := func(i, k int) float32 {
		if c.TransA {
			return a[k+i*c.LDA]
		}
		return a[i+k*c.LDA]
	}
	bt := func(k, j int) float32 {
		if c.TransB {
			return b[j+k*c.LDB]
		}
		return b[k+j*c.LDB]
	}
	for j := 0; j < c.N; j++ {
		for i := 0; i < c.M; i++ {
			var s float64
			for k := 0; k < c.K; k++ {
				s += float64(at(i, k)) * float64(bt(k, j))
			}
			out[i+j*c.LDC] = float32(s) + c.Beta*out[i+j*c.LDC]
		}
	}
}

// run is a call on the CPU: sgemm, then the bias epilogue when the call has one.
func run(c gemm.Call, bufs map[gemm.Operand][]float32) {
	sgemm(c, bufs[c.A], bufs[c.B], bufs[c.C])
	if c.AddBias {
		for j := 0; j < c.N; j++ {
			for i := 0; i < c.M; i++ {
				bufs[c.C][i+j*c.LDC] += bufs[gemm.B][i]
			}
		}
	}
}

// TestForwardWithBiasIsOnePass: with cuBLASLt's epilogue the bias is added by the
// forward GEMM itself, one pass over the output as PyTorch 2's addmm; without it, two.
func TestForwardWithBiasIsOnePass(t *testing.T) {
	for _, c := range []struct {
		l    gemm.Linear
		want int
	}{
		{gemm.Linear{Rows: 64, In: 512, Out: 1000, Bias: true, Epilogue: true}, 1},
		{gemm.Linear{Rows: 64, In: 512, Out: 1000, Bias: true}, 2},
		{gemm.Linear{Rows: 64, In: 512, Out: 1000, Epilogue: true}, 1},
	} {
		calls := c.l.Calls(measure.Forward)
		if len(calls) != c.want {
			t.Errorf("%+v: %d GEMMs per forward pass, want %d", c.l, len(calls), c.want)
		}
		if c.l.Bias && c.l.Epilogue && (!calls[0].AddBias || calls[0].Beta != 0) {
			t.Errorf("%+v: the one forward GEMM %+v must add the bias and overwrite the output", c.l, calls[0])
		}
	}
}

// TestLinearCallsMatchTheCPUReference runs each phase's GEMMs on the CPU reference's
// operands, with the output buffers full of noise as on the GPU, and compares the
// results with the reference: the bias (forward and gradient) included, without any
// kernel of cnntime's own.
func TestLinearCallsMatchTheCPUReference(t *testing.T) {
	cases := []cnn.Config{
		{Op: cnn.OpLinear, In: cnn.Shape{C: 32, H: 1, W: 1}, Out: cnn.Shape{C: 10, H: 1, W: 1}, NumInputs: 1, Bias: true},
		{Op: cnn.OpLinear, In: cnn.Shape{C: 8, H: 3, W: 3}, Out: cnn.Shape{C: 12, H: 3, W: 3}, NumInputs: 1, Bias: true}, // ConvNeXt's MLP
		{Op: cnn.OpLinear, In: cnn.Shape{C: 16, H: 1, W: 1}, Out: cnn.Shape{C: 4, H: 1, W: 1}, NumInputs: 1},
	}
	for _, c := range cases {
		const batch = 3
		ref, err := cpu.NewReference(c, batch, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, epilogue := range []bool{false, true} {
			l := gemm.Linear{Rows: batch * c.In.H * c.In.W, In: c.In.C, Out: c.Out.C, Bias: c.Bias, Epilogue: epilogue}
			for _, phase := range measure.Phases {
				t.Run(fmt.Sprintf("%s/%s/epilogue=%v", c.Key(), phase, epilogue), func(t *testing.T) {
					bufs := map[gemm.Operand][]float32{}
					for op, n := range l.Elems() {
						bufs[op] = make([]float32, n)
						for i := range bufs[op] {
							bufs[op][i] = float32(math.Sin(float64(i)*7.1)) * 50 // noise a missing write leaves
						}
					}
					copy(bufs[gemm.X], ref.Inputs[0])
					copy(bufs[gemm.W], ref.Params[0])
					copy(bufs[gemm.DY], ref.DY)
					if c.Bias {
						copy(bufs[gemm.B], ref.Params[1])
						for i := range bufs[gemm.Ones] {
							bufs[gemm.Ones][i] = 1
						}
					}
					for _, call := range l.Calls(phase) {
						run(call, bufs)
					}
					want := map[measure.Phase]map[gemm.Operand][]float32{
						measure.Forward:         {gemm.Y: ref.Y},
						measure.BackwardData:    {gemm.DX: ref.DX[0]},
						measure.BackwardWeights: {gemm.DW: ref.DParams[0]},
					}[phase]
					if c.Bias && phase == measure.BackwardWeights {
						want[gemm.DB] = ref.DParams[1]
					}
					for op, w := range want {
						for i := range w {
							if d := math.Abs(float64(bufs[op][i] - w[i])); d > 1e-4*(1+math.Abs(float64(w[i]))) {
								t.Fatalf("operand %d element %d = %g, want %g", op, i, bufs[op][i], w[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestPhaseElems: a phase's working set is its calls' distinct operands: the forward
// reads X and W and writes Y (and the bias), the data gradient reads DY and W.
func TestPhaseElems(t *testing.T) {
	l := gemm.Linear{Rows: 64, In: 512, Out: 10, Bias: true, Epilogue: true}
	if got, want := l.PhaseElems(measure.Forward), int64(64*512+10*512+64*10+10); got != want {
		t.Errorf("forward working set %d elements, want %d", got, want)
	}
	if got, want := l.PhaseElems(measure.BackwardData), int64(64*10+10*512+64*512); got != want {
		t.Errorf("data-gradient working set %d elements, want %d", got, want)
	}
}

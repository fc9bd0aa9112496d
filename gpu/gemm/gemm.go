package gemm

import "cnntime/predictor/measure"

// Operand names a linear layer's matrix.
type Operand int

const (
	X    Operand = iota // the input, rows×in (row-major)
	W                   // the weight, out×in (row-major, as PyTorch keeps it)
	B                   // the bias, out
	Y                   // the output, rows×out
	DX                  // the input's gradient
	DY                  // the output's gradient
	DW                  // the weight's gradient
	DB                  // the bias's gradient
	Ones                // rows ones: the bias's broadcast and reduction
)

// Call is one GEMM, column-major: C = op(A)·op(B) + Beta·C, op transposing where
// TransA or TransB says (alpha is 1); with AddBias, the bias (operand B, one value per
// row of C) is added to every column in the same pass: cuBLASLt's bias epilogue
// (cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS), else a cublasGemmEx.
type Call struct {
	TransA, TransB bool
	M, N, K        int
	A              Operand
	LDA            int
	B              Operand
	LDB            int
	C              Operand
	LDC            int
	Beta           float32
	AddBias        bool
}

// Linear is a linear layer applied at rows positions (batch × H × W).
type Linear struct {
	Rows, In, Out int
	Bias          bool
	// Epilogue says the bias can be added by the forward GEMM itself (cuBLASLt loaded):
	// one pass over the output, as PyTorch 2's addmm does through cuBLASLt. Without it
	// the bias is broadcast into the output first and the product added to it, a second
	// pass.
	Epilogue bool
}

// Elems returns every operand's size in elements (absent: the layer has no such
// operand).
func (l Linear) Elems() map[Operand]int64 {
	rows, in, out := int64(l.Rows), int64(l.In), int64(l.Out)
	e := map[Operand]int64{X: rows * in, W: out * in, Y: rows * out, DX: rows * in, DY: rows * out, DW: out * in}
	if l.Bias {
		e[B], e[DB], e[Ones] = out, out, rows
	}
	return e
}

// Calls are the GEMMs of a phase. A row-major matrix is its column-major transpose, so
// the forward pass computes Yᵀ (out×rows) = Wᵀ-as-stored · Xᵀ, and so on.
func (l Linear) Calls(phase measure.Phase) []Call {
	rows, in, out := l.Rows, l.In, l.Out
	switch phase {
	case measure.Forward:
		if l.Bias && l.Epilogue { // Yᵀ = W·Xᵀ + b, one pass
			return []Call{{TransA: true, M: out, N: rows, K: in, A: W, LDA: in, B: X, LDB: in, C: Y, LDC: out, AddBias: true}}
		}
		var calls []Call
		beta := float32(0)
		if l.Bias { // Yᵀ = b · onesᵀ, then Yᵀ += W·Xᵀ
			calls = append(calls, Call{M: out, N: rows, K: 1, A: B, LDA: out, B: Ones, LDB: 1, C: Y, LDC: out})
			beta = 1
		}
		return append(calls, Call{TransA: true, M: out, N: rows, K: in, A: W, LDA: in, B: X, LDB: in, C: Y, LDC: out, Beta: beta})
	case measure.BackwardData: // dXᵀ (in×rows) = Wᵀ · dYᵀ
		return []Call{{M: in, N: rows, K: out, A: W, LDA: in, B: DY, LDB: out, C: DX, LDC: in}}
	case measure.BackwardWeights: // dWᵀ (in×out) = Xᵀ · dY; db (out) = dYᵀ · ones
		calls := []Call{{TransB: true, M: in, N: out, K: rows, A: X, LDA: in, B: DY, LDB: out, C: DW, LDC: in}}
		if l.Bias {
			calls = append(calls, Call{M: out, N: 1, K: rows, A: DY, LDA: out, B: Ones, LDB: rows, C: DB, LDC: out})
		}
		return calls
	}
	return nil
}

// PhaseElems is the elements of the distinct operands a phase's calls read and write
// (the bias of the epilogue included): its working set, which decides whether the phase
// fits in the L2.
func (l Linear) PhaseElems(phase measure.Phase) int64 {
	elems := l.Elems()
	seen := map[Operand]bool{}
	var total int64
	for _, c := range l.Calls(phase) {
		ops := []Operand{c.A, c.B, c.C}
		if c.AddBias {
			ops = append(ops, B)
		}
		for _, o := range ops {
			if !seen[o] {
				seen[o] = true
				total += elems[o]
			}
		}
	}
	return total
}

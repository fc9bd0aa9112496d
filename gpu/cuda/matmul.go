//go:build cuda

package cuda

/*
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"cnntime/gpu/cudastatus"
	"cnntime/gpu/gemm"
)

// cuBLASLt's matmul attributes and epilogue (cublasLt.h of CUDA 11, 12 and 13 agree).
const (
	ltTransA       = 3
	ltTransB       = 4
	ltEpilogue     = 7
	ltBiasPointer  = 8
	ltEpilogueBias = 4
	// ltWorkspace is the workspace a matmul may use: PyTorch's cuBLASLt default (4 MiB
	// since 2.3; 1 MiB before).
	ltWorkspace = 4 << 20
)

// ltMatmul is one GEMM with the bias epilogue through cuBLASLt: its descriptors, the
// algorithm the heuristic chose and its workspace.
type ltMatmul struct {
	op, a, b, c unsafe.Pointer
	algo        C.lt_heuristic_t
	ws          uint64
	ptr         [3]uint64 // A, B and C/D's addresses
}

func ltCheck(call string, status C.int) error {
	if status == 0 {
		return nil
	}
	return &cudastatus.Error{Lib: "cuBLASLt", Call: call, Code: int(status), Category: cudastatus.CuBLAS(int(status))}
}

// newLtMatmul prepares call g (AddBias) on the layer's buffers: C = op(A)·op(B) + bias.
func (l *linearLayer) newLtMatmul(g gemm.Call) (*ltMatmul, error) {
	m := &ltMatmul{ptr: [3]uint64{l.ptr[g.A], l.ptr[g.B], l.ptr[g.C]}}
	if err := ltCheck("cublasLtMatmulDescCreate", C.x_cublasLtMatmulDescCreate(&m.op, l.compute, cudaR32F)); err != nil {
		return m, err
	}
	op := func(t bool) C.int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	for _, set := range []struct {
		call   string
		status C.int
	}{
		{"TRANSA", C.lt_set_int(m.op, ltTransA, op(g.TransA))},
		{"TRANSB", C.lt_set_int(m.op, ltTransB, op(g.TransB))},
		{"EPILOGUE", C.lt_set_int(m.op, ltEpilogue, ltEpilogueBias)},
		{"BIAS_POINTER", C.lt_set_ptr(m.op, ltBiasPointer, C.ulonglong(l.ptr[gemm.B]))},
	} {
		if err := ltCheck("cublasLtMatmulDescSetAttribute "+set.call, set.status); err != nil {
			return m, err
		}
	}
	// The layouts of the matrices as stored: op(A) is M×K, so A is K×M when transposed.
	rowsA, colsA := g.M, g.K
	if g.TransA {
		rowsA, colsA = g.K, g.M
	}
	rowsB, colsB := g.K, g.N
	if g.TransB {
		rowsB, colsB = g.N, g.K
	}
	for _, lay := range []struct {
		d          *unsafe.Pointer
		rows, cols int
		ld         int
	}{{&m.a, rowsA, colsA, g.LDA}, {&m.b, rowsB, colsB, g.LDB}, {&m.c, g.M, g.N, g.LDC}} {
		if err := ltCheck("cublasLtMatrixLayoutCreate", C.x_cublasLtMatrixLayoutCreate(lay.d, l.dtype, C.ulonglong(lay.rows), C.ulonglong(lay.cols), C.longlong(lay.ld))); err != nil {
			return m, err
		}
	}
	var pref unsafe.Pointer
	if err := ltCheck("cublasLtMatmulPreferenceCreate", C.x_cublasLtMatmulPreferenceCreate(&pref)); err != nil {
		return m, err
	}
	defer C.x_cublasLtMatmulPreferenceDestroy(pref)
	if err := ltCheck("cublasLtMatmulPreferenceSetAttribute", C.lt_pref_workspace(pref, ltWorkspace)); err != nil {
		return m, err
	}
	var got C.int
	if err := ltCheck("cublasLtMatmulAlgoGetHeuristic", C.x_cublasLtMatmulAlgoGetHeuristic(l.b.lt, m.op, m.a, m.b, m.c, m.c, pref, 1, &m.algo, &got)); err != nil {
		return m, err
	}
	if got < 1 {
		return m, fmt.Errorf("%w: cuBLASLt has no algorithm for this GEMM with a bias epilogue", errUnsupported)
	}
	if m.algo.workspaceSize > 0 {
		p, err := l.alloc(int64(m.algo.workspaceSize))
		if err != nil {
			return m, err
		}
		m.ws = p
	}
	return m, nil
}

// run computes the GEMM and adds the bias, one pass.
func (m *ltMatmul) run(h unsafe.Pointer) error {
	one, zero := float32(1), float32(0)
	return ltCheck("cublasLtMatmul", C.x_cublasLtMatmul(h, m.op, unsafe.Pointer(&one), dev(m.ptr[0]), m.a, dev(m.ptr[1]), m.b,
		unsafe.Pointer(&zero), dev(m.ptr[2]), m.c, dev(m.ptr[2]), m.c, unsafe.Pointer(&m.algo.algo[0]), dev(m.ws), m.algo.workspaceSize, nil))
}

func (m *ltMatmul) free() {
	for _, d := range []unsafe.Pointer{m.a, m.b, m.c} {
		if d != nil {
			C.x_cublasLtMatrixLayoutDestroy(d)
		}
	}
	if m.op != nil {
		C.x_cublasLtMatmulDescDestroy(m.op)
	}
}

//go:build cuda

package cuda

/*
#include "libs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/cpu"
	"cnntime/gpu/gemm"
	"cnntime/gpu/libfind"
	"cnntime/gpu/selftest"
	"cnntime/predictor/measure"
)

// checkable is a layer whose results the self-test compares with the CPU reference:
// check uploads the reference's inputs and parameters, prepares and runs the phase once,
// and returns each result it produced beside the reference's value of it.
type checkable interface {
	check(phase measure.Phase, r *cpu.Reference) (got, want [][]float32, err error)
}

// SelfTest runs every layer kind on small shapes in fp32, tf32 and amp on device index,
// and one convolution with the fastest algorithm (cudnnFind*AlgorithmEx), compares
// outputs and gradients with the CPU reference (the amp checks with one whose inputs
// and parameters are rounded to FP16 as the GPU's are), times one short sweep and
// reports it all with the versions found.
func (w Worker) SelfTest(ctx context.Context, index int) (selftest.Report, error) {
	var rep selftest.Report
	b, err := Open(index, w.Options)
	if err != nil {
		return rep, err
	}
	rep.Device = b.Device()
	rep.Versions = b.versions()
	rep.Libraries = append([]libfind.Candidate(nil), loaded...)
	refs := map[string]*cpu.Reference{} // configuration key, rounded or not -> reference
	for _, check := range selftest.Plan() {
		for _, phase := range measure.Phases {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			if row, ok := b.selfTestRow(check, phase, refs); ok {
				rep.Rows = append(rep.Rows, row)
			}
		}
	}
	var items []gpu.Item
	for _, cfg := range selftest.Cases() {
		for _, phase := range measure.Phases {
			items = append(items, gpu.Item{Config: cfg, Batch: 32, Phase: phase})
		}
	}
	rep.Sweep.Items = len(items)
	start := time.Now()
	err = gpu.Execute(ctx, b, gpu.Job{Precision: measure.FP32, Policy: measure.Heuristic, Repeats: 3, Items: items}, gpu.Sink{
		Measured: func(measure.Measurement) error { rep.Sweep.Measured++; return nil },
		Failed:   func(f gpu.Failure) error { rep.Sweep.Failures = append(rep.Sweep.Failures, f.String()); return nil },
	})
	rep.Sweep.Seconds = time.Since(start).Seconds()
	if err != nil {
		rep.Sweep.Why = err.Error()
	}
	return rep, nil
}

// versions are the driver's and the libraries' versions.
func (b *Backend) versions() selftest.Versions {
	v := selftest.Versions{Driver: b.device.Driver, CUDA: b.device.CUDA, CuDNN: b.device.CuDNN}
	var cublas C.int
	if C.x_cublasGetVersion_v2(b.cublas, &cublas) == 0 && cublas > 0 {
		v.CuBLAS = fmt.Sprintf("%d.%d.%d", cublas/10000, cublas%10000/100, cublas%100)
	}
	if nvrtcErr == nil {
		v.NVRTC = fmt.Sprintf("%d.%d", nvrtcMajor, nvrtcMinor)
	}
	v.Paths = map[string]string{}
	for k, p := range paths {
		v.Paths[k] = p
	}
	return v
}

// selfTestRow checks one layer, precision, policy and phase; ok is false for a phase
// the layer does not have.
func (b *Backend) selfTestRow(check selftest.Check, phase measure.Phase, refs map[string]*cpu.Reference) (selftest.Row, bool) {
	cfg, prec := check.Config, check.Precision
	row := selftest.Row{Layer: cfg.Key(), Kind: cfg.Op, Precision: prec, Phase: phase, Policy: check.Policy, API: check.API}
	defer func(api string) { b.api = api }(b.api)
	b.api = check.API
	fail := func(err error) (selftest.Row, bool) {
		if errors.Is(err, errUnsupported) && err.Error() == errUnsupported.Error() {
			return row, false // the layer has no such phase
		}
		switch status, ok := classify(err); {
		case ok && status == measure.OutOfMemory:
			row.Verdict, row.Why = selftest.Unsupported, "out of memory at a tiny shape: "+err.Error()
		case ok:
			row.Verdict, row.Why = selftest.Unsupported, err.Error()
		default:
			row.Verdict, row.Why = selftest.Failed, err.Error()
		}
		return row, true
	}
	l, err := b.newLayer(cfg, selftest.Batch, prec, check.Policy)
	if l != nil {
		defer l.free()
	}
	if err != nil {
		return fail(err)
	}
	c, canCheck := l.(checkable)
	var got, want [][]float32
	if canCheck {
		dt := convalgo.DataOf(prec)
		key := fmt.Sprintf("%s/data=%d", cfg.Key(), dt)
		ref := refs[key]
		if ref == nil {
			round := func([]float32) {}
			switch dt {
			case convalgo.Half:
				round = selftest.RoundToHalf
			case convalgo.BFloat16:
				round = selftest.RoundToBF16
			}
			if ref, err = cpu.NewRoundedReference(cfg, selftest.Batch, 1, round); err != nil {
				row.Verdict, row.Why = selftest.Failed, "the CPU reference: "+err.Error()
				return row, true
			}
			refs[key] = ref
		}
		got, want, err = c.check(phase, ref)
	}
	if !canCheck || errors.Is(err, errNotReadBack) {
		if _, _, err := l.prepare(phase); err != nil {
			return fail(err)
		}
		if err := l.run(phase); err != nil {
			return fail(err)
		}
		if err := cu.Synchronize(); err != nil {
			return fail(err)
		}
		row.Verdict, row.Why = selftest.Ran, "ran without error; its results are not compared"
		row.MS = quickTime(l, phase)
		return row, true
	}
	if err != nil {
		return fail(err)
	}
	row.MS = quickTime(l, phase)
	row.Verdict, row.Tolerance = selftest.Pass, selftest.Tolerance(prec)
	for i := range got {
		e, ok := selftest.Compare(got[i], want[i], prec)
		row.MaxError = max(row.MaxError, e)
		if !ok {
			row.Verdict = selftest.Mismatch
			row.Why = fmt.Sprintf("result %d of %d is off by %.3g of its largest value", i+1, len(got), e)
		}
	}
	return row, true
}

// quickTime is a rough time of one run of a prepared layer phase, in ms, for the
// report's MS column: a few runs to warm up, then the mean of 20 back to back between
// two events; 0 when it cannot be had. Sweeps time properly (TimeLayer).
func quickTime(l layer, phase measure.Phase) float64 {
	start, end, release, err := eventPair()
	if err != nil {
		return 0
	}
	defer release()
	for i := 0; i < 3; i++ {
		if l.run(phase) != nil {
			return 0
		}
	}
	const runs = 20
	if start.Record(cu.Stream{}) != nil {
		return 0
	}
	for i := 0; i < runs; i++ {
		if l.run(phase) != nil {
			return 0
		}
	}
	if end.Record(cu.Stream{}) != nil || end.Synchronize() != nil {
		return 0
	}
	ms, err := start.Elapsed(end)
	if err != nil {
		return 0
	}
	return float64(ms) / runs
}

// upload copies FP32 values to the device as the layer's element type dt.
func upload(p uint64, v []float32, dt convalgo.Data) error {
	if len(v) == 0 {
		return nil
	}
	if dt != convalgo.Float {
		h := selftest.ToHalf(v)
		if dt == convalgo.BFloat16 {
			h = selftest.ToBF16(v)
		}
		return cu.MemcpyHtoD(cu.DevicePtr(p), unsafe.Pointer(&h[0]), int64(len(h)*2))
	}
	return cu.MemcpyHtoD(cu.DevicePtr(p), unsafe.Pointer(&v[0]), int64(len(v)*4))
}

// download reads n values of the layer's element type back as FP32.
func download(p uint64, n int, dt convalgo.Data) ([]float32, error) {
	if n == 0 {
		return nil, nil
	}
	if err := cu.Synchronize(); err != nil {
		return nil, err
	}
	if dt != convalgo.Float {
		h := make([]uint16, n)
		err := cu.MemcpyDtoH(unsafe.Pointer(&h[0]), cu.DevicePtr(p), int64(n*2))
		if dt == convalgo.BFloat16 {
			return selftest.FromBF16(h), err
		}
		return selftest.FromHalf(h), err
	}
	v := make([]float32, n)
	return v, cu.MemcpyDtoH(unsafe.Pointer(&v[0]), cu.DevicePtr(p), int64(n*4))
}

// transfer is one buffer to upload (in) or read back (out) with its reference value.
type transfer struct {
	ptr uint64
	ref []float32
	dt  convalgo.Data
}

// runChecked uploads ins, prepares and runs the phase once and reads outs back.
func runChecked(l layer, phase measure.Phase, ins, outs []transfer) (got, want [][]float32, err error) {
	for _, t := range ins {
		if err := upload(t.ptr, t.ref, t.dt); err != nil {
			return nil, nil, fmt.Errorf("upload the reference's inputs: %w", err)
		}
	}
	if _, _, err := l.prepare(phase); err != nil {
		return nil, nil, err
	}
	if err := l.run(phase); err != nil {
		return nil, nil, err
	}
	for _, t := range outs {
		v, err := download(t.ptr, len(t.ref), t.dt)
		if err != nil {
			return nil, nil, fmt.Errorf("read back a result: %w", err)
		}
		got, want = append(got, v), append(want, t.ref)
	}
	return got, want, nil
}

func (l *convLayer) check(phase measure.Phase, r *cpu.Reference) ([][]float32, [][]float32, error) {
	h := l.dt
	ins := []transfer{{l.x, r.Inputs[0], h}, {l.w, r.Params[0], h}, {l.dy, r.DY, h}}
	if l.hasBias {
		ins = append(ins, transfer{l.bias, r.Params[1], h})
	}
	var outs []transfer
	switch phase {
	case measure.Forward:
		outs = []transfer{{l.y, r.Y, h}}
	case measure.BackwardData:
		outs = []transfer{{l.dx, r.DX[0], h}}
	case measure.BackwardWeights:
		outs = []transfer{{l.dw, r.DParams[0], h}}
		if l.hasBias {
			outs = append(outs, transfer{l.dbias, r.DParams[1], h})
		}
	}
	return runChecked(l, phase, ins, outs)
}

func (l *linearLayer) check(phase measure.Phase, r *cpu.Reference) ([][]float32, [][]float32, error) {
	h := l.dt
	ins := []transfer{{l.ptr[gemm.X], r.Inputs[0], h}, {l.ptr[gemm.W], r.Params[0], h}, {l.ptr[gemm.DY], r.DY, h}}
	if l.shape.Bias {
		ins = append(ins, transfer{l.ptr[gemm.B], r.Params[1], h})
	}
	var outs []transfer
	switch phase {
	case measure.Forward:
		outs = []transfer{{l.ptr[gemm.Y], r.Y, h}}
	case measure.BackwardData:
		outs = []transfer{{l.ptr[gemm.DX], r.DX[0], h}}
	case measure.BackwardWeights:
		outs = []transfer{{l.ptr[gemm.DW], r.DParams[0], h}}
		if l.shape.Bias {
			outs = append(outs, transfer{l.ptr[gemm.DB], r.DParams[1], h})
		}
	}
	return runChecked(l, phase, ins, outs)
}

func (l *bnLayer) check(phase measure.Phase, r *cpu.Reference) ([][]float32, [][]float32, error) {
	h, f := l.dt, convalgo.Float
	ins := []transfer{{l.x, r.Inputs[0], h}, {l.scale, r.Params[0], f}, {l.bias, r.Params[1], f}, {l.dy, r.DY, h}}
	var outs []transfer
	switch phase {
	case measure.Forward:
		outs = []transfer{{l.y, r.Y, h}}
	case measure.BackwardData: // cuDNN's one backward call also gives the scale and shift gradients
		outs = []transfer{{l.dx, r.DX[0], h}, {l.dscale, r.DParams[0], f}, {l.dbias, r.DParams[1], f}}
	}
	return runChecked(l, phase, ins, outs)
}

//go:build cuda

package cuda

/*
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"cnntime/gpu/convalgo"
	"cnntime/predictor/measure"
)

// cuDNN's graph API is resolved from the cuDNN loaded, once; v8Err says why it is not
// there (a convolution asked to use it is then unsupported).
var (
	v8Once sync.Once
	v8Err  error
)

func loadV8() error {
	v8Once.Do(func() {
		var missing *C.char
		if msg := C.v8_load(&missing); msg != nil {
			why := C.GoString(msg)
			if missing != nil {
				why += " " + C.GoString(missing)
			}
			v8Err = fmt.Errorf("cuDNN's graph API is not in the cuDNN loaded (%s)", why)
		}
	})
	return v8Err
}

// SetCuDNNAPI makes the backend's convolutions choose their algorithm through api
// (convalgo.Legacy or convalgo.V8): gpu.APISetter.
func (b *Backend) SetCuDNNAPI(api string) error {
	api, err := convalgo.ParseAPI(api)
	if err != nil {
		return err
	}
	b.api = api
	return nil
}

func (b *Backend) cudnnAPI() string {
	if b.api == "" {
		return convalgo.Legacy
	}
	return b.api
}

// v8Choice is a convolution phase's engine through the graph API: its plan and workspace.
type v8Choice struct {
	plan  unsafe.Pointer
	ws    uint64
	label string
	keep  []unsafe.Pointer // the descriptors to destroy with it
}

func (c *v8Choice) free() {
	for _, d := range c.keep {
		C.v8_destroy(d)
	}
	c.keep = nil
}

// v8Phase is the graph API's phase number.
var v8Phase = map[measure.Phase]C.int{measure.Forward: 0, measure.BackwardData: 1, measure.BackwardWeights: 2}

// prepareV8 asks the graph API's heuristics for the phase's engine configurations, keeps
// those PyTorch's filter keeps (convalgo.EngineUsable) and runs the first whose plan and
// workspace are had, or with the fastest policy the one that times fastest, as PyTorch 2
// does with cudnn.benchmark off or on.
func (l *convLayer) prepareV8(phase measure.Phase) (string, int64, error) {
	if err := loadV8(); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errUnsupported, err)
	}
	c := l.cfg
	g := max(c.Groups, 1)
	var d C.v8_conv_t
	d.phase, d.dtype, d.ctype = v8Phase[phase], C.int(l.dt.CuDNN()), cudnnFloat
	dims := func(v [4]int, into, strides *[4]C.longlong) {
		var d [4]int64
		for i := range v {
			d[i] = int64(v[i])
			into[i] = C.longlong(v[i])
		}
		for i, s := range convalgo.Strides(d, l.nhwc) { // channels_last: C fastest, for filters too
			strides[i] = C.longlong(s)
		}
	}
	dims([4]int{l.batch, c.In.C, c.In.H, c.In.W}, &d.x, &d.xs)
	dims([4]int{c.Out.C, c.In.C / g, c.Kernel[0], c.Kernel[1]}, &d.w, &d.ws)
	dims([4]int{l.batch, c.Out.C, c.Out.H, c.Out.W}, &d.y, &d.ys)
	for i := 0; i < 2; i++ {
		d.pad[i], d.stride[i], d.dilation[i] = C.longlong(c.Padding[i]), C.longlong(max(c.Stride[i], 1)), C.longlong(max(c.Dilation[i], 1))
	}
	const most = 48
	cands := make([]C.v8_cand_t, most)
	var n C.int
	var where *C.char
	if status := C.v8_conv_candidates(l.b.cudnn, &d, &cands[0], most, &n, &where); status != 0 {
		return "", 0, cudnnCheck("cudnnBackend: "+C.GoString(where), status)
	}
	cands = cands[:n]
	engines := make([]convalgo.Engine, len(cands))
	for i, cd := range cands {
		e := convalgo.Engine{Index: int64(cd.engine), Workspace: int64(cd.workspace), Built: cd.plan != nil}
		for j := 0; j < int(cd.nnotes); j++ {
			e.Notes = append(e.Notes, int(cd.notes[j]))
		}
		for j := 0; j < int(cd.nknobs); j++ {
			e.Knobs = append(e.Knobs, convalgo.Knob{Type: int64(cd.knob_type[j]), Value: int64(cd.knob_value[j])})
		}
		engines[i] = e
	}
	pick := -1
	var wsPtr uint64
	switch l.policy {
	case measure.Fastest:
		ms, err := l.timeV8(phase, cands, engines)
		if err != nil {
			freeV8(cands, -1)
			return "", 0, err
		}
		if pick = convalgo.Fastest(engines, l.prec, ms); pick >= 0 {
			p, err := l.alloc(engines[pick].Workspace)
			if err != nil {
				freeV8(cands, -1)
				return "", 0, cu.OutOfMemory
			}
			wsPtr = p
		}
	default:
		// The first usable engine whose workspace is had and that runs: one that fails
		// its first execution is passed over, as PyTorch's v8 path does.
		chosen, _, oom, failed := convalgo.ChooseEngine(engines, l.prec, func(bytes int64) bool {
			p, err := l.alloc(bytes)
			wsPtr = p
			return err == nil
		}, func(i int) error {
			if err := l.execV8(phase, cands[i].plan, wsPtr); err != nil {
				return err
			}
			return cu.Synchronize()
		})
		if oom {
			freeV8(cands, -1)
			return "", 0, cu.OutOfMemory
		}
		if chosen < 0 && failed != nil {
			freeV8(cands, -1)
			return "", 0, fmt.Errorf("every engine the graph API offered failed; the last: %w", failed)
		}
		pick = chosen
	}
	if pick < 0 {
		freeV8(cands, -1)
		return "", 0, fmt.Errorf("%w: cuDNN's graph API has no usable %s engine for this convolution under %s (%d offered)", errUnsupported, phase, l.prec, len(engines))
	}
	l.v8[phase] = &v8Choice{plan: cands[pick].plan, ws: wsPtr, label: convalgo.EngineLabel(engines[pick]), keep: []unsafe.Pointer{cands[pick].plan, cands[pick].cfg}}
	freeV8(cands, pick)
	return l.v8[phase].label, engines[pick].Workspace, nil
}

// freeV8 destroys the candidates' plans and configurations but keep's.
func freeV8(cands []C.v8_cand_t, keep int) {
	for i, c := range cands {
		if i == keep {
			continue
		}
		C.v8_destroy(c.plan)
		C.v8_destroy(c.cfg)
	}
}

// v8Operands are the phase's three tensors in the order of the graph's unique ids:
// x (or its gradient), w (or its gradient), y (or its gradient).
func (l *convLayer) v8Operands(phase measure.Phase) (uint64, uint64, uint64) {
	switch phase {
	case measure.BackwardData:
		return l.dx, l.w, l.dy
	case measure.BackwardWeights:
		return l.x, l.dw, l.dy
	}
	return l.x, l.w, l.y
}

func (l *convLayer) execV8(phase measure.Phase, plan unsafe.Pointer, ws uint64) error {
	a, b, c := l.v8Operands(phase)
	return cudnnCheck("cudnnBackendExecute", C.v8_execute(l.b.cudnn, plan, C.ulonglong(a), C.ulonglong(b), C.ulonglong(c), C.ulonglong(ws)))
}

// runV8 runs the phase's plan, and the bias as the legacy path does (PyTorch adds it in a
// kernel of its own).
func (l *convLayer) runV8(phase measure.Phase, v8 *v8Choice) error {
	if err := l.execV8(phase, v8.plan, v8.ws); err != nil {
		return err
	}
	if !l.hasBias || phase == measure.BackwardData {
		return nil
	}
	one, zero := float32(1), float32(0)
	al, be := unsafe.Pointer(&one), unsafe.Pointer(&zero)
	if phase == measure.Forward {
		return cudnnCheck("cudnnAddTensor", C.x_cudnnAddTensor(l.b.cudnn, al, l.biasD, dev(l.bias), al, l.yD, dev(l.y)))
	}
	return cudnnCheck("cudnnConvolutionBackwardBias", C.x_cudnnConvolutionBackwardBias(l.b.cudnn, al, l.yD, dev(l.dy), be, l.biasD, dev(l.dbias)))
}

// timeV8 times the first convalgo.BenchmarkLimit usable candidates, as PyTorch's
// cudnn.benchmark does (one run to warm up, then the mean of three between two events),
// in a workspace as large as the largest asks, capped at the free memory: a candidate
// that does not fit in it, fails, is not usable or is past the limit gets 0.
func (l *convLayer) timeV8(phase measure.Phase, cands []C.v8_cand_t, engines []convalgo.Engine) ([]float64, error) {
	var sizes []int64
	for _, i := range convalgo.ToTime(engines, l.prec, convalgo.BenchmarkLimit) {
		sizes = append(sizes, engines[i].Workspace)
	}
	free, _, err := cu.MemInfo()
	if err != nil {
		return nil, fmt.Errorf("read the free GPU memory: %w", err)
	}
	size := convalgo.FindWorkspace(sizes, free-free/16)
	var ws cu.DevicePtr
	for size > 0 {
		if ws, err = cu.MemAlloc(size); err == nil {
			break
		}
		size /= 2
	}
	if ws != 0 {
		defer cu.MemFree(ws)
	}
	start, end, release, err := eventPair()
	if err != nil {
		return nil, err
	}
	defer release()
	ms := make([]float64, len(engines))
	var failed []string
	for _, i := range convalgo.ToTime(engines, l.prec, convalgo.BenchmarkLimit) { // PyTorch's benchmark_limit
		e := engines[i]
		if e.Workspace > size {
			continue
		}
		run := func() error { return l.execV8(phase, cands[i].plan, uint64(ws)) }
		if err := run(); err != nil {
			failed = append(failed, fmt.Sprintf("engine %d: %v", e.Index, err))
			continue
		}
		if start.Record(cu.Stream{}) != nil {
			continue
		}
		ok := true
		for j := 0; j < 3 && ok; j++ {
			ok = run() == nil
		}
		if !ok || end.Record(cu.Stream{}) != nil || end.Synchronize() != nil {
			continue
		}
		if t, err := start.Elapsed(end); err == nil {
			ms[i] = float64(t) / 3
		}
	}
	if len(failed) == len(sizes) && len(failed) > 0 {
		return nil, fmt.Errorf("every engine the graph API offered failed: %s", strings.Join(failed, "; "))
	}
	return ms, nil
}

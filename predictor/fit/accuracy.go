package fit

import (
	"fmt"
	"math"
	"sort"
	"time"

	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// LeaveOneGPUOut holds out each GPU of gpus in turn, fits the efficiencies on the
// others, and predicts the held-out GPU's DeepBench rows two ways: from its
// specifications alone (Estimated) and by transferring the other GPUs' measurements of
// the same layer and batch size (Transferred, through kernels.Model). It returns one
// row per GPU and arithmetic, in GPU name order, with MAPEs in percent.
func LeaveOneGPUOut(rows []Row, gpus map[string]hw.GPU, opt Options) ([]kernels.GPUAccuracy, error) {
	names := gpuNames(gpus)
	if len(names) < 2 {
		return nil, fmt.Errorf("leave-one-GPU-out needs at least 2 GPUs, have %d", len(names))
	}
	var out []kernels.GPUAccuracy
	for _, held := range names {
		others := map[string]hw.GPU{}
		for n, g := range gpus {
			if n != held {
				others[n] = g
			}
		}
		res, err := FitEfficiencies(rows, others, kernels.PriorCalibration(), opt)
		if err != nil {
			return nil, fmt.Errorf("fit without %s: %w", held, err)
		}
		out = append(out, evaluate(res, rows, held, gpus)...)
	}
	return out, nil
}

// evaluate predicts the rows of GPU held with a fit on the others, from specifications
// and by transfer from the other GPUs' rows. Estimates add the harness overhead found
// by the fit, as DeepBench's timings include it.
func evaluate(res *Result, rows []Row, held string, gpus map[string]hw.GPU) []kernels.GPUAccuracy {
	cal := res.Calibration
	model := transferModel(cal, rows, held, gpus)
	target := kernels.Device{GPU: gpus[held]}
	type tally struct {
		est, tr    float64
		nEst, nTr  int
		arithmetic string
	}
	byArith := map[string]*tally{}
	var one [1]kernels.Estimate
	for _, s := range samplesOf(rows, gpus, func(g string) bool { return g == held }) {
		a := kernels.ArithmeticFor(s.gpu, s.row.Precision).String()
		t := byArith[a]
		if t == nil {
			t = &tally{arithmetic: a}
			byArith[a] = t
		}
		pred, _ := kernels.EstimateMS(cal, s.row.Config, s.phase, s.gpu, s.row.Precision, s.row.Batch)
		t.est += math.Abs(pred+res.HarnessMS-s.ms) / s.ms
		t.nEst++
		model.Times(target, kernels.Request{Config: s.row.Config, Phase: s.phase, Precision: s.row.Precision, Policy: measure.Heuristic},
			[]int{s.row.Batch}, one[:])
		if one[0].Source == kernels.Transferred {
			t.tr += math.Abs(one[0].MS-s.ms) / s.ms
			t.nTr++
		}
	}
	var out []kernels.GPUAccuracy
	for a, t := range byArith {
		acc := kernels.GPUAccuracy{GPU: held, Sheet: a, Rows: t.nEst, EstimateMAPE: 100 * t.est / float64(t.nEst), TransferRows: t.nTr}
		if t.nTr > 0 {
			acc.TransferMAPE = 100 * t.tr / float64(t.nTr)
		}
		out = append(out, acc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sheet < out[j].Sheet })
	return out
}

// transferModel is a kernels.Model whose measurements are the DeepBench rows of every
// GPU but held, each GPU a CUDA device named "deepbench:<name>".
func transferModel(cal *kernels.Calibration, rows []Row, held string, gpus map[string]hw.GPU) *kernels.Model {
	var devices []measure.Device
	var catalog []hw.GPU
	for name, g := range gpus {
		if name == held {
			continue
		}
		devices = append(devices, measure.Device{Key: "deepbench:" + name, Backend: "cuda", Name: name, GPUID: g.ID})
		catalog = append(catalog, g)
	}
	var ms []measure.Measurement
	at := time.Unix(0, 0).UTC()
	for i := range rows {
		r := &rows[i]
		if _, ok := gpus[r.GPU]; !ok || r.GPU == held {
			continue
		}
		key := r.Config.Key()
		for p, ph := range measure.Phases {
			if r.MS[p] > 0 {
				ms = append(ms, measure.Measurement{DeviceKey: "deepbench:" + r.GPU, ConfigKey: key, Batch: r.Batch, Precision: r.Precision,
					Phase: ph, Policy: measure.Heuristic, MedianMS: r.MS[p], Repeats: 1, Status: measure.OK, At: at})
			}
		}
	}
	return kernels.NewModel(cal, catalog, devices, ms)
}

package validate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/dataset"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/published"
)

// LoaderRow is one published run through a real input pipeline
// (assets/validation/loader_runs.csv) and its prediction: a training run's images/s
// over all its GPUs, or a loader benchmark's own images/s (no GPU).
type LoaderRow struct {
	Source    string  `json:"source"`
	Where     string  `json:"where"`
	Set       string  `json:"set"`
	GPU       string  `json:"gpu,omitempty"`
	Model     string  `json:"model,omitempty"`
	Precision string  `json:"precision,omitempty"`
	Batch     int     `json:"batch_per_gpu,omitempty"`
	GPUs      int     `json:"gpus"`
	Loader    string  `json:"loader"`
	Workers   int     `json:"workers_per_gpu"`
	VCPUs     int     `json:"vcpus"`
	CPU       string  `json:"cpu"`
	TurboGHz  float64 `json:"cpu_turbo_ghz"`
	Metric    string  `json:"metric"` // train_images_per_s or loader_images_per_s
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	Bound     string  `json:"bound,omitempty"` // what the prediction says sets the pace
	ErrorPct  float64 `json:"error_pct"`
}

// LoaderAccuracy is the DataLoader table of `cnntime validate`: runs through real
// input pipelines on named CPUs, tuning and held-out sources apart.
type LoaderAccuracy struct {
	Sets    []ModernGroup `json:"sets"`
	Sources []ModernGroup `json:"sources"`
	Rows    []LoaderRow   `json:"rows"`
}

var loaderColumns = []string{"source", "where", "gpu", "model", "precision", "batch_per_gpu", "gpus", "loader",
	"workers_per_gpu", "vcpus", "cpu", "cpu_turbo_ghz", "metric", "value", "set"}

// ParseLoaderRuns reads the published loader runs.
func ParseLoaderRuns(data []byte) ([]LoaderRow, error) {
	var rows []LoaderRow
	err := published.Read("loader_runs.csv", data, loaderColumns, func(f *published.Row) error {
		row := LoaderRow{Source: f.Text("source"), Where: f.Text("where"), Set: f.Text("set"), GPU: f.Text("gpu"), Model: f.Text("model"),
			Precision: f.Text("precision"), Loader: f.Text("loader"), CPU: f.Text("cpu"), Metric: f.Text("metric"),
			Batch: int(f.Num("batch_per_gpu", false)), GPUs: int(f.Num("gpus", true)), Workers: int(f.Num("workers_per_gpu", true)),
			VCPUs: int(f.Num("vcpus", true)), TurboGHz: f.Num("cpu_turbo_ghz", true), Measured: f.Num("value", true)}
		if f.Err() != nil {
			return f.Err()
		}
		if _, err := pipeline.ParseLoader(row.Loader); err != nil {
			return f.Errorf("%w", err)
		}
		switch {
		case row.Metric == "train_images_per_s" && (row.GPU == "" || row.Model == "" || row.Batch == 0):
			return f.Errorf("a training run needs its gpu, model and batch")
		case row.Metric != "train_images_per_s" && row.Metric != "loader_images_per_s":
			return f.CellErrorf("metric", "%q is neither train_images_per_s nor loader_images_per_s", row.Metric)
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// loaderSoftware is each training source's release of the kernel libraries
// (predictor.ParseSoftware): DLPerf states PyTorch 1.6; the DALI demo and CSCS's course
// do not, and are taken as January 2020 (PyTorch 1.4, the years their READMEs were
// written). The loader benchmarks (ffcv, tensorpack) run no GPU.
var loaderSoftware = map[string]string{"dlperf": "pytorch-1.6", "yaysummeriscoming": "2020-01", "eth-cscs": "2020-01",
	"ffcv": "current", "tensorpack": "current"}

// PredictLoaderRuns predicts each row: the loader's own rate (pipeline.Model on the
// row's CPU, vCPUs and workers), and for a training run the whole step on the row's
// GPUs with that loader, in a reference-style script (predictor.Reference).
func PredictLoaderRuns(eng *app.Engine, rows []LoaderRow) error {
	imagenet, err := dataset.Preset("imagenet-1k")
	if err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		cpu := host.CPU{Model: r.CPU, TurboGHz: r.TurboGHz}
		set := pipeline.Settings{Loader: pipeline.Loader(r.Loader), Workers: r.Workers, CPUScale: cpu.Speed()}
		var gpu hw.GPU
		if r.GPU != "" {
			if gpu, err = eng.Catalog().GPU(r.GPU); err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
		}
		input := 224
		if r.Metric == "loader_images_per_s" {
			rate, err := pipeline.Model(set, imagenet, input, r.VCPUs, r.GPUs, gpu)
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			r.Predicted, r.Bound = rate.ImagesPerS*float64(r.GPUs), "input"
		} else {
			net, err := cnn.Build(r.Model, cnn.Options{Resolution: input, Classes: 1000})
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			rate, err := pipeline.Model(set, imagenet, input, r.VCPUs, r.GPUs, gpu)
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			p, err := predictor.ParseTrainingPrecision(r.Precision)
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			global := r.Batch * r.GPUs
			// The training runs are PyTorch 1.x (DLPerf: 1.6; the DALI demo: 1.x) but
			// tf.data's, which is TensorFlow's compiled step.
			fw := predictor.PyTorch1
			if r.Loader == string(pipeline.TFData) {
				fw = predictor.Graph
			}
			sw, err := predictor.ParseSoftware(loaderSoftware[r.Source])
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			c, err := eng.Predictor().Curve(predictor.Request{Network: net, GPU: gpu, Precision: p, Policy: measure.Heuristic, Software: sw,
				Machine: hw.Machine{ID: r.Source, GPUCount: r.GPUs, VCPUs: r.VCPUs, CPU: &cpu}, Batches: []int{global},
				Run: predictor.Run{Epochs: 1, Images: global}, Input: rate, MemoryFormat: predictor.NCHW, Script: predictor.Reference,
				Framework: fw})
			if err != nil {
				return fmt.Errorf("loader_runs.csv %s: %w", r.Source, err)
			}
			pt := c.Points[0]
			if !pt.Fits {
				return fmt.Errorf("loader_runs.csv %s: batch %d of %s does not fit the memory model", r.Source, r.Batch, r.Model)
			}
			r.Predicted, r.Bound = pt.ImagesPerS, pt.Bound
		}
		r.ErrorPct = 100 * (r.Predicted - r.Measured) / r.Measured
	}
	return nil
}

// Loader predicts every embedded loader run and summarises the errors per set and source.
func Loader(eng *app.Engine) (*LoaderAccuracy, error) {
	rows, err := ParseLoaderRuns(assets.LoaderRuns)
	if err != nil {
		return nil, fmt.Errorf("the embedded loader runs are broken (a build mistake; report it): %w", err)
	}
	if err := PredictLoaderRuns(eng, rows); err != nil {
		return nil, err
	}
	acc := &LoaderAccuracy{Rows: rows}
	acc.Sets = groupErrors(len(rows), func(i int) (ModernGroup, float64) { return ModernGroup{Set: rows[i].Set}, rows[i].ErrorPct })
	acc.Sources = groupErrors(len(rows), func(i int) (ModernGroup, float64) {
		return ModernGroup{Set: rows[i].Set, Source: rows[i].Source}, rows[i].ErrorPct
	})
	return acc, nil
}

// groupErrors sums n rows' signed errors into groups keyed by what key gives, tuning first.
func groupErrors(n int, key func(int) (ModernGroup, float64)) []ModernGroup {
	idx := map[ModernGroup]int{}
	var out []ModernGroup
	for i := 0; i < n; i++ {
		k, e := key(i)
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, k)
		}
		out[j].Rows++
		out[j].MAPEPct += math.Abs(e)
		out[j].BiasPct += e
	}
	for i := range out {
		out[i].MAPEPct /= float64(out[i].Rows)
		out[i].BiasPct /= float64(out[i].Rows)
	}
	tuningFirst(out)
	return out
}

// tuningFirst orders groups tuning before held out, keeping the order within each.
func tuningFirst(g []ModernGroup) {
	var t, h []ModernGroup
	for _, x := range g {
		if x.Set == "tuning" {
			t = append(t, x)
		} else {
			h = append(h, x)
		}
	}
	copy(g, append(t, h...))
}

// WriteLoaderTable prints the DataLoader table.
func WriteLoaderTable(w io.Writer, acc *LoaderAccuracy) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintln(w, "\n7. Runs through real input pipelines on named CPUs (loader_runs.csv; DataLoader, DALI CPU/GPU, FFCV, tf.data)")
	fmt.Fprintln(w)
	line := func(g ModernGroup) errorGroup { return errorGroup{g.Set, g.Source, g.Rows, g.MAPEPct, g.BiasPct} }
	if err := writeErrorGroups(w, "rows", "SOURCE", summaryOf(acc.Sets, line), summaryOf(acc.Sources, line)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "SOURCE", "LOADER", "GPUS", "WORKERS", "CPU", "MODEL", "MEASURED", "PREDICTED", "BOUND", "ERROR")
	for _, r := range acc.Rows {
		model := r.Model
		if model == "" {
			model = "(loader alone)"
		}
		t.Row(r.Set, r.Source, r.Loader, strconv.Itoa(r.GPUs), strconv.Itoa(r.Workers), fmt.Sprintf("%s, %d vCPUs", r.CPU, r.VCPUs), model,
			fmt.Sprintf("%.0f", r.Measured), fmt.Sprintf("%.0f", r.Predicted), r.Bound, fmt.Sprintf("%+.1f%%", r.ErrorPct))
	}
	return t.Flush()
}

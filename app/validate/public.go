package validate

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// PublicComparison is one published whole-network figure and its prediction.
type PublicComparison struct {
	Source      string  `json:"source"`
	GPU         string  `json:"gpu"`   // the catalog id
	Model       string  `json:"model"` // the zoo name
	Framework   string  `json:"framework"`
	Precision   string  `json:"precision"` // as published
	Batch       int     `json:"batch"`
	MeasuredMS  float64 `json:"measured_ms"`
	PredictedMS float64 `json:"predicted_ms"`
	ErrorPct    float64 `json:"error_pct"` // signed: (predicted − measured) / measured
}

// PublicSourceAccuracy is the accuracy on one source's rows.
type PublicSourceAccuracy struct {
	Source  string  `json:"source"`
	Rows    int     `json:"rows"`
	MAPEPct float64 `json:"mape_pct"`
	BiasPct float64 `json:"bias_pct"` // mean signed error
	// Set is "tuning" for the rows the launch costs were tuned on, "held out" otherwise.
	Set     string `json:"set"`
	Caveats string `json:"caveats"`
}

// publicGPUs maps the GPU names used in the public file to catalog ids; rows on
// GPUs the catalog lacks (Maxwell Titan X, GTX 1080, Pascal Titan X, Quadros, M40,
// M60, K520) are not compared.
var publicGPUs = []struct{ prefix, id string }{
	{"1080 Ti", "gtx-1080-ti"}, {"GTX 1080 Ti", "gtx-1080-ti"}, {"2080 Ti", "rtx-2080-ti"},
	{"Tesla K80", "k80"}, {"Tesla T4", "t4"}, {"Tesla V100", "v100-sxm2-16gb"}, {"V100", "v100-sxm2-16gb"},
	{"Titan V", "titan-v"},
}

// publicModels maps the public file's model names to zoo names; the others (NIN,
// OverFeat, ResNet-200, ...) are not in the zoo.
var publicModels = map[string]string{
	"AlexNet": "alexnet", "AlexNet (OWT)": "alexnet", "Inception-V1": "googlenet", "GoogLeNet v1": "googlenet",
	"Inception (GoogLeNet v1)": "googlenet", "Inception-v3": "inception_v3", "VGG-16": "vgg16", "VGG16": "vgg16",
	"VGG-19": "vgg19", "VGG19": "vgg19", "VGG-A": "vgg11", "ResNet-18": "resnet18", "ResNet-34": "resnet34",
	"ResNet-50": "resnet50", "ResNet-101": "resnet101", "ResNet-152": "resnet152", "DenseNet-161": "densenet161",
	"ResNeXt-50": "resnext50_32x4d", "ResNeXt-101-64x4d": "resnext101_64x4d",
}

// publicCaveats says, per source, how its setup differs from what is predicted.
var publicCaveats = map[string]string{
	"jcjohnson/cnn-benchmarks":       "Torch7 + cuDNN 4–5 (2016–17 kernels); backward includes the first layer's input gradient; Inception-V1 has no batch norm (zoo googlenet has)",
	"dmikushin/cnn-benchmarks":       "as jcjohnson; V100 on cuDNN 7.0, K80 on cuDNN 5.1; small-batch rows are launch-bound in Lua",
	"u39kun/deep-learning-benchmark": "PyTorch 0.3/1.0, TensorFlow 1.x, Caffe2 0.8 on CUDA 9–10; fp16 is model.half() or TF fp16, compared with amp",
}

// publicSoftware is the release each framework description of the public
// measurements names, as the month of its kernel libraries (predictor.ParseSoftware):
// the cuDNN a Torch7 row names (cuDNN 4.0.07 February 2016, 5.0.05 May 2016, 5.1.05
// August 2016, 5.1.10 January 2017, 7.0.04 November 2017, NVIDIA's cuDNN archive), the
// framework release otherwise (PyTorch 0.3.0 December 2017 and 1.0.0 December 2018,
// TensorFlow 1.4.0 November 2017, 1.5.0 January 2018 and 1.12.0 November 2018, Caffe2
// 0.8.1 August 2017). A description not listed is predicted on the current release.
var publicSoftware = map[string]string{
	"Torch7 + cuDNN 4.0.07": "2016-02", "Torch7 + cuDNN 5.0.05": "2016-05", "Torch7 + cuDNN 5.1.05": "2016-08",
	"Torch7 + cuDNN 5.1.10": "2017-01", "Torch7 + cuDNN 7.0.04": "2017-11",
	"PyTorch 0.3.0": "2017-12", "PyTorch 1.0.0": "pytorch-1.0",
	"TensorFlow 1.4.0": "2017-11", "TensorFlow 1.5.0": "2018-01", "TensorFlow 1.12.0": "2018-11",
	"Caffe2 0.8.1": "2017-08",
}

// Public predicts every row of the embedded public measurements whose
// setup the predictor models: a catalog GPU, a zoo CNN at 224×224, forward+backward
// time per iteration, cuDNN kernels. They are compared with forward+backward steps
// (no optimizer update); fp16 rows with amp.
func Public(ctx context.Context, eng *app.Engine) ([]PublicComparison, error) {
	return publicWith(eng, eng.Predictor(), nil)
}

// publicWith is Public with the step predicted by pred, for the rows of the sources
// keep accepts (nil: every source).
func publicWith(eng *app.Engine, pred *predictor.Engine, keep func(source string) bool) ([]PublicComparison, error) {
	r := csv.NewReader(bytes.NewReader(assets.PublicMeasurements))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read the embedded public measurements: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("the embedded public measurements are empty")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"source", "gpu", "model", "framework", "precision", "batch_size", "metric", "value", "unit"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("the embedded public measurements lack the column %q", h)
		}
	}
	var out []PublicComparison
	for _, rec := range recs[1:] {
		get := func(h string) string { return rec[col[h]] }
		gpuID := publicGPU(get("gpu"))
		model, known := publicModels[get("model")]
		fw := get("framework")
		if gpuID == "" || !known || get("metric") != "ms_per_iter_fwd_bwd" || get("unit") != "ms" ||
			strings.Contains(fw, "no cuDNN") || (keep != nil && !keep(get("source"))) {
			continue
		}
		batch, err1 := strconv.Atoi(get("batch_size"))
		ms, err2 := strconv.ParseFloat(get("value"), 64)
		if err1 != nil || err2 != nil || batch <= 0 || !(ms > 0) {
			return nil, fmt.Errorf("public measurement of %s on %s: bad batch %q or value %q", get("model"), get("gpu"), get("batch_size"), get("value"))
		}
		prec := measure.FP32
		if strings.HasPrefix(get("precision"), "fp16") {
			prec = measure.AMP
		}
		net, err := eng.Network(model)
		if err != nil {
			return nil, err
		}
		t, err := eng.GPUTarget(gpuID)
		if err != nil {
			return nil, err
		}
		sw, err := predictor.ParseSoftware(publicSoftware[fw])
		if err != nil {
			return nil, fmt.Errorf("public measurement of %s on %s: %w", get("model"), get("gpu"), err)
		}
		c, err := pred.Curve(predictor.Request{Network: net, Machine: t.Machine, GPU: t.GPU,
			Precision: prec, Policy: measure.Heuristic, Batches: []int{batch}, Run: predictor.Run{Epochs: 1, Images: batch},
			ForwardBackwardOnly: true, Framework: predictor.FrameworkOf(fw), Software: sw})
		if err != nil {
			return nil, err
		}
		p := c.Points[0]
		if !p.Fits {
			continue // the source ran it, so our memory model is too tight here; counted in docs/accuracy.md
		}
		out = append(out, PublicComparison{Source: get("source"), GPU: gpuID, Model: model, Framework: fw,
			Precision: get("precision"), Batch: batch, MeasuredMS: ms, PredictedMS: p.IterMS,
			ErrorPct: 100 * (p.IterMS - ms) / ms})
	}
	return out, nil
}

func publicGPU(name string) string {
	for _, g := range publicGPUs {
		if strings.HasPrefix(name, g.prefix) {
			return g.id
		}
	}
	return ""
}

// tuningSource is the source whose launch-bound rows tuned predictor.DefaultOverheads'
// launch costs; the other sources are held out.
const tuningSource = "dmikushin/cnn-benchmarks"

// BySource summarises comparisons per source, in source order.
func BySource(rows []PublicComparison) []PublicSourceAccuracy {
	idx := map[string]int{}
	var out []PublicSourceAccuracy
	for _, r := range rows {
		i, ok := idx[r.Source]
		if !ok {
			i = len(out)
			idx[r.Source] = i
			set := "held out"
			if r.Source == tuningSource {
				set = "tuning"
			}
			out = append(out, PublicSourceAccuracy{Source: r.Source, Set: set, Caveats: publicCaveats[r.Source]})
		}
		out[i].Rows++
		out[i].MAPEPct += math.Abs(r.ErrorPct)
		out[i].BiasPct += r.ErrorPct
	}
	for i := range out {
		out[i].MAPEPct /= float64(out[i].Rows)
		out[i].BiasPct /= float64(out[i].Rows)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

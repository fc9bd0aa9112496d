package convergence

import "sort"

// The presets' parameters are fitted by Fit to the tuning figures of
// assets/validation/convergence.csv (`cnntime calibrate --convergence` prints them;
// `cnntime validate` checks them on the held-out figures, whole sources left out of the
// fit). ErrorPct is the larger of the tuning MAPE and the held-out MAPE of predictions
// anchored at each held-out source's own smallest batch: the error of the epochs for a
// recipe as tuned as the published ones. A test in app keeps these numbers equal to
// the fit.
var presets = []Model{
	{
		Name:       "imagenet-1k",
		Target:     "75.9% top-1 (MLPerf ResNet-50 v1.5)",
		EpochsMin:  34.50,
		NoiseBatch: 45458,
		ErrorPct:   7.3,
		Regimes: []Regime{
			{Name: "sgd", UpTo: 8192, Label: "SGD with momentum, linear learning-rate scaling and warm-up, which keep ResNet-50's accuracy up to a batch of 8,192 (Goyal et al. 2017); the epochs are those of MLPerf's tuned reference runs"},
			{Name: "lars", UpTo: 67840, Label: "LARS (You et al. 2017), as MLPerf's ResNet-50 reference runs from 8,192 up to 67,840"},
			{Name: "extrapolated", Label: "beyond the largest published run (67,840): the fitted law extrapolated, with LARS or LAMB"},
		},
		Basis:         "MLPerf Training ResNet-50 reference convergence points (mlcommons/logging, rcp_checker): means of 10 to 28 reference runs at each batch, LARS, to 75.9% top-1",
		FittedOn:      "ResNet-50 at 224 px",
		FittedFamily:  "ResNet",
		FittedInput:   224,
		SmallestBatch: 1632,
	},
	{
		Name:       "cifar-10",
		Target:     "94% top-1 (DAWNBench)",
		EpochsMin:  19.86,
		NoiseBatch: 5071,
		ErrorPct:   19.0,
		Regimes: []Regime{
			{Name: "sgd", UpTo: 2048, Label: "SGD with (Nesterov) momentum, as the published runs up to a batch of 2,048"},
			{Name: "extrapolated", Label: "beyond the largest published CIFAR-10 run (2,048): assumes a large-batch optimizer (LARS or LAMB, You et al.) keeps the fitted law"},
		},
		Basis:         "DAWNBench CIFAR-10 entries (stanford-futuredata/dawn-bench-entries): speed-tuned ResNet-9-class recipes to 94% top-1, at batches 500 to 2,000",
		FittedOn:      "ResNet-9-class networks at 32 px",
		FittedFamily:  "ResNet",
		FittedInput:   32,
		SmallestBatch: 500,
	},
}

// Preset returns the preset of a dataset (a predictor/dataset name), if there is one.
func Preset(dataset string) (Model, bool) {
	for _, p := range presets {
		if p.Name == dataset {
			p.Regimes = append([]Regime(nil), p.Regimes...)
			return p, true
		}
	}
	return Model{}, false
}

// PresetNames lists the datasets with a preset, sorted.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}

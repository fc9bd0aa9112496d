package recipe

import (
	"fmt"
	"math"
	"strings"
)

// Recipe is one published way to train a network: the hyperparameters that decide
// its epochs, the run it was published with (Epochs at GlobalBatch on GPUs GPUs) and
// the accuracy it reached there (Top1 on Dataset). The keys of its YAML/JSON form are
// the names of torchvision's references/classification/train.py flags where train.py
// has one (lr, lr_scheduler, lr_warmup_epochs, label_smoothing, mixup_alpha, ...),
// so that a launch file can pass them on; GlobalBatch is the batch over all GPUs, not
// train.py's per-GPU --batch-size (that is GlobalBatch/GPUs).
type Recipe struct {
	// Name names the recipe among those of its network ("torchvision-v1"); ID is
	// Name/Model, unique among every built-in recipe ("torchvision-v1/resnet50").
	Name string `yaml:"name" json:"name"`
	// Model is the network it was published for (a torchvision zoo name, or a
	// description such as "ResNet-9 (DAWNBench)"); "" in a user's recipe that is not
	// tied to one network.
	Model   string `yaml:"model" json:"model,omitempty"`
	Dataset string `yaml:"dataset" json:"dataset"`
	// Script is the training script the recipe is written for: "torchvision"
	// (pytorch/vision references/classification/train.py), "ffcv"
	// (libffcv/ffcv-imagenet train_imagenet.py), "timm", "mlperf", "tpu" (Google's TPU
	// reference), "paper" (the paper's own setup) or "dawnbench".
	Script string `yaml:"script" json:"script,omitempty"`

	// Opt is the optimizer: sgd, nesterov (SGD with Nesterov momentum), rmsprop,
	// adamw, lars or lamb.
	Opt      string  `yaml:"opt" json:"opt"`
	Momentum float64 `yaml:"momentum" json:"momentum,omitempty"`
	// LR is the peak learning rate at GlobalBatch; LRScaling how it follows the batch:
	// "linear" (lr·B/GlobalBatch, Goyal et al. 2017), "sqrt", or "none" (a table per
	// batch, as MLPerf's).
	LR        float64 `yaml:"lr" json:"lr"`
	LRScaling string  `yaml:"lr_scaling" json:"lr_scaling"`
	// LRScheduler is the schedule after warm-up: steplr (×LRGamma every LRStepSize
	// epochs), exponentiallr, cosineannealinglr (to LRMin), polynomial, or
	// triangular (linear down to 0 after the peak at the end of the warm-up).
	LRScheduler string  `yaml:"lr_scheduler" json:"lr_scheduler"`
	LRStepSize  float64 `yaml:"lr_step_size" json:"lr_step_size,omitempty"`
	LRGamma     float64 `yaml:"lr_gamma" json:"lr_gamma,omitempty"`
	LRMin       float64 `yaml:"lr_min" json:"lr_min,omitempty"`
	// LRWarmupEpochs of warm-up by LRWarmupMethod (linear or constant) from
	// LRWarmupDecay × LR.
	LRWarmupEpochs float64 `yaml:"lr_warmup_epochs" json:"lr_warmup_epochs,omitempty"`
	LRWarmupMethod string  `yaml:"lr_warmup_method" json:"lr_warmup_method,omitempty"`
	LRWarmupDecay  float64 `yaml:"lr_warmup_decay" json:"lr_warmup_decay,omitempty"`
	WeightDecay    float64 `yaml:"weight_decay" json:"weight_decay"`
	// NormWeightDecay is the weight decay of normalisation layers' parameters when it
	// differs from WeightDecay (torchvision's --norm-weight-decay; FFCV's bn_wd 0).
	NormWeightDecay *float64 `yaml:"norm_weight_decay" json:"norm_weight_decay,omitempty"`

	LabelSmoothing float64 `yaml:"label_smoothing" json:"label_smoothing,omitempty"`
	MixupAlpha     float64 `yaml:"mixup_alpha" json:"mixup_alpha,omitempty"`
	CutmixAlpha    float64 `yaml:"cutmix_alpha" json:"cutmix_alpha,omitempty"`
	// AutoAugment is the augmentation policy (torchvision's --auto-augment: imagenet
	// for AutoAugment, ta_wide for TrivialAugment, ra for RandAugment); RandomErase
	// its probability.
	AutoAugment string  `yaml:"auto_augment" json:"auto_augment,omitempty"`
	RandomErase float64 `yaml:"random_erase" json:"random_erase,omitempty"`
	// RASampler repeats each image RAReps times per epoch (repeated augmentation).
	RASampler bool `yaml:"ra_sampler" json:"ra_sampler,omitempty"`
	RAReps    int  `yaml:"ra_reps" json:"ra_reps,omitempty"`
	// ModelEMA keeps an exponential moving average of the weights (decay
	// ModelEMADecay, updated every ModelEMASteps steps; 0: the script's default).
	ModelEMA      bool    `yaml:"model_ema" json:"model_ema,omitempty"`
	ModelEMADecay float64 `yaml:"model_ema_decay" json:"model_ema_decay,omitempty"`
	ModelEMASteps int     `yaml:"model_ema_steps" json:"model_ema_steps,omitempty"`

	// TrainCropSize is the training crop (pixels); TrainCropSizeStart, when set, the
	// crop progressive resizing starts from (FFCV: 160 rising to 192).
	TrainCropSize      int    `yaml:"train_crop_size" json:"train_crop_size"`
	TrainCropSizeStart int    `yaml:"train_crop_size_start" json:"train_crop_size_start,omitempty"`
	ValResizeSize      int    `yaml:"val_resize_size" json:"val_resize_size"`
	ValCropSize        int    `yaml:"val_crop_size" json:"val_crop_size"`
	Interpolation      string `yaml:"interpolation" json:"interpolation,omitempty"`

	// Epochs and GlobalBatch are the run the recipe was published with, on GPUs GPUs
	// (train.py's --batch-size is GlobalBatch/GPUs); Top1 the top-1 accuracy (%) it
	// reached on Dataset's validation set.
	Epochs      float64 `yaml:"epochs" json:"epochs"`
	GlobalBatch int     `yaml:"global_batch" json:"global_batch"`
	GPUs        int     `yaml:"gpus" json:"gpus,omitempty"`
	Top1        float64 `yaml:"top1" json:"top1"`

	// Law is how the epochs follow the global batch, and the batches it was shown on.
	Law Law `yaml:"law" json:"law"`

	// Source cites where the recipe and its accuracy are published (repository, path
	// and commit, or paper and section); Notes says what the fields above do not.
	Source string `yaml:"source" json:"source"`
	Notes  string `yaml:"notes" json:"notes,omitempty"`
}

// ID is the recipe's unique name among the built-in ones: Name/Model, or Name alone
// when it has no model.
func (r Recipe) ID() string {
	if r.Model == "" {
		return r.Name
	}
	return r.Name + "/" + r.Model
}

// PerGPUBatch is the batch each GPU ran in the published run (train.py's
// --batch-size): GlobalBatch/GPUs, or GlobalBatch when GPUs is not given.
func (r Recipe) PerGPUBatch() int {
	if r.GPUs <= 1 {
		return r.GlobalBatch
	}
	return r.GlobalBatch / r.GPUs
}

// TargetText is the accuracy the recipe reached, in words: "76.1% top-1 on imagenet-1k".
func (r Recipe) TargetText() string {
	return fmt.Sprintf("%s top-1 on %s", FormatTop1(r.Top1), r.Dataset)
}

// FormatTop1 writes an accuracy in percent with the decimals it needs, at most two:
// 76.13 → "76.13%", 75.9 → "75.9%", 94 → "94%".
func FormatTop1(pct float64) string {
	s := fmt.Sprintf("%.2f", pct)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// The values a recipe's enumerated fields take.
var (
	Optimizers   = []string{"sgd", "nesterov", "rmsprop", "adamw", "lars", "lamb"}
	Schedulers   = []string{"steplr", "exponentiallr", "cosineannealinglr", "polynomial", "triangular"}
	LRScalings   = []string{"linear", "sqrt", "none"}
	WarmupMethod = []string{"linear", "constant"}
)

// Bounds on a recipe's numbers: past them a figure is a typing mistake, not a recipe.
const (
	MaxEpochs      = 10000
	MaxGlobalBatch = 1 << 24
	maxLR          = 1000
	maxCrop        = 4096
)

// Check reports the first thing wrong with the recipe, naming the field (by its YAML
// key) and what to give instead; nil when it is usable.
func (r Recipe) Check() error {
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("recipe %s, %s: %s", orUnnamed(r.ID()), key, fmt.Sprintf(format, a...))
	}
	switch {
	case strings.TrimSpace(r.Name) == "":
		return fmt.Errorf("recipe: give it a name (the key name)")
	case strings.ContainsAny(r.Name, "/\n\r\t") || strings.ContainsAny(r.Model, "/\n\r\t"):
		return bad("name", "%q: a name holds no slash, tab or line break", r.ID())
	case strings.TrimSpace(r.Dataset) == "":
		return bad("dataset", "give the dataset its accuracy was reached on (imagenet-1k, cifar-10, ...)")
	case !finiteIn(r.Epochs, 0, MaxEpochs) || r.Epochs == 0:
		return bad("epochs", "%v: give the epochs of the published run, above 0 and up to %d", r.Epochs, MaxEpochs)
	case r.GlobalBatch < 1 || r.GlobalBatch > MaxGlobalBatch:
		return bad("global_batch", "%d: give the published run's batch over all its GPUs, 1 to %d", r.GlobalBatch, MaxGlobalBatch)
	case !oneOf(r.Opt, Optimizers):
		return bad("opt", "%q: use one of %s", r.Opt, strings.Join(Optimizers, ", "))
	case !finiteIn(r.LR, 0, maxLR) || r.LR == 0:
		return bad("lr", "%v: give the peak learning rate at the published batch, above 0 and up to %d", r.LR, maxLR)
	case !oneOf(r.LRScaling, LRScalings):
		return bad("lr_scaling", "%q: use one of %s", r.LRScaling, strings.Join(LRScalings, ", "))
	case !oneOf(r.LRScheduler, Schedulers):
		return bad("lr_scheduler", "%q: use one of %s", r.LRScheduler, strings.Join(Schedulers, ", "))
	case r.LRScheduler == "steplr" && (!finiteIn(r.LRStepSize, 0, MaxEpochs) || r.LRStepSize == 0):
		return bad("lr_step_size", "%v: give the epochs between steps of the rate, above 0", r.LRStepSize)
	case (r.LRScheduler == "steplr" || r.LRScheduler == "exponentiallr") && !(r.LRGamma > 0 && r.LRGamma < 1):
		return bad("lr_gamma", "%v: give the factor the rate is multiplied by at each step, between 0 and 1", r.LRGamma)
	}
	switch {
	case !finiteIn(r.Momentum, 0, 1) || r.Momentum == 1:
		return bad("momentum", "%v: give a momentum from 0 up to, not including, 1", r.Momentum)
	case !finiteIn(r.LRMin, 0, r.LR):
		return bad("lr_min", "%v: give a final rate from 0 up to the peak rate %v", r.LRMin, r.LR)
	case !finiteIn(r.LRWarmupEpochs, 0, r.Epochs):
		return bad("lr_warmup_epochs", "%v: give the warm-up's epochs, from 0 up to the run's %v", r.LRWarmupEpochs, r.Epochs)
	case r.LRWarmupMethod != "" && !oneOf(r.LRWarmupMethod, WarmupMethod):
		return bad("lr_warmup_method", "%q: use one of %s", r.LRWarmupMethod, strings.Join(WarmupMethod, ", "))
	case !finiteIn(r.LRWarmupDecay, 0, 1):
		return bad("lr_warmup_decay", "%v: give the warm-up's starting fraction of the rate, from 0 to 1", r.LRWarmupDecay)
	case !finiteIn(r.WeightDecay, 0, 1):
		return bad("weight_decay", "%v: give a weight decay from 0 to 1", r.WeightDecay)
	case r.NormWeightDecay != nil && !finiteIn(*r.NormWeightDecay, 0, 1):
		return bad("norm_weight_decay", "%v: give a weight decay from 0 to 1", *r.NormWeightDecay)
	case !finiteIn(r.LabelSmoothing, 0, 1) || r.LabelSmoothing == 1:
		return bad("label_smoothing", "%v: give a smoothing from 0 up to, not including, 1", r.LabelSmoothing)
	case !finiteIn(r.MixupAlpha, 0, 100):
		return bad("mixup_alpha", "%v: give mixup's alpha from 0 (none) to 100", r.MixupAlpha)
	case !finiteIn(r.CutmixAlpha, 0, 100):
		return bad("cutmix_alpha", "%v: give cutmix's alpha from 0 (none) to 100", r.CutmixAlpha)
	case !finiteIn(r.RandomErase, 0, 1):
		return bad("random_erase", "%v: give random erasing's probability from 0 to 1", r.RandomErase)
	case r.RAReps < 0 || r.RAReps > 100:
		return bad("ra_reps", "%d: give the repetitions of each image, 0 to 100", r.RAReps)
	case !finiteIn(r.ModelEMADecay, 0, 1) || r.ModelEMADecay == 1:
		return bad("model_ema_decay", "%v: give the average's decay from 0 up to, not including, 1", r.ModelEMADecay)
	case r.ModelEMASteps < 0:
		return bad("model_ema_steps", "%d: give the steps between updates of the average, 0 or more", r.ModelEMASteps)
	case r.TrainCropSize < 1 || r.TrainCropSize > maxCrop:
		return bad("train_crop_size", "%d: give the training crop in pixels, 1 to %d", r.TrainCropSize, maxCrop)
	case r.TrainCropSizeStart < 0 || r.TrainCropSizeStart > r.TrainCropSize:
		return bad("train_crop_size_start", "%d: give the crop progressive resizing starts from, up to the training crop %d (0: none)", r.TrainCropSizeStart, r.TrainCropSize)
	case r.ValCropSize < 1 || r.ValCropSize > maxCrop:
		return bad("val_crop_size", "%d: give the validation crop in pixels, 1 to %d", r.ValCropSize, maxCrop)
	case r.ValResizeSize < r.ValCropSize || r.ValResizeSize > maxCrop:
		return bad("val_resize_size", "%d: give the size validation images are resized to, from the crop %d up to %d", r.ValResizeSize, r.ValCropSize, maxCrop)
	case r.GPUs < 0 || r.GPUs > r.GlobalBatch:
		return bad("gpus", "%d: give the GPUs of the published run, up to its global batch %d (0: not given)", r.GPUs, r.GlobalBatch)
	case r.GPUs > 0 && r.GlobalBatch%r.GPUs != 0:
		return bad("gpus", "%d GPUs do not split the global batch %d evenly: give the batch over all GPUs", r.GPUs, r.GlobalBatch)
	case !finiteIn(r.Top1, 0, 100) || r.Top1 == 0:
		return bad("top1", "%v: give the top-1 accuracy (%%) the published run reached, above 0 and up to 100", r.Top1)
	case strings.TrimSpace(r.Source) == "":
		return bad("source", "say where the recipe and its accuracy are published")
	}
	if err := r.Law.check(r); err != nil {
		return bad("law", "%v", err)
	}
	return nil
}

func orUnnamed(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}

func oneOf(s string, list []string) bool {
	for _, v := range list {
		if s == v {
			return true
		}
	}
	return false
}

// finiteIn says whether x is a finite number in [lo, hi].
func finiteIn(x, lo, hi float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= lo && x <= hi
}

// GoyalWarmupEpochs is the gradual warm-up Goyal et al. 2017 add when a linearly scaled
// learning rate grows past the published batch's: 5 epochs, linear.
const GoyalWarmupEpochs = 5

// AtBatch is the recipe as a run at global batch b uses it: the learning rate
// follows the recipe's scaling rule (linear: × b/GlobalBatch; sqrt: × √(b/GlobalBatch);
// none: as published), a linearly scaled rate raised past the published one gets at
// least GoyalWarmupEpochs of linear warm-up, and GlobalBatch is b. The epochs stay the
// published ones: how many a run at b needs is its Plan's (Plan.At).
func (r Recipe) AtBatch(b int) Recipe {
	if b < 1 || b == r.GlobalBatch {
		return r
	}
	ratio := float64(b) / float64(r.GlobalBatch)
	switch r.LRScaling {
	case "linear":
		r.LR *= ratio
		r.LRMin *= ratio
		if ratio > 1 && r.LRWarmupEpochs < GoyalWarmupEpochs {
			r.LRWarmupEpochs, r.LRWarmupMethod = math.Min(GoyalWarmupEpochs, r.Epochs), "linear"
		}
	case "sqrt":
		r.LR *= math.Sqrt(ratio)
		r.LRMin *= math.Sqrt(ratio)
	}
	r.GlobalBatch = b
	if r.GPUs > 0 && b%r.GPUs != 0 {
		r.GPUs = 0
	}
	return r
}

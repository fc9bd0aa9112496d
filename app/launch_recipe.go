package app

import (
	"fmt"
	"math"
	"strings"

	"cnntime/app/launch"
	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// launchRecipe is the recipe a launch file trains c's network with: the one its
// prediction trained to the target with (c.Recipe: a chosen recipe, the user's file, or
// the network's default), else, for a fixed number of epochs, the network's own recipe
// in the book (its first), else the dataset's fallback (ImageNet's for synthetic data,
// whose images stand in for ImageNet's); own says whether it was published for the
// network.
func launchRecipe(c *predictor.Curve, dataset string) (r recipe.Recipe, own bool, err error) {
	if c.Recipe != nil {
		return c.Recipe.Recipe, c.Recipe.OwnNetwork, nil
	}
	book, err := Recipes()
	if err != nil {
		return recipe.Recipe{}, false, fmt.Errorf("read the built-in recipes: %w", err)
	}
	if dataset == "" {
		dataset = "imagenet-1k"
	}
	return book.Default(c.Model, dataset)
}

// Defaults of torchvision's references/classification/train.py that a recipe leaves
// to it: RMSprop's epsilon (train.py passes eps=0.0316, alpha=0.9), the EMA's decay
// and interval (--model-ema-decay 0.99998, --model-ema-steps 32) and repeated
// augmentation's repeats (--ra-reps 3); and Goyal et al. 2017's 5 epochs of gradual
// warm-up for a batch scaled up linearly.
const (
	trainPyRMSpropEps = 0.0316
	trainPyEMADecay   = 0.99998
	trainPyEMASteps   = 32
	trainPyRAReps     = 3
	goyalWarmupEpochs = 5
	// mlperfPolyPower is the power of MLPerf's ResNet-50 reference's polynomial decay
	// (the recipe book's note on mlperf-lars).
	mlperfPolyPower = 2
)

// scriptRecipe is recipe rc as the training script runs it for network at a global
// batch for epochs at input pixels: the learning rate scaled to the batch by the
// recipe's rule, its schedule stretched to the run's epochs, torchvision's train.py
// defaults where the recipe leaves them, and the EMA as train.py adjusts it to the batch
// and epochs. differs lists what of the recipe the script does not run as published.
func scriptRecipe(rc recipe.Recipe, own bool, network string, batch int, epochs float64, input int) (launch.Recipe, []string, error) {
	out := launch.Recipe{Optimizer: rc.Opt, Momentum: rc.Momentum, WeightDecay: rc.WeightDecay, NormWeightDecay: rc.NormWeightDecay,
		LabelSmoothing: rc.LabelSmoothing, MixupAlpha: rc.MixupAlpha, CutmixAlpha: rc.CutmixAlpha, AutoAugment: rc.AutoAugment,
		RandomErase: rc.RandomErase, Interpolation: rc.Interpolation, ValCrop: rc.ValCropSize, ValResize: rc.ValResizeSize,
		WarmupEpochs: rc.LRWarmupEpochs, WarmupMethod: rc.LRWarmupMethod, WarmupStart: rc.LRWarmupDecay}
	var differs []string
	if rc.Opt == "rmsprop" {
		out.Eps = trainPyRMSpropEps
	}
	if !(rc.GlobalBatch > 0) || !(rc.Epochs > 0) || !(rc.LR > 0) {
		return launch.Recipe{}, nil, fmt.Errorf("recipe %s has no published batch, epochs or learning rate to scale", rc.ID())
	}
	scale := float64(batch) / float64(rc.GlobalBatch)
	how := fmt.Sprintf("lr %g at its batch %d", rc.LR, rc.GlobalBatch)
	switch rc.LRScaling {
	case "linear":
		out.LR = rc.LR * scale
		how = fmt.Sprintf("lr = %g × %d/%d = %.4g (linear scaling)", rc.LR, batch, rc.GlobalBatch, out.LR)
		if batch > rc.GlobalBatch && out.WarmupEpochs == 0 {
			out.WarmupEpochs = goyalWarmupEpochs
			how += fmt.Sprintf(", warmed up over %d epochs (Goyal et al. 2017)", goyalWarmupEpochs)
		}
	case "sqrt":
		out.LR = rc.LR * math.Sqrt(scale)
		how = fmt.Sprintf("lr = %g × √(%d/%d) = %.4g (square-root scaling)", rc.LR, batch, rc.GlobalBatch, out.LR)
	default: // "none": tuned per batch, as MLPerf's table
		out.LR = rc.LR
		if batch != rc.GlobalBatch {
			how = fmt.Sprintf("lr %g as published at batch %d (the recipe tunes it per batch and gives no rule to scale it)", rc.LR, rc.GlobalBatch)
		}
	}
	stretch := epochs / rc.Epochs // the schedule over the run's epochs
	switch rc.LRScheduler {
	case "steplr":
		out.Schedule, out.StepSize, out.Gamma = "step", round2(rc.LRStepSize*stretch), rc.LRGamma
	case "exponentiallr":
		out.Schedule, out.Gamma = "exponential", math.Pow(rc.LRGamma, 1/stretch)
	case "cosineannealinglr":
		out.Schedule, out.MinFactor = "cosine", rc.LRMin/rc.LR
	case "polynomial":
		out.Schedule, out.Power = "poly", mlperfPolyPower
	case "triangular":
		out.Schedule, out.Power = "poly", 1 // down in a line to 0 after the warm-up's peak
	default:
		return launch.Recipe{}, nil, fmt.Errorf("recipe %s: schedule %q: the training script runs steplr, exponentiallr, cosineannealinglr, polynomial and triangular", rc.ID(), rc.LRScheduler)
	}
	if rc.ModelEMA {
		decay, steps := rc.ModelEMADecay, rc.ModelEMASteps
		if decay == 0 {
			decay = trainPyEMADecay
		}
		if steps == 0 {
			steps = trainPyEMASteps
		}
		// train.py's adjustment: alpha = min(1, (1 − decay) × global batch × steps / epochs)
		// per update every `steps` steps; the script takes a per-step decay.
		alpha := min(1, (1-decay)*float64(batch)*float64(steps)/epochs)
		out.EMADecay, out.EMAEvery = math.Pow(1-alpha, 1/float64(steps)), steps
	}
	if rc.RASampler {
		out.RAReps = rc.RAReps
		if out.RAReps == 0 {
			out.RAReps = trainPyRAReps
		}
	}
	if rc.TrainCropSize > 0 && rc.TrainCropSize != input {
		differs = append(differs, fmt.Sprintf("the crop: the recipe trains at %d px; the file trains at %d px, as cnntime predicted", rc.TrainCropSize, input))
	}
	if rc.TrainCropSizeStart > 0 {
		differs = append(differs, fmt.Sprintf("progressive resizing: the recipe's crop rises from %d px; the script trains at one crop throughout", rc.TrainCropSizeStart))
	}
	what := rc.ID()
	if !own {
		what += fmt.Sprintf(", published for %s, not %s", orText(rc.Model, "another network"), network)
	}
	sched := strings.TrimSuffix(rc.LRScheduler, "lr")
	out.Note = fmt.Sprintf("%s (%s): %s, %s; %s schedule over %s epochs (published: %g)",
		what, rc.Source, rc.Opt, how, sched, trimFloat(epochs), rc.Epochs)
	return out, differs, nil
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package app

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/recipe"
)

// A verdict is said once, here, and every place that shows it — the window's results
// table, its Why tab and tooltips, `explain`, `best`, `predict` and the exports —
// prints these words and numbers with these rounding rules, so no two places disagree.

// What sets a step's pace: Point.Bound and Explanation.Bound.
const (
	BoundGPU   = "gpu"   // the GPU and the host's training loop, not the loader
	BoundInput = "input" // the data loader: the GPU waits for it
	BoundCPU   = "cpu"   // a measured CPU's own kernels (a CPU has no GPU to wait for)
)

// BoundText says what bounds a step, as a table cell: "gpu", "cpu", or "input (pytorch
// 256/s)" with the loader's rate (images/s over all GPUs) when it is the loader, and
// "input (pytorch 256/s, CPU assumed)" when that rate is the reference core's standing
// in for a host nobody named.
func BoundText(bound string, loader pipeline.Loader, loaderImagesPerS float64, cpuAssumed bool) string {
	if bound == BoundInput && loaderImagesPerS > 0 {
		assumed := ""
		if cpuAssumed {
			assumed = ", CPU assumed"
		}
		return fmt.Sprintf("input (%s %s/s%s)", loader, RateText(loaderImagesPerS), assumed)
	}
	return bound
}

// BoundWords is a bound as a sentence names it: "the GPU", "the CPU", "the input pipeline".
func BoundWords(bound string) string {
	switch bound {
	case BoundInput:
		return "the input pipeline"
	case BoundCPU:
		return "the CPU"
	case "":
		return "nothing (the batch does not fit)"
	}
	return "the GPU"
}

// HostText names a curve's host as a table cell, the results table's Host CPU column
// and best's and predict's tables: "Intel Xeon Platinum 8480+, 26 vCPUs", or "CPU
// assumed: Intel Xeon Gold 5118, 5 vCPUs (±31% on the time)" where the catalog names no
// CPU, with how far that can move the time where it can (Point.HostErrorPct); "–" for
// none (a measured CPU trains on its own data).
func HostText(h *host.Host, hostErrorPct float64) string {
	if h == nil {
		return "–"
	}
	s := h.Text()
	if hostErrorPct >= 0.5 {
		s += fmt.Sprintf(" (±%.0f%% on the time)", hostErrorPct)
	}
	return s
}

// HostAssumption says what is assumed of a host, for a note under a table, a launch
// file's header or an export: "CPU assumed: … stands in …; vCPUs assumed: …", "" when
// nothing is.
func HostAssumption(h *host.Host) string {
	if h == nil || !h.Assumed() {
		return ""
	}
	return strings.Join(h.Assumptions(), "; ")
}

// AssumedHostsNotes says, a line for each thing assumed, which machines have it
// assumed and what stands in: "CPU assumed for runpod/a (5 vCPUs), lambda/b (30 vCPUs):
// no CPU is named for them, so the loader's reference core (Intel Xeon Gold 5118) stands
// in, and their cores may do 0.92× to 1.85× its work (in the band; a ranking takes the
// slow end)", and the same for vCPUs.
func AssumedHostsNotes(machines []string, hosts map[string]*host.Host) []string {
	var cpu, vcpus []string
	var ref *host.Host
	for _, m := range machines {
		h := hosts[m]
		if h == nil {
			continue
		}
		if h.CPUAssumed {
			name := m
			if h.VCPUs > 0 {
				name += fmt.Sprintf(" (%d vCPUs)", h.VCPUs)
			}
			cpu, ref = append(cpu, name), h
		}
		if h.VCPUsAssumed {
			vcpus = append(vcpus, m)
		}
	}
	var out []string
	if len(cpu) > 0 {
		out = append(out, fmt.Sprintf("CPU assumed for %s: no CPU is named for %s, so the loader's reference core (%s) stands in, and %s cores may do %.2f× to %.2f× its work (in the band; a ranking takes the slow end)",
			strings.Join(cpu, ", "), map[bool]string{true: "them", false: "it"}[len(cpu) > 1], ref.CPU.Model,
			map[bool]string{true: "their", false: "its"}[len(cpu) > 1], ref.SlowSpeed, ref.FastSpeed))
	}
	if len(vcpus) > 0 {
		out = append(out, fmt.Sprintf("vCPUs assumed for %s: none are published, each loader worker is taken to have a core of its own", strings.Join(vcpus, ", ")))
	}
	return out
}

// HostSentence says what an explanation's loader runs on and, where the CPU is
// assumed, how much of the band that is: "Host: Intel Xeon Platinum 8480+ (…); one core
// does 1.47× the reference core's loader work; 26 vCPUs (13 cores, 2 threads each)."
func HostSentence(x *predictor.Explanation) string {
	if x.Host == nil || x.LoaderImagesPerS == 0 {
		return ""
	}
	s := "Host: " + x.Host.Sentence() + "."
	if x.HostErrorPct >= 0.5 {
		s += fmt.Sprintf(" The assumed CPU can move this step ±%.0f%%, which the ±%.0f%% includes.", x.HostErrorPct, x.ErrorPct)
	}
	return s
}

// RateText writes images per second rounded to a whole image with thousands
// separators, "1,875": the one rounding rule for a rate, wherever it is shown
// (charts.FormatRate).
func RateText(imagesPerS float64) string { return charts.FormatRate(imagesPerS) }

// ShareText writes part of whole as a percentage with one decimal, "42.3%" ("<0.1%"
// for a part too small to show, "0.0%" for none, "–" without a whole): the one rule for
// a share of the step, in the Why tab, its chart and `explain`.
func ShareText(part, whole float64) string {
	return charts.FormatShare(part, whole)
}

// IsCPU reports whether a curve's or an explanation's "GPU" is a measured host CPU.
func IsCPU(gpuID string) bool { return gpuID == hw.CPUGPUID }

// DeviceText names the device that runs a curve's step in a table cell: "8×a100-sxm4-40gb"
// for GPUs, "CPU" for a measured CPU (one processor, never "1×cpu").
func DeviceText(gpuID string, count int) string {
	if IsCPU(gpuID) {
		return "CPU"
	}
	return fmt.Sprintf("%d×%s", count, gpuID)
}

// DeviceWord is "CPU" for a measured CPU and "GPU" for the others: what a sentence
// calls the processor that runs the kernels.
func DeviceWord(gpuID string) string {
	if IsCPU(gpuID) {
		return "CPU"
	}
	return "GPU"
}

// MinStepsPerEpoch is the fewest steps an epoch should take at fixed epochs: below it
// a run of a set number of epochs takes few optimizer steps, and rarely trains as well
// as the same epochs at a smaller batch (the schedule was tuned in steps).
const MinStepsPerEpoch = 50

// StepsPerEpoch is how many steps an epoch of images takes at a global batch: the last
// one partial.
func StepsPerEpoch(images, batch int) int {
	if batch <= 0 || images <= 0 {
		return 0
	}
	return (images + batch - 1) / batch
}

// UnavailableWarning is what a curve the run cannot be predicted for says, as a
// warning beside the curves that were.
func UnavailableWarning(c *predictor.Curve) string {
	return "not predicted: " + c.Unavailable
}

// RunWarnings says what a person should know before following the advice of curve c
// at the batches given (its best, its recommended): a fixed number of epochs at so
// large a batch that an epoch is fewer than MinStepsPerEpoch steps; to a target, epochs
// extrapolated outside the recipe's evidence (another network's recipe, a batch
// outside its law's batches) and a recipe that trains at another input size than the
// steps are predicted at; and a GPU whose family no published run tunes
// (Curve.TuningNote). A curve that could not be predicted says why. Nil when there is
// nothing to say.
func RunWarnings(c *predictor.Curve, batches ...int) []string {
	if c.Unavailable != "" {
		return []string{UnavailableWarning(c)}
	}
	var out []string
	if c.TuningNote != "" {
		out = append(out, c.TuningNote)
	}
	if c.Recipe == nil {
		var few []string
		for _, b := range batches {
			if steps := StepsPerEpoch(c.Images, b); steps > 0 && steps < MinStepsPerEpoch {
				few = append(few, fmt.Sprintf("%s at batch %s", charts.Count(steps, "step", "steps"), charts.FormatCount(int64(b))))
			}
		}
		if len(few) > 0 {
			out = append(out, fmt.Sprintf("an epoch of %s images is %s: %d fixed epochs of so few steps rarely train as well as at a smaller batch; train to a target instead, or pick a batch of at most %s (%d steps an epoch)",
				charts.FormatCount(int64(c.Images)), strings.Join(slices.Compact(few), ", "), epochsOf(c), charts.FormatCount(int64(c.Images/MinStepsPerEpoch)), MinStepsPerEpoch))
		}
		return out
	}
	m := c.Recipe
	if !m.OwnNetwork {
		out = append(out, fmt.Sprintf("recipe %s was published for %s, not %s: its epochs are extrapolated to %s (±%.0f%% more); name a recipe of %s's with --recipe or give your own recipe file",
			m.Recipe.ID(), m.Recipe.Model, c.Model, c.Model, recipe.AnotherNetworkPct, c.Model))
	} else {
		var outside []string
		for _, b := range slices.Compact(append([]int(nil), batches...)) {
			if e := m.At(b); e.Extrapolated {
				outside = append(outside, fmt.Sprintf("%s (±%.0f%%)", e.Why, e.ErrorPct))
			}
		}
		if len(outside) > 0 {
			out = append(out, fmt.Sprintf("epochs extrapolated: %s; the epochs follow %s's law from the nearest batch shown and the band grows %.1f%% per doubling",
				strings.Join(outside, "; "), m.Reference.Recipe, m.Reference.SpreadPerDoublingPct))
		}
	}
	if r := m.Recipe; r.TrainCropSize > 0 && c.Input > 0 && r.TrainCropSize != c.Input && r.Name != recipe.CustomName {
		crop := fmt.Sprintf("%d px", r.TrainCropSize)
		if r.TrainCropSizeStart > 0 {
			crop = fmt.Sprintf("%d rising to %d px", r.TrainCropSizeStart, r.TrainCropSize)
		}
		out = append(out, fmt.Sprintf("recipe %s trains at %s; the steps here are predicted at %d px (an input of %d px predicts them as the recipe trains)",
			r.ID(), crop, c.Input, r.TrainCropSize))
	}
	return out
}

// epochsOf is a fixed-epoch curve's epochs, read off its points.
func epochsOf(c *predictor.Curve) int {
	for _, p := range c.Points {
		if p.Fits && p.Epochs > 0 {
			return int(math.Round(p.Epochs))
		}
	}
	return 0
}

// EpochsBasis says in a phrase what a run's epochs are: "90 epochs" for a fixed run;
// to a target, the target and the recipe whose epochs reach it, "to 76.13% top-1 on
// imagenet-1k, recipe torchvision-v1/resnet50" (with the recipe's own accuracy when
// the target is lower, and "for convnext_tiny" when the recipe is another network's).
// The window's status line, the Why tab, the exports' titles and the CLI's notes say
// it in these words.
func EpochsBasis(c *predictor.Curve) string {
	m := c.Recipe
	if m == nil {
		return charts.Count(epochsOf(c), "epoch", "epochs")
	}
	if m.Recipe.Name == recipe.CustomName {
		return "to your target, your epochs"
	}
	s := fmt.Sprintf("to %s, recipe %s", m.TargetName(), m.Recipe.ID())
	if m.TargetFactor != 1 {
		s += fmt.Sprintf(" (published at %s, its schedule compressed ×%.2f)", recipe.FormatTop1(m.Recipe.Top1), m.TargetFactor)
	}
	if !m.OwnNetwork {
		s += " for " + m.Network
	}
	return s
}

// RecommendedPoint is the curve's point at its recommended batch; false when nothing
// fits.
func RecommendedPoint(c *predictor.Curve) (predictor.Point, bool) {
	for _, p := range c.Points {
		if p.Batch == c.Recommended && p.Fits {
			return p, true
		}
	}
	return predictor.Point{}, false
}

// AdviceWarnings are a curve's RunWarnings at its best and at its recommended batch:
// what to know before following either; and, when EnoughSteps set the fastest batch
// aside, which and why.
func AdviceWarnings(c *predictor.Curve) []string {
	if c.Unavailable != "" {
		return []string{UnavailableWarning(c)}
	}
	if c.Best < 0 || c.Best >= len(c.Points) {
		return nil
	}
	var out []string
	if f := c.FastestBatch; f > 0 {
		out = append(out, fmt.Sprintf("the fastest batch, %s, makes %s of %s images: set aside for the best batch of at least %d steps an epoch (the Run tab's Best batch check allows it)",
			charts.FormatCount(int64(f)), charts.Count(StepsPerEpoch(c.Images, f), "step an epoch", "steps an epoch"), charts.FormatCount(int64(c.Images)), MinStepsPerEpoch))
	}
	best := c.Points[c.Best].Batch
	if c.Recommended > 0 && c.Recommended != best {
		return append(out, RunWarnings(c, min(best, c.Recommended), max(best, c.Recommended))...)
	}
	return append(out, RunWarnings(c, best)...)
}

// EnoughSteps limits each fixed-epoch curve's best batch, and with it the recommended
// batch, the scatter's point and the Pareto front, to the batches of at least
// MinStepsPerEpoch steps an epoch, unless t lets it be any batch (Training.AnyBatch):
// a fixed number of epochs of one or a few steps rarely trains as well, so the fastest
// such batch is not advice. Curves to a target keep theirs (their epochs grow with the
// batch already). The curves are copied, never changed in place.
func EnoughSteps(curves []predictor.Curve, t Training) []predictor.Curve {
	if t.AnyBatch || t.Mode == TrainToTarget {
		return curves
	}
	out := curves
	copied := false
	for i := range curves {
		c := curves[i]
		if c.Recipe != nil || c.Images <= 0 {
			continue
		}
		if c.LimitBest(func(p predictor.Point) bool { return StepsPerEpoch(c.Images, p.Batch) >= MinStepsPerEpoch }) {
			if !copied {
				out, copied = append([]predictor.Curve(nil), curves...), true
			}
			out[i] = c
		}
	}
	return out
}

// joinWarnings is warnings as one cell of a table or a CSV.
func joinWarnings(ws []string) string { return strings.Join(ws, "; ") }

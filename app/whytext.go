package app

import (
	"fmt"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// PhaseGroup is a part of a training step as "Why this number?" charts and names it:
// the device's kernels (forward, backward and the optimizer), the host (launching
// kernels, the training script's own work per step), the input pipeline (the batch's copy and
// decoding on the GPU side, and waiting for the loader) or communication (the
// all-reduce the backward pass does not hide).
type PhaseGroup struct {
	Name   string
	Phases []predictor.PhaseTime
	MS     float64
}

// The phase groups' names, in the order they are charted; a measured CPU's kernels are
// GroupCPU's instead of GroupGPU's.
const (
	GroupGPU           = "GPU kernels"
	GroupCPU           = "CPU kernels"
	GroupHost          = "host"
	GroupInput         = "input pipeline"
	GroupCommunication = "communication"
)

// PhaseGroups splits an explanation's step into the four groups, in chart order;
// their times add up to the step's (Phases add up to IterMS). A phase the predictor
// gained since (a framework's own) is the host's until it gets a group, so every
// phase the explanation carries is charted.
func PhaseGroups(x *predictor.Explanation) []PhaseGroup {
	kernels := kernelsGroup(x)
	of := map[string]string{
		"forward": kernels, "backward-data": kernels, "backward-weight": kernels, "optimizer": kernels,
		"host": GroupHost, "script": GroupHost, "input": GroupInput, "loader": GroupInput, "communication": GroupCommunication,
	}
	groups := []PhaseGroup{{Name: kernels}, {Name: GroupHost}, {Name: GroupInput}, {Name: GroupCommunication}}
	for _, ph := range x.Phases.List() {
		name, ok := of[ph.Phase]
		if !ok {
			name = GroupHost
		}
		for i := range groups {
			if groups[i].Name == name {
				groups[i].Phases = append(groups[i].Phases, ph)
				groups[i].MS += ph.MS
			}
		}
	}
	return groups
}

// kernelsGroup names the group of the device's kernels: the GPU's, or a measured CPU's.
func kernelsGroup(x *predictor.Explanation) string {
	if IsCPU(x.GPU) {
		return GroupCPU
	}
	return GroupGPU
}

// LargestGroup is the largest phase group of the step, as the Why chart draws it.
func LargestGroup(x *predictor.Explanation) PhaseGroup {
	groups := PhaseGroups(x)
	best := groups[0]
	for _, g := range groups[1:] {
		if g.MS > best.MS {
			best = g
		}
	}
	return best
}

// stepShare is part of the step in percent, by the one rule (ShareText).
func stepShare(ms float64, x *predictor.Explanation) string { return ShareText(ms, x.Phases.Total()) }

// BoundSentence says what bounds the step in a clause, the same verdict as the results
// table's Bound column and `explain`'s (the explanation's Bound, the curve point's):
// "bound by the input pipeline (the pytorch loader delivers 256 images/s)", "bound by
// the GPU".
func BoundSentence(x *predictor.Explanation) string {
	s := "bound by " + BoundWords(x.Bound)
	if x.Bound == BoundInput && x.LoaderImagesPerS > 0 {
		s += fmt.Sprintf(" (the %s loader delivers %s images/s)", x.Loader, RateText(x.LoaderImagesPerS))
	}
	return s
}

// boundReason says why the verdict is what it is: the loader against the device's
// side of the step, then the largest part of the step.
func boundReason(x *predictor.Explanation) string {
	dev := DeviceWord(x.GPU)
	var s string
	switch {
	case x.Bound == BoundInput:
		s = fmt.Sprintf("the %s loader (%d workers per %s) delivers %s images/s and sets the pace: the %s waits %s (%s) of each step for it",
			x.Loader, x.Workers, dev, RateText(x.LoaderImagesPerS), dev, charts.FormatMS(x.Phases.LoaderMS), stepShare(x.Phases.LoaderMS, x))
	case x.LoaderImagesPerS > 0:
		s = fmt.Sprintf("the %s loader keeps up (it could deliver %s images/s)", x.Loader, RateText(x.LoaderImagesPerS))
	case IsCPU(x.GPU):
		// The engine times a CPU's step on data in memory, whatever the Run tab's loader.
		s = "the CPU runs the step on data already in memory: a loader's workers would share the cores it trains on, so the Run tab's loader applies to the other machines"
	default:
		s = fmt.Sprintf("%s data, no loader to wait for", x.Loader)
	}
	g := LargestGroup(x)
	what := map[string]string{
		GroupGPU: "forward, backward and the optimizer", GroupCPU: "forward, backward and the optimizer",
		GroupHost:          "launching kernels and the training script's own work",
		GroupInput:         "the batch's copy and decoding, and the wait for the loader",
		GroupCommunication: "the gradients' all-reduce between " + gpusWord(x) + " that the backward pass does not hide",
	}[g.Name]
	return fmt.Sprintf("%s; the largest part of the step is %s (%s: %s)", s, groupWords(g.Name), stepShare(g.MS, x), what)
}

// groupWords is a group as a sentence names it.
func groupWords(name string) string {
	switch name {
	case GroupGPU, GroupCPU:
		return "the " + name
	case GroupHost, GroupInput:
		return "the " + name
	}
	return name
}

func gpusWord(x *predictor.Explanation) string {
	if x.Nodes > 1 {
		return fmt.Sprintf("%d GPUs on %d instances", x.GPUCount, x.Nodes)
	}
	return fmt.Sprintf("%d GPUs", x.GPUCount)
}

// BatchWords is the batch as a sentence gives it: "batch 24 (4 GPUs × 6 images)" on
// data-parallel GPUs, whose per-GPU batch times the GPUs is the global batch.
func BatchWords(x *predictor.Explanation) string {
	if x.GPUCount > 1 {
		return fmt.Sprintf("batch %d (%d GPUs × %d images)", x.Batch, x.GPUCount, x.PerGPUBatch)
	}
	return fmt.Sprintf("batch %d", x.Batch)
}

// sourceWords says where an explanation's number comes from, for its device.
func sourceWords(x *predictor.Explanation) string {
	dev := DeviceWord(x.GPU)
	specs := "the GPU's specifications (roofline with tile and wave quantization)"
	if IsCPU(x.GPU) {
		specs = "the CPU's roofline, fitted to its own measured kernels"
	}
	source := map[predictor.Source]string{
		predictor.Measured:     "every kernel measured on this " + dev,
		predictor.Interpolated: "some kernels interpolated between batch sizes measured on this " + dev,
		predictor.Transferred:  "some kernels transferred from another GPU's measurements",
		predictor.Estimated:    "some kernels estimated from " + specs,
	}[x.Source]
	if source == "" {
		source = string(x.Source)
	}
	return source
}

// WhyHeadline says in a few sentences what the numbers are, what bounds them (the
// explanation's Bound: the verdict the results table and `explain` give), why, what
// the largest part of the step is (as charted) and where the numbers come from.
func WhyHeadline(x *predictor.Explanation) string {
	stack := ""
	if x.Framework != "" {
		stack = ", " + string(x.Framework)
	}
	if x.Software.Name != "" {
		stack += " on " + x.Software.Name
	}
	s := fmt.Sprintf("%s on %s at %s, %s%s, %d px: %s per iteration ±%.0f%%, %s images/s. Bound: %s, as the results table says: %s. Where from: %s.",
		x.Model, x.Machine, BatchWords(x), x.Precision, stack, x.Input, charts.FormatMS(x.IterMS), x.ErrorPct,
		RateText(x.ImagesPerS), BoundWords(x.Bound), boundReason(x), sourceWords(x))
	if h := HostSentence(x); h != "" {
		s += " " + h
	}
	return s
}

// WhyBars are the bars of the Why chart: each phase under its group's heading (the
// group's name and share of the step), each with its share of the step as `explain`
// prints it, then the kinds of layer, slowest first (six at most; the table lists
// every kind), each with its share of the layers' kernel time. Empty phases and groups
// are left out.
func WhyBars(x *predictor.Explanation) []charts.Bar {
	var bars []charts.Bar
	for _, g := range PhaseGroups(x) {
		if !(g.MS > 0) {
			continue
		}
		head := fmt.Sprintf("%s: %s of the step", g.Name, stepShare(g.MS, x))
		for _, ph := range g.Phases {
			if ph.MS > 0 {
				bars = append(bars, charts.Bar{Label: phaseTitle(ph.Phase), Value: ph.MS, Group: head, ShareOf: x.Phases.Total()})
			}
		}
	}
	kernelMS := 0.0
	for _, k := range x.Kinds {
		kernelMS += k.MS
	}
	for i, k := range x.Kinds {
		if i == 6 {
			break
		}
		bars = append(bars, charts.Bar{Label: k.Kind, Value: k.MS, Group: KindsGroup, ShareOf: kernelMS})
	}
	return bars
}

// KindsGroup is the heading of the Why chart's kinds of layer.
const KindsGroup = "kernel time by kind of layer"

// phaseTitle is a phase's name in words.
func phaseTitle(phase string) string {
	out := []rune(phase)
	for i, r := range out {
		if r == '_' || r == '-' {
			out[i] = ' '
		}
	}
	return string(out)
}

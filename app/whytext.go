package app

import (
	"fmt"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// PhaseGroup is a part of a training step as "Why this number?" charts and names it:
// the GPU's kernels (forward, backward and the optimizer), the host (launching
// kernels, the training script's own work per step), the input pipeline (the batch's copy and
// decoding on the GPU side, and waiting for the loader) or communication (the
// all-reduce the backward pass does not hide).
type PhaseGroup struct {
	Name   string
	Phases []predictor.PhaseTime
	MS     float64
}

// The phase groups' names, in the order they are charted.
const (
	GroupGPU           = "GPU kernels"
	GroupHost          = "host"
	GroupInput         = "input pipeline"
	GroupCommunication = "communication"
)

// PhaseGroups splits an explanation's step into the four groups, in chart order;
// their times add up to the step's (Phases add up to IterMS).
func PhaseGroups(x *predictor.Explanation) []PhaseGroup {
	of := map[string]string{
		"forward": GroupGPU, "backward-data": GroupGPU, "backward-weight": GroupGPU, "optimizer": GroupGPU,
		"host": GroupHost, "script": GroupHost, "input": GroupInput, "loader": GroupInput, "communication": GroupCommunication,
	}
	groups := []PhaseGroup{{Name: GroupGPU}, {Name: GroupHost}, {Name: GroupInput}, {Name: GroupCommunication}}
	for _, ph := range x.Phases.List() {
		name, ok := of[ph.Phase]
		if !ok { // a phase the predictor gained since: the host's, until it gets a group
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

// BoundGroup is what bounds the step as the Why tab says it: its largest phase group.
// The chart shows the same groups, so the sentence and the bars always agree.
func BoundGroup(x *predictor.Explanation) PhaseGroup {
	groups := PhaseGroups(x)
	best := groups[0]
	for _, g := range groups[1:] {
		if g.MS > best.MS {
			best = g
		}
	}
	return best
}

// stepShare is part of the step in percent.
func stepShare(ms float64, x *predictor.Explanation) string {
	total := x.Phases.Total()
	if !(total > 0) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*ms/total)
}

// BoundSentence says what bounds the step, with its share, in a clause: "the GPU
// kernels bound the step (82% of it)".
func BoundSentence(x *predictor.Explanation) string {
	g := BoundGroup(x)
	share := stepShare(g.MS, x)
	switch g.Name {
	case GroupInput:
		s := fmt.Sprintf("the input pipeline bounds the step (%s of it", share)
		if x.LoaderImagesPerS > 0 {
			s += fmt.Sprintf(": the %s loader delivers %s images/s", x.Loader, charts.FormatCount(int64(x.LoaderImagesPerS)))
		}
		return s + ")"
	case GroupCommunication:
		return fmt.Sprintf("communication bounds the step (%s of it: the gradients' all-reduce between %s that the backward pass does not hide)", share, gpusWord(x))
	case GroupHost:
		return fmt.Sprintf("the host bounds the step (%s of it: launching kernels and the training script's own work)", share)
	}
	return fmt.Sprintf("the GPU kernels bound the step (%s of it: forward, backward and the optimizer)", share)
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

// WhyHeadline says in a few sentences what the numbers are, what bounds them (the
// largest phase group, as charted) and where they come from.
func WhyHeadline(x *predictor.Explanation) string {
	source := map[predictor.Source]string{
		predictor.Measured:     "every kernel measured on this GPU",
		predictor.Interpolated: "some kernels interpolated between batch sizes measured on this GPU",
		predictor.Transferred:  "some kernels transferred from another GPU's measurements",
		predictor.Estimated:    "some kernels estimated from the GPU's specifications (roofline with tile and wave quantization)",
	}[x.Source]
	if source == "" {
		source = string(x.Source)
	}
	text := fmt.Sprintf("%s on %s at %s, %s, %d px: %s per iteration ±%.0f%%, %s images/s. Why: %s.",
		x.Model, x.Machine, BatchWords(x), x.Precision, x.Input, charts.FormatMS(x.IterMS), x.ErrorPct,
		charts.FormatCount(int64(x.ImagesPerS)), BoundSentence(x))
	if x.Bound == "input" && BoundGroup(x).Name != GroupInput {
		// The loader is slower than the rest of the step, but its wait is not the
		// largest part: say so rather than call the step input-bound.
		text += fmt.Sprintf(" The %s loader is slower than the rest of the step: the GPU waits %s for it each step (%s).",
			x.Loader, charts.FormatMS(x.Phases.LoaderMS), stepShare(x.Phases.LoaderMS, x))
	}
	return text + " Where from: " + source + "."
}

// WhyBars are the bars of the Why chart: each phase under its group's heading (the
// group's name and share of the step), then the kinds of layer, slowest first (six at
// most; the table lists every kind). Empty phases and groups are left out.
func WhyBars(x *predictor.Explanation) []charts.Bar {
	var bars []charts.Bar
	for _, g := range PhaseGroups(x) {
		if !(g.MS > 0) {
			continue
		}
		head := fmt.Sprintf("%s: %s of the step", g.Name, stepShare(g.MS, x))
		for _, ph := range g.Phases {
			if ph.MS > 0 {
				bars = append(bars, charts.Bar{Label: phaseTitle(ph.Phase), Value: ph.MS, Group: head})
			}
		}
	}
	for i, k := range x.Kinds {
		if i == 6 {
			break
		}
		bars = append(bars, charts.Bar{Label: k.Kind, Value: k.MS, Group: KindsGroup})
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

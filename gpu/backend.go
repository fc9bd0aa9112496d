package gpu

import (
	"context"
	"sort"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Backend times layer kernels and whole training steps on one device.
type Backend interface {
	// Device describes the device and the software it runs.
	Device() measure.Device
	// TimeLayer runs one phase of one layer configuration at a batch size repeats times
	// after warm-up and returns the median and half the interquartile range. A
	// configuration that does not fit or that the backend cannot run is a measurement
	// with status OutOfMemory or Unsupported, not an error; the error is for a device
	// that failed or a cancelled context.
	TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error)
	// RunStep runs a whole network's training step (forward, backward, SGD update) end
	// to end repeats times after warm-up: the ground truth a per-layer prediction is
	// checked against.
	RunStep(ctx context.Context, net *cnn.Network, batch int, prec measure.Precision, repeats int) (measure.Step, error)
}

// Summarize returns the median and half the interquartile range of times (ms).
// It returns zeros for no times.
func Summarize(times []float64) (median, spread float64) {
	if len(times) == 0 {
		return 0, 0
	}
	s := append([]float64(nil), times...)
	sort.Float64s(s)
	return quantile(s, 0.5), (quantile(s, 0.75) - quantile(s, 0.25)) / 2
}

// quantile interpolates linearly between the order statistics of sorted s.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

// WarmupRuns is how many untimed runs precede the timed repeats.
const WarmupRuns = 2

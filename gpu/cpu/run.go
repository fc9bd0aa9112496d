package cpu

// The SGD settings of the backend's training step.
const (
	momentum     = 0.9
	learningRate = 1e-3
)

// layerRun is one layer's kernels bound to their tensors. The training step and
// TimeLayer both run a layer through it, so a phase timed alone does exactly the work
// the step does for that phase: the sum of a network's timed phases is its step.
type layerRun struct {
	op  op
	xs  [][]float32 // the inputs
	dxs [][]float32 // their gradients; a nil entry is one nobody needs (the image's)
	y   []float32   // the output
	dy  []float32   // its gradient, which the layers reading y add into
}

// forward computes the output and clears the output's gradient, which the backward
// pass accumulates into (a tensor read by several layers receives several gradients).
func (r *layerRun) forward() {
	r.op.forward(r.xs, r.y)
	clear(r.dy)
}

// backwardData adds the inputs' gradients into dxs. It runs before backwardWeights,
// whose update changes the weights it reads.
func (r *layerRun) backwardData() { r.op.backwardData(r.xs, r.y, r.dy, r.dxs) }

// backwardWeights computes the parameters' gradients and applies SGD with momentum to
// them at once (the optimizer runs in the backward pass, as PyTorch's
// post-accumulate-grad hooks do), so the update is part of the timed weight-gradient
// kernel and the step has no untimed work.
func (r *layerRun) backwardWeights(lr float32) {
	r.op.backwardWeights(r.xs, r.y, r.dy)
	for _, p := range r.op.params() {
		p.sgdStep(lr)
	}
}

// sgdStep moves the weights against their gradient with momentum and zeroes the
// gradient for the next step's accumulation. It streams three arrays and a fourth
// (the gradient) is written: memory-bound, split over the cores.
func (p *param) sgdStep(lr float32) {
	parallelFor(len(p.w), 1<<15, func(lo, hi int) {
		w, g, m := p.w[lo:hi], p.g[lo:hi], p.m[lo:hi]
		for k := range w {
			m[k] = momentum*m[k] + g[k]
			w[k] -= lr * m[k]
			g[k] = 0
		}
	})
}

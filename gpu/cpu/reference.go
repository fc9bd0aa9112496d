package cpu

import (
	"fmt"

	"cnntime/predictor/cnn"
)

// Reference is one layer's forward and backward pass computed by the CPU backend on
// fixed pseudo-random inputs and parameters: what the CUDA worker's self-test compares its outputs
// and gradients with. Params hold the layer's initial parameters in the layout cuDNN
// and cuBLAS take (convolution K×C/g×R×S, linear out×in, normalisation scale then
// shift); DParams their gradients in the same order.
type Reference struct {
	Inputs  [][]float32
	Params  [][]float32
	DY      []float32
	Y       []float32
	DX      [][]float32
	DParams [][]float32
}

// NewReference computes the reference for configuration c at a batch size; seed picks
// the inputs and the output gradient.
func NewReference(c cnn.Config, batch int, seed uint64) (*Reference, error) {
	return NewRoundedReference(c, batch, seed, nil)
}

// NewRoundedReference is NewReference with the inputs, parameters and output gradient
// first rounded in place by round (to FP16, say: the values a mixed-precision run
// starts from), so that a comparison with it sees only the arithmetic's error and max
// pooling picks the same winners; nil rounds nothing.
func NewRoundedReference(c cnn.Config, batch int, seed uint64, round func([]float32)) (*Reference, error) {
	if round == nil {
		round = func([]float32) {}
	}
	if batch < 1 {
		return nil, fmt.Errorf("reference of %s at batch %d: the batch must be positive", c.Key(), batch)
	}
	shapes := inShapesOf(c)
	o, err := newOp(c, shapes, batch)
	if err != nil {
		return nil, err
	}
	r := &Reference{}
	for i, s := range shapes {
		x := make([]float32, int64(batch)*s.Elems())
		fillRandom(x, 1, seed+uint64(i)*7919)
		round(x)
		r.Inputs = append(r.Inputs, x)
		r.DX = append(r.DX, make([]float32, len(x)))
	}
	for i, p := range o.params() {
		// A fresh layer's biases are zeros and its norms' scales ones: a kernel that
		// ignored them would still match. The reference's parameters are off both.
		noise := make([]float32, len(p.w))
		fillRandom(noise, 0.5, seed+uint64(i+1)*15485863)
		for j := range p.w {
			p.w[j] += noise[j]
		}
		round(p.w)
		r.Params = append(r.Params, append([]float32(nil), p.w...))
		clear(p.g)
	}
	r.Y = make([]float32, int64(batch)*c.Out.Elems())
	r.DY = make([]float32, len(r.Y))
	fillRandom(r.DY, 1, seed+104729)
	round(r.DY)
	run := layerRun{op: o, xs: r.Inputs, dxs: r.DX, y: r.Y, dy: make([]float32, len(r.Y))}
	run.forward()
	copy(run.dy, r.DY)
	run.backwardData()
	o.backwardWeights(r.Inputs, r.Y, run.dy)
	for _, p := range o.params() {
		r.DParams = append(r.DParams, append([]float32(nil), p.g...))
	}
	return r, nil
}

// InputShapes are the shapes of configuration c's inputs as a layer benchmark and the
// reference take them: concat splits its channels evenly (the last input takes what is
// left), mul's second input is a per-channel scale as in squeeze-and-excitation, other
// ops' inputs all have the input shape.
func InputShapes(c cnn.Config) []cnn.Shape { return inShapesOf(c) }

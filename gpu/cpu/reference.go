package cpu

import (
	"fmt"

	"cnntime/predictor/cnn"
)

// Reference is one layer's forward and backward pass computed by the CPU backend on
// fixed pseudo-random inputs: what the CUDA worker's self-test compares its outputs
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
		r.Inputs = append(r.Inputs, x)
		r.DX = append(r.DX, make([]float32, len(x)))
	}
	for _, p := range o.params() {
		r.Params = append(r.Params, append([]float32(nil), p.w...))
		clear(p.g)
	}
	r.Y = make([]float32, int64(batch)*c.Out.Elems())
	r.DY = make([]float32, len(r.Y))
	fillRandom(r.DY, 1, seed+104729)
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

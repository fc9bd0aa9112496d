package cpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cnntime/gpu"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Framework names the CPU backend in step measurements.
const Framework = "cnntime-cpu"

// graph is a network's layers bound to its activations and gradients at one batch size.
type graph struct {
	net    *cnn.Network
	layers []layerRun
	image  []float32
}

// stepBytes is the memory a training step at a batch size needs: activations and their
// gradients, weights with gradients and momentum, and every layer's working memory
// (scratchBytes: a large image's im2col buffers alone can be gigabytes).
func stepBytes(net *cnn.Network, batch int) int64 {
	var elems int64
	var scratch int64
	for i := range net.Layers {
		elems += 2*int64(batch)*net.Layers[i].Out.Elems() + 3*net.Layers[i].Params
		scratch += scratchBytes(net.Layers[i].Config, batch)
	}
	return 4*(elems+int64(batch)*net.Input.Elems()) + scratch
}

// newGraph allocates every tensor of the step once; a step then allocates nothing.
func newGraph(net *cnn.Network, batch int) (*graph, error) {
	g := &graph{net: net, image: make([]float32, int64(batch)*net.Input.Elems())}
	fillRandom(g.image, 1, 7)
	for i := range net.Layers {
		l := &net.Layers[i]
		if len(l.Inputs) == 0 {
			return nil, fmt.Errorf("layer %d (%s) has no inputs", i, l.Name)
		}
		for _, j := range l.Inputs {
			if j < -1 || j >= i {
				return nil, fmt.Errorf("layer %d (%s) reads layer %d, which does not come before it", i, l.Name, j)
			}
		}
		shapes := l.InShapes
		if len(shapes) != len(l.Inputs) {
			shapes = inShapesOf(l.Config)
		}
		o, err := newOp(l.Config, shapes, batch)
		if err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i, l.Name, err)
		}
		n := max(int64(batch)*l.Out.Elems(), 1)
		r := layerRun{op: o, y: make([]float32, n), dy: make([]float32, n),
			xs: make([][]float32, len(l.Inputs)), dxs: make([][]float32, len(l.Inputs))}
		for k, j := range l.Inputs {
			if j >= 0 {
				r.xs[k], r.dxs[k] = g.layers[j].y, g.layers[j].dy
			} else {
				r.xs[k] = g.image // the image's gradient (nil) is not computed
			}
		}
		g.layers = append(g.layers, r)
	}
	return g, nil
}

// step runs forward, backward with the SGD update of each layer's parameters, and
// returns the loss.
func (g *graph) step(lr float32) float32 {
	for i := range g.layers {
		g.layers[i].forward()
	}
	for i := len(g.layers) - 1; i >= 0; i-- {
		r := &g.layers[i]
		r.backwardData()
		if len(r.op.params()) > 0 {
			r.backwardWeights(lr)
		}
	}
	return g.layers[len(g.layers)-1].y[0]
}

// RunStep times whole training steps of net: forward, backward and an SGD update with
// momentum, on synthetic images and labels. The step is exactly the layers' phases as
// TimeLayer times them, one after another. A network larger than MemoryLimit at this
// batch size is out of memory; a layer kind the backend lacks makes it unsupported.
func (b *Backend) RunStep(ctx context.Context, net *cnn.Network, batch int, prec measure.Precision, repeats int) (measure.Step, error) {
	s := measure.Step{
		DeviceKey: b.device.Key, Model: net.Name, Batch: batch, Precision: prec,
		Framework: Framework, Source: stepSource(net), Status: measure.OK, At: time.Now().UTC(),
	}
	if batch < 1 || repeats < 1 {
		return s, fmt.Errorf("run a step of %s: batch %d and repeats %d must be positive", net.Name, batch, repeats)
	}
	if len(net.Layers) == 0 || net.Layers[len(net.Layers)-1].Op != cnn.OpLoss {
		return s, fmt.Errorf("run a step of %s: the network must end with its loss layer", net.Name)
	}
	if !cpuPrecision(prec) {
		s.Status = measure.Unsupported
		return s, nil
	}
	if stepBytes(net, batch) > b.MemoryLimit {
		s.Status = measure.OutOfMemory
		return s, nil
	}
	g, err := newGraph(net, batch)
	if errors.Is(err, errUnsupported) {
		s.Status = measure.Unsupported
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("run a step of %s: %w", net.Name, err)
	}
	times, err := timeRuns(ctx, func() { g.step(learningRate) }, repeats)
	if err != nil {
		return s, fmt.Errorf("run a step of %s at batch %d: %w", net.Name, batch, err)
	}
	s.MedianMS, s.SpreadMS = gpu.Summarize(times)
	return s, nil
}

// stepSource is a step's source: "cnntime sweep --step", and ", input N" where net takes
// another input than its zoo model's default, so that a prediction at the default input
// is not anchored to it (app's anchorsFor reads it). A step at the default input keeps
// the plain text, so a sweep again replaces its older rows.
func stepSource(net *cnn.Network) string {
	if d := cnn.DefaultResolution(net.Name); d > 0 && net.Input.H > 0 && net.Input.H != d {
		return fmt.Sprintf("cnntime sweep --step, input %d", net.Input.H)
	}
	return "cnntime sweep --step"
}

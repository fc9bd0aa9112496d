package predictor

import (
	"strings"

	"cnntime/predictor/cnn"
)

// The software stack's kernels. Eager PyTorch runs every layer as its own kernels: a
// batch norm reads its input twice (statistics, then normalise) and writes its output,
// the ReLU after it reads that output and writes another, the residual add reads two
// tensors and writes one. A compiler or a hand-fused library runs a chain of such
// memory-bound layers as one kernel that reads the chain's inputs and writes its
// outputs once, and cuDNN's runtime fusion can fold a batch norm into the convolutions
// around it. Convolutions and linear layers stay the library's: no stack changes them.
// What a stack saves thus follows from the network's own layer mix: little for a
// network of large convolutions, much for one of many small elementwise layers.

// fusedKernel is one kernel a stack runs in place of several memory-bound layers'.
type fusedKernel struct {
	layers []int // the layers whose own kernels it replaces, in network order
	at     int   // the layer it is issued after in the forward pass: the chain's last
	kind   string
	// fwdElems and bwdElems are the tensor elements it reads and writes per sample in
	// the forward and the backward pass; eagerFwd and eagerBwd the unfused layers'.
	fwdElems, bwdElems float64
	eagerFwd, eagerBwd float64
	// prologue: the forward pass runs no kernel at all (the normalisation and the
	// activation are applied as the next convolutions load their input, the
	// statistics gathered as the previous one stores its output).
	prologue bool
}

// fusionPlan is which layers of a network a stack fuses, and into which kernels.
type fusionPlan struct {
	kernels  []fusedKernel
	absorbed []bool // per layer: its own kernels do not run
	at       map[int][]int
}

// fusableOps are the memory-bound layers a compiler fuses: normalisations and
// elementwise operations. Pooling, concatenation, the loss, views and copies keep their
// own kernels.
var fusableOps = map[cnn.Op]bool{
	cnn.OpBatchNorm: true, cnn.OpLayerNorm: true, cnn.OpReLU: true, cnn.OpReLU6: true, cnn.OpSiLU: true,
	cnn.OpHardswish: true, cnn.OpHardsigmoid: true, cnn.OpSigmoid: true, cnn.OpGELU: true, cnn.OpAdd: true,
	cnn.OpMul: true, cnn.OpScale: true, cnn.OpStochasticDepth: true, cnn.OpDropout: true,
}

func isNorm(op cnn.Op) bool { return op == cnn.OpBatchNorm || op == cnn.OpLayerNorm }

// fusion is the fusion plan of req's stack on req's network: none for eager PyTorch
// and for a graph framework's defaults (TensorFlow's and MXNet's batch norm, ReLU and
// add stay separate kernels unless XLA or a fused op is asked for); every chain of
// normalisations and elementwise layers for torch.compile; and for NVIDIA's optimised
// implementations, under amp, those chains with the batch norms between convolutions
// folded into them.
func fusion(req *Request) fusionPlan {
	net := req.Network
	p := fusionPlan{absorbed: make([]bool, len(net.Layers)), at: map[int][]int{}}
	f := req.Framework.orDefault()
	if !(f.Compiles() || f == Optimized && HalfPrecision(req.Precision)) {
		return p
	}
	consumers := make([][]int, len(net.Layers))
	for i := range net.Layers {
		for _, in := range net.Layers[i].Inputs {
			if in >= 0 {
				consumers[in] = append(consumers[in], i)
			}
		}
	}
	for _, g := range groupChains(net, consumers, func(op cnn.Op) bool { return fusableOps[op] }) {
		if len(g) < 2 && !(f == Optimized && isNorm(net.Layers[g[0]].Op)) {
			continue // a lone layer: its own kernel already is one pass
		}
		k := fusedTraffic(net, consumers, g, f == Optimized)
		p.kernels = append(p.kernels, k)
		for _, i := range g {
			p.absorbed[i] = true
		}
		p.at[k.at] = append(p.at[k.at], len(p.kernels)-1)
	}
	return p
}

// groupChains joins the fusable layers of net into chains: a fusable layer joins the
// chain of each fusable input whose output nothing else reads (so the intermediate
// tensor need never be written), and a normalisation starts a chain of its own unless
// its input is such a chain's and carries no statistics yet. Each group lists its
// layers in network order.
func groupChains(net *cnn.Network, consumers [][]int, fusable func(cnn.Op) bool) [][]int {
	parent := make([]int, len(net.Layers))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range net.Layers {
		l := &net.Layers[i]
		if !fusable(l.Op) {
			continue
		}
		for _, in := range l.Inputs {
			if in < 0 || !fusable(net.Layers[in].Op) || len(consumers[in]) != 1 || l.Out != net.Layers[in].Out {
				continue
			}
			if isNorm(l.Op) {
				continue // statistics need their input whole: a norm starts its own chain
			}
			parent[find(i)] = find(in)
		}
	}
	index := map[int]int{}
	var groups [][]int
	for i := range net.Layers {
		if !fusable(net.Layers[i].Op) {
			continue
		}
		r := find(i)
		g, ok := index[r]
		if !ok {
			g = len(groups)
			index[r] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// needsSaved reports whether op's backward reads a tensor of the forward pass (a
// normalisation its input, an activation its input or output, a product its factors);
// an add and a scale by a parameter pass their gradient on without one.
func needsSaved(op cnn.Op) bool { return op != cnn.OpAdd && op != cnn.OpScale }

// fusedTraffic is the kernel that runs group g as one pass. Forward, it reads the
// group's inputs from outside it once, writes the outputs that leave it once, and
// reads each normalisation's input once more for its statistics. Backward, it reads
// the gradients of those outputs, the saved inputs it needs (each normalisation's
// input; the group's output where an activation masks its gradient), writes a
// gradient for every input, and reads each normalisation's input once more for the
// gradient's statistics. One layer alone reproduces the eager kernel's traffic
// (kernels' memoryTraffic).
//
// conv, for NVIDIA's optimised stack, folds the normalisations into the convolutions
// around them: a batch norm whose input a convolution writes has its statistics
// gathered in that convolution's epilogue (no statistics pass), and a chain whose
// outputs only convolutions read is applied in their prologue as they load it: no
// forward kernel at all, and backward one pass over the gradient, the saved input and
// the input gradient (cuDNN's fused dgrad, dReLU and dBN). Only a chain that reads one
// tensor (a batch norm and its activation) is applied so: a residual join's output is
// written once even where only convolutions read it, as applying it on load would read
// both its inputs in every convolution.
func fusedTraffic(net *cnn.Network, consumers [][]int, g []int, conv bool) fusedKernel {
	in := map[int]bool{}
	for _, i := range g {
		in[i] = true
	}
	k := fusedKernel{layers: g, at: g[len(g)-1]}
	var kinds []string
	var extIn, extOut, saved, stats float64
	inputs := 0 // tensors the group reads from outside it
	masked := false
	allConvOut, epilogue := true, true
	for _, i := range g {
		l := &net.Layers[i]
		kinds = append(kinds, string(l.Op))
		fwd, bwd := eagerTraffic(l)
		k.eagerFwd += fwd
		k.eagerBwd += bwd
		for j, src := range l.Inputs {
			if src >= 0 && in[src] {
				continue
			}
			e := float64(l.InShapes[j].Elems())
			extIn += e
			inputs++
			if needsSaved(l.Op) && isNorm(l.Op) {
				saved += e
			}
		}
		if isNorm(l.Op) {
			if src := l.Inputs[0]; !(src >= 0 && net.Layers[src].Op == cnn.OpConv2d) {
				epilogue = false
			}
			stats += float64(l.In.Elems())
		} else if needsSaved(l.Op) {
			masked = true
		}
		outside := len(consumers[i]) == 0
		for _, c := range consumers[i] {
			if !in[c] {
				outside = true
				if net.Layers[c].Op != cnn.OpConv2d {
					allConvOut = false
				}
			}
		}
		if outside {
			extOut += float64(l.Out.Elems())
		}
	}
	if masked {
		saved += extOut
	}
	k.kind = strings.Join(kinds, "+")
	k.fwdElems = extIn + extOut + stats
	k.bwdElems = extOut + saved + extIn + stats
	if conv && epilogue {
		k.fwdElems -= stats
		k.bwdElems -= stats
		if allConvOut && inputs == 1 && k.fwdElems > 0 {
			k.prologue = true
			k.fwdElems = 0
			k.bwdElems = extOut + extIn + extIn // dY, the saved input, dX
			k.kind += " (in the convolutions)"
		}
	}
	return k
}

// eagerTraffic is the elements per sample layer l's own kernels move forward and
// backward, as predictor/kernels counts them for a memory-bound layer.
func eagerTraffic(l *cnn.Layer) (fwd, bwd float64) {
	in, out := float64(l.In.Elems()), float64(l.Out.Elems())
	switch l.Op {
	case cnn.OpBatchNorm, cnn.OpLayerNorm:
		return 2*in + out, 2*out + 2*in
	case cnn.OpAdd:
		n := float64(max(l.NumInputs, 2))
		return n*in + out, out + in
	case cnn.OpMul, cnn.OpScale, cnn.OpStochasticDepth:
		return 2*in + out, 3*in + out
	case cnn.OpDropout:
		return in + 1.25*out, 1.25*out + in
	}
	return in + out, in + 2*out
}

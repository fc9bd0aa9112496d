package predictor

import (
	"fmt"
	"math"

	"cnntime/predictor/hw"
)

// NetworkModel is how well data-parallel training uses the network between nodes.
type NetworkModel struct {
	// Efficiency is the fraction of the nodes' line rate NCCL's inter-node all-reduce
	// reaches. Chosen on the tuning rows of assets/validation/multinode_scaling.csv
	// (the value with the least mean absolute error on them, in steps of 0.05); the
	// held-out rows check it (see `cnntime validate`).
	Efficiency float64
	// LatencyUS is one inter-node ring step's latency where the catalog gives none.
	// ASSUMED: NCCL's measured small-message all-reduce over EFA and InfiniBand is
	// tens of microseconds per step; 20 is taken.
	LatencyUS float64
}

// DefaultNetworkModel is the network model the engine uses.
var DefaultNetworkModel = NetworkModel{Efficiency: 0.45, LatencyUS: 20} // re-chosen (was 0.4) when the step model was refitted (issue 12)

// MaxNodes bounds the node count of a prediction.
const MaxNodes = 4096

// nodes is the number of instances the request trains on (at least 1).
func (req *Request) nodes() int { return max(req.Nodes, 1) }

// totalGPUs is the data-parallel width: the machine's GPUs times the nodes.
func (req *Request) totalGPUs() int { return max(req.Machine.GPUCount, 1) * req.nodes() }

// checkNodes reports what is wrong with the request's node count and network.
func (req *Request) checkNodes() error {
	switch {
	case req.Nodes < 0 || req.Nodes > MaxNodes:
		return fmt.Errorf("%d nodes: give a count from 1 to %d", req.Nodes, MaxNodes)
	case req.Nodes > 1 && !(req.NodeNetwork.Gbps > 0):
		return fmt.Errorf("%d nodes of %s: the network between them has no bandwidth; give one (Gbit/s per node)", req.Nodes, req.Machine.ID)
	}
	return nil
}

// HierarchicalAllReduceMS is the time of NCCL's all-reduce of bytes over nodes × g
// GPUs: a reduce-scatter and an all-gather inside each node over the GPUs' link
// (intraGBs per direction, GB/s), and between them an all-reduce across the nodes in
// which every GPU sends its 1/g share, so each node's network (netGBs per direction)
// carries 2(nodes−1)/nodes of the data. Latencies are per ring step, microseconds.
func HierarchicalAllReduceMS(bytes float64, g, nodes int, intraGBs, intraLatUS, netGBs, netLatUS float64) float64 {
	if bytes <= 0 || g*nodes <= 1 {
		return 0
	}
	ms := 0.0
	if g > 1 {
		// Reduce-scatter then all-gather: (g−1)/g of the data each way, g−1 steps each.
		ms += ringAllReduceMS(bytes, g, intraGBs, intraLatUS)
	}
	if nodes > 1 {
		ms += ringAllReduceMS(bytes, nodes, netGBs, netLatUS)
	}
	return ms
}

// exposedSyncMS is the part of the gradient all-reduce the backward pass does not
// hide, over one node (the instance's interconnect) or several (hierarchical, the
// network between nodes): the all-reduce minus OverlapFraction of the backward
// kernels' time, but at least the reduction of the last bucket.
func (o Overheads) exposedSyncMS(gradBytes float64, req *Request, backwardMS float64) float64 {
	g := max(req.Machine.GPUCount, 1)
	nodes := req.nodes()
	if nodes <= 1 {
		return o.exposedAllReduceMS(gradBytes, g, req.GPU, backwardMS)
	}
	return exposedHierarchicalMS(o, DefaultNetworkModel, gradBytes, g, nodes, req.GPU, req.NodeNetwork, backwardMS)
}

// exposedHierarchicalMS is exposedSyncMS over several nodes with the network model nm.
func exposedHierarchicalMS(o Overheads, nm NetworkModel, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network, backwardMS float64) float64 {
	intra := interconnectGBs(gpu) * o.AllReduceEfficiency
	netGBs := net.Gbps / 8 * nm.Efficiency
	lat := net.LatencyUS
	if !(lat > 0) {
		lat = nm.LatencyUS
	}
	all := func(bytes float64) float64 {
		return HierarchicalAllReduceMS(bytes, g, nodes, intra, o.AllReduceLatencyUS, netGBs, lat)
	}
	total := all(gradBytes)
	last := all(math.Min(gradBytes, o.BucketBytes))
	return math.Max(total-o.OverlapFraction*backwardMS, last)
}

// ScalingStep is a step time over several nodes from a one-GPU step: stepMS and
// backwardMS are one GPU's step and backward kernels at its per-GPU batch; the
// result adds the exposed all-reduce of gradBytes over nodes × g GPUs.
func ScalingStep(o Overheads, nm NetworkModel, stepMS, backwardMS, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) float64 {
	if nodes <= 1 {
		return stepMS + o.exposedAllReduceMS(gradBytes, g, gpu, backwardMS)
	}
	return stepMS + exposedHierarchicalMS(o, nm, gradBytes, g, nodes, gpu, net, backwardMS)
}

// StepParts is one GPU's training step and backward-kernel time, milliseconds, at
// per-GPU batch b for req's CNN, GPU, precision, policy and kernels (its machine,
// nodes and batches are not used): the parts ScalingStep composes.
func (e *Engine) StepParts(req Request, b int) (stepMS, backwardMS float64, err error) {
	switch {
	case req.Network == nil || len(req.Network.Layers) == 0:
		return 0, 0, fmt.Errorf("no network to predict")
	case b <= 0:
		return 0, 0, fmt.Errorf("batch size %d: must be positive", b)
	}
	if _, err := ParseTrainingPrecision(string(req.Precision)); err != nil {
		return 0, 0, err
	}
	t := e.table(req, b)
	return t.stepMS[b], t.backwardMS[b], nil
}

package predictor

import (
	"fmt"
	"math"

	"cnntime/predictor/hw"
)

// NetworkModel is how well data-parallel training uses the network between nodes.
type NetworkModel struct {
	// Efficiency is the fraction of the nodes' line rate NCCL's inter-node all-reduce
	// reaches as bus bandwidth. Fitted with Overheads.StepJitter and CommInterference on
	// the tuning sources of assets/validation/scaling.csv (app/validate.FitScaling, in
	// steps of 0.05 up to 0.95); the held-out sources check it (`cnntime validate` table
	// 5). nccl-tests on 3 nodes of 8 A100 with 4 HDR InfiniBand ports each reach a busbw
	// of 84.8 GB/s on average and 96 at peak of the 100 the ports carry (NVIDIA/nccl-tests
	// issue 119): 0.85–0.96.
	Efficiency float64
	// LatencyUS is one inter-node ring step's latency where the catalog gives none.
	// ASSUMED: NCCL's measured small-message all-reduce over EFA and InfiniBand is
	// tens of microseconds per step; 20 is taken.
	LatencyUS float64
}

// DefaultNetworkModel is the network model the engine uses.
var DefaultNetworkModel = NetworkModel{Efficiency: 0.95, LatencyUS: 20} // refitted (was 0.45) when stragglers were modelled (issue 21)

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

// syncMS is what data parallelism adds to one GPU's step of stepMS (its backward
// kernels take backwardMS) over the request's GPUs and nodes: syncCostMS with the
// instance's interconnect and, over several nodes, the network between them.
func (o Overheads) syncMS(gradBytes float64, req *Request, stepMS, backwardMS float64) float64 {
	return syncCostMS(o, DefaultNetworkModel, stepMS, backwardMS, gradBytes, max(req.Machine.GPUCount, 1), req.nodes(), req.GPU, req.NodeNetwork)
}

// SyncParts splits what data parallelism over g GPUs per node × nodes adds to a
// one-GPU step, milliseconds.
type SyncParts struct {
	// AllReduceMS is the gradient all-reduce (hierarchical over several nodes);
	// ExposedMS the part the backward pass does not hide: all of it but
	// OverlapFraction of the backward kernels' time, and at least the last bucket's.
	AllReduceMS, ExposedMS float64
	// InterferenceMS is what the hidden part still costs: NCCL's kernels run on the
	// same SMs and memory as the backward pass (CommInterference of the hidden time).
	InterferenceMS float64
	// StragglerMS is the wait for the slowest worker at each step's all-reduce:
	// StepJitter × the step × sqrt(2 ln N), the expected maximum of N normally
	// distributed step times above their mean.
	StragglerMS float64
}

// Total is what the parts add to the step.
func (s SyncParts) Total() float64 { return s.ExposedMS + s.InterferenceMS + s.StragglerMS }

// Sync splits the cost of data parallelism over g GPUs per node × nodes for a one-GPU
// step of stepMS with backwardMS of backward kernels and gradBytes of gradients, the
// GPUs joined by gpu's interconnect and the nodes by net (nm says how well).
func Sync(o Overheads, nm NetworkModel, stepMS, backwardMS, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) SyncParts {
	n := max(g, 1) * max(nodes, 1)
	if n <= 1 {
		return SyncParts{}
	}
	intra := interconnectGBs(gpu) * o.allReduceEfficiency(gpu)
	netGBs := net.Gbps / 8 * nm.Efficiency
	lat := net.LatencyUS
	if !(lat > 0) {
		lat = nm.LatencyUS
	}
	all := func(bytes float64) float64 {
		if nodes <= 1 {
			return ringAllReduceMS(bytes, g, intra, o.AllReduceLatencyUS)
		}
		return HierarchicalAllReduceMS(bytes, g, nodes, intra, o.AllReduceLatencyUS, netGBs, lat)
	}
	total := all(gradBytes)
	last := all(math.Min(gradBytes, o.BucketBytes))
	hidden := math.Max(0, math.Min(total-last, o.OverlapFraction*backwardMS))
	return SyncParts{AllReduceMS: total, ExposedMS: total - hidden, InterferenceMS: o.CommInterference * hidden,
		StragglerMS: o.StepJitter * stepMS * math.Sqrt(2*math.Log(float64(n)))}
}

// syncCostMS is Sync's total.
func syncCostMS(o Overheads, nm NetworkModel, stepMS, backwardMS, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) float64 {
	return Sync(o, nm, stepMS, backwardMS, gradBytes, g, nodes, gpu, net).Total()
}

// ScalingStep is a step time over g GPUs per node × nodes from a one-GPU step: stepMS
// and backwardMS are one GPU's step and backward kernels at its per-GPU batch; the
// result adds what Sync says data parallelism costs.
func ScalingStep(o Overheads, nm NetworkModel, stepMS, backwardMS, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) float64 {
	return stepMS + syncCostMS(o, nm, stepMS, backwardMS, gradBytes, g, nodes, gpu, net)
}

// StepParts is one GPU's training step and backward-kernel time, milliseconds, at
// per-GPU batch b for req's CNN, GPU, precision, policy, kernels and framework (its
// machine, nodes and batches are not used): the parts ScalingStep composes.
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

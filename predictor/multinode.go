package predictor

import (
	"fmt"
	"math"

	"cnntime/predictor/hw"
)

// NetworkModel is how well data-parallel training uses the network between nodes.
type NetworkModel struct {
	// Efficiency is the fraction of the nodes' line rate NCCL's inter-node all-reduce
	// reaches as bus bandwidth. Fitted with Overheads.StepJitter, CommInterference and
	// NodeJitter on the tuning sources of assets/validation/scaling.csv
	// (app/validate.FitScaling, in steps of 0.05 up to 0.95); the held-out sources check
	// it (`cnntime validate` table 5). nccl-tests on 3 nodes of 8 A100 with 4 HDR
	// InfiniBand ports each reach a busbw of 84.8 GB/s on average and 96 at peak of the
	// 100 the ports carry (NVIDIA/nccl-tests issue 119): 0.85–0.96. The fit finds less
	// (0.70): its runs are 2017–2020 NCCL and Gloo over one EDR InfiniBand or 25–50 Gbit
	// Ethernet port that 4 to 8 GPUs share through PCIe.
	Efficiency float64
	// LatencyUS is one inter-node ring step's latency where the catalog gives none.
	// ASSUMED: NCCL's measured small-message all-reduce over EFA and InfiniBand is
	// tens of microseconds per step; 20 is taken.
	LatencyUS float64
	// NodeJitter is the relative spread of a whole node's step against the others', the
	// part its GPUs share: the host's input pipeline reading and decoding real data, its
	// CPUs, its network path. Every step waits for the slowest node, on average
	// NodeJitter × the step × sqrt(2 ln nodes) more than the mean, over and above
	// Overheads.StepJitter across all the GPUs. Runs on synthetic data do not have it.
	// Fitted with Efficiency on the tuning sources of scaling.csv.
	NodeJitter float64
}

// DefaultNetworkModel is the network model the engine uses: FitScaling's figures on the
// tuning sources of scaling.csv (issue 34: with the ring through every GPU and the node
// jitter, 2 to 8 held-out nodes went from 6 points optimistic to within ±3 of measured,
// one at +5); 0.80 since FP32 3×3 convolutions run as Winograd's fewer blocks (0.70
// before). It was 0.45 of the line rate until stragglers were modelled (issue 21),
// then 0.95 with a hierarchical all-reduce and no node jitter. Node jitter 0.0125 (0.04
// before issue 34's recalibrated step times moved the fit, 0.035 before the SM-bound NCHW
// batch norm moved it, 0.03 before streaming took the lower of the memory's and the
// SMs' rates, 0.0175 before GeForce clocks and the L2).
var DefaultNetworkModel = NetworkModel{Efficiency: 0.80, LatencyUS: 20, NodeJitter: 0.0125}

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

// AllReduceMS is the time of NCCL's all-reduce of bytes over nodes × g GPUs, the GPUs
// of a node joined by their link (intraGBs per direction, GB/s, intraLatUS per step)
// and the nodes by their network (netGBs per direction per node, netLatUS per step).
// Within one node it is a ring over the g GPUs. Over several nodes NCCL's ring runs
// through all N = g × nodes GPUs, so every link, each node's network included, carries
// 2(N−1)/N of the data, pipelined: the slower of the two bounds the time. (A
// hierarchical all-reduce, reducing inside each node first, would send only
// 2(nodes−1)/nodes of it over the network, half as much at two nodes; NCCL does not,
// which is why 2 to 8 nodes scale worse than that ideal. nccl-tests measures the same:
// the bus bandwidth of a multi-node all-reduce is the node's network rate.) The ring's
// 2(N−1) steps each wait for the network's latency; NCCL's tree, which it picks where
// latency dominates, takes 2·log2(nodes) network steps and the node's own chain of
// 2(g−1) link steps: the lesser of the two is taken.
func AllReduceMS(bytes float64, g, nodes int, intraGBs, intraLatUS, netGBs, netLatUS float64) float64 {
	if bytes <= 0 || g*nodes <= 1 {
		return 0
	}
	if nodes <= 1 {
		return ringAllReduceMS(bytes, g, intraGBs, intraLatUS)
	}
	n := g * nodes
	share := 2 * float64(n-1) / float64(n) * bytes / 1e9 * 1000 // GB moved per link, as ms at 1 GB/s
	if !(netGBs > 0) || g > 1 && !(intraGBs > 0) {
		return math.Inf(1)
	}
	ms := share / netGBs
	if g > 1 {
		ms = math.Max(ms, share/intraGBs)
	}
	ring := 2 * float64(n-1) * netLatUS
	tree := 2*math.Ceil(math.Log2(float64(nodes)))*netLatUS + 2*float64(g-1)*intraLatUS
	return ms + math.Min(ring, tree)/1000
}

// syncMS is what data parallelism adds to one GPU's step of stepMS (its backward
// kernels take backwardMS) over the request's GPUs and nodes: syncCostMS with the
// instance's interconnect and, over several nodes, the network between them.
func (o Overheads) syncMS(gradBytes float64, req *Request, stepMS, backwardMS float64) float64 {
	return o.syncOf(gradBytes, req).parts(stepMS, backwardMS).Total()
}

// syncOf is the sync plan of req's GPUs and nodes for gradBytes of gradients.
func (o Overheads) syncOf(gradBytes float64, req *Request) syncPlan {
	return newSyncPlan(o, DefaultNetworkModel, gradBytes, max(req.Machine.GPUCount, 1), req.nodes(), req.GPU, req.NodeNetwork)
}

// SyncParts splits what data parallelism over g GPUs per node × nodes adds to a
// one-GPU step, milliseconds.
type SyncParts struct {
	// AllReduceMS is the gradient all-reduce (over every GPU of every node, see AllReduceMS);
	// ExposedMS the part the backward pass does not hide: all of it but
	// OverlapFraction of the backward kernels' time, and at least the last bucket's.
	AllReduceMS, ExposedMS float64
	// InterferenceMS is what the hidden part still costs: NCCL's kernels run on the
	// same SMs and memory as the backward pass (CommInterference of the hidden time).
	InterferenceMS float64
	// StragglerMS is the wait for the slowest worker at each step's all-reduce:
	// StepJitter × the step × sqrt(2 ln N), the expected maximum of N normally
	// distributed step times above their mean; over several nodes NodeStragglerMS adds
	// the wait for the slowest node, NetworkModel.NodeJitter × the step × sqrt(2 ln nodes).
	StragglerMS, NodeStragglerMS float64
}

// Total is what the parts add to the step.
func (s SyncParts) Total() float64 {
	return s.ExposedMS + s.InterferenceMS + s.StragglerMS + s.NodeStragglerMS
}

// Sync splits the cost of data parallelism over g GPUs per node × nodes for a one-GPU
// step of stepMS with backwardMS of backward kernels and gradBytes of gradients, the
// GPUs joined by gpu's interconnect and the nodes by net (nm says how well).
func Sync(o Overheads, nm NetworkModel, stepMS, backwardMS, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) SyncParts {
	return newSyncPlan(o, nm, gradBytes, g, nodes, gpu, net).parts(stepMS, backwardMS)
}

// syncPlan is what Sync works out once for a machine's GPUs, nodes and gradients, so
// that a curve's steps only scale it: the all-reduces' times and the stragglers' factors.
type syncPlan struct {
	none bool // one GPU: nothing to synchronise
	// total and last are the all-reduce of every gradient and of the last bucket.
	total, last float64
	// overlap, interference and jitter are the overheads' OverlapFraction,
	// CommInterference and StepJitter; nodeJitter the network's NodeJitter over
	// several nodes (0 on one).
	overlap, interference, jitter, nodeJitter float64
	// spread and nodeSpread are sqrt(2 ln N) of the GPUs and of the nodes.
	spread, nodeSpread float64
	nodes              bool // over several nodes
}

func newSyncPlan(o Overheads, nm NetworkModel, gradBytes float64, g, nodes int, gpu hw.GPU, net hw.Network) syncPlan {
	n := max(g, 1) * max(nodes, 1)
	if n <= 1 {
		return syncPlan{none: true}
	}
	intra := interconnectGBs(gpu) * o.allReduceEfficiency(gpu)
	netGBs := net.Gbps / 8 * nm.Efficiency
	lat := net.LatencyUS
	if !(lat > 0) {
		lat = nm.LatencyUS
	}
	all := func(bytes float64) float64 {
		return AllReduceMS(bytes, max(g, 1), max(nodes, 1), intra, o.AllReduceLatencyUS, netGBs, lat)
	}
	p := syncPlan{total: all(gradBytes), last: all(math.Min(gradBytes, o.BucketBytes)),
		overlap: o.OverlapFraction, interference: o.CommInterference, jitter: o.StepJitter,
		spread: math.Sqrt(2 * math.Log(float64(n)))}
	if nodes > 1 {
		p.nodes, p.nodeJitter, p.nodeSpread = true, nm.NodeJitter, math.Sqrt(2*math.Log(float64(nodes)))
	}
	return p
}

// parts is Sync's split for a one-GPU step of stepMS with backwardMS of backward kernels.
func (p syncPlan) parts(stepMS, backwardMS float64) SyncParts {
	if p.none {
		return SyncParts{}
	}
	hidden := math.Max(0, math.Min(p.total-p.last, p.overlap*backwardMS))
	s := SyncParts{AllReduceMS: p.total, ExposedMS: p.total - hidden, InterferenceMS: p.interference * hidden,
		StragglerMS: p.jitter * stepMS * p.spread}
	if p.nodes {
		s.NodeStragglerMS = p.nodeJitter * stepMS * p.nodeSpread
	}
	return s
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
	t := e.tableAt(req, []int{b})
	i := t.entry(b)
	return t.stepMS[i], t.backwardMS[i], nil
}

package predictor

import (
	"math"

	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/recipe"
)

// Source says where a predicted number comes from; see kernels.Source.
type Source = kernels.Source

// The sources, from most to least trusted.
const (
	Measured     = kernels.Measured
	Interpolated = kernels.Interpolated
	Transferred  = kernels.Transferred
	Estimated    = kernels.Estimated
)

// Point is the prediction for one CNN on one machine at one (global) batch size.
type Point struct {
	Batch      int     `json:"batch"`
	IterMS     float64 `json:"iter_ms"`
	ImagesPerS float64 `json:"images_per_s"`
	EpochS     float64 `json:"epoch_s"`
	TotalS     float64 `json:"total_s"`
	CostUSD    float64 `json:"cost_usd"`
	EnergyKWh  float64 `json:"energy_kwh"`
	MemoryGB   float64 `json:"memory_gb"` // per GPU
	Fits       bool    `json:"fits"`      // false: out of memory; the times are then not predicted (zero)
	Source     Source  `json:"source"`    // the least trusted source among the step's kernels
	ErrorPct   float64 `json:"error_pct"` // expected relative error of IterMS, ± percent
	// HostErrorPct is how far, ± percent, the host's assumed CPU can move IterMS (the
	// loader at the slow and the fast end of host.AssumedSlowSpeed–AssumedFastSpeed):
	// it is in ErrorPct, combined with the step's own error as independent errors; 0
	// when the host is known or the loader is far from setting the pace. HostSlowPct is
	// the slow end's part of it: how much longer the step is on the slowest host it may
	// be, what a ranking of machines charges an assumed host (RankTotalS).
	HostErrorPct float64 `json:"host_error_pct,omitempty"`
	HostSlowPct  float64 `json:"host_slow_pct,omitempty"`
	// Bound is what sets the step's pace: "gpu" (the GPU and the host work of the
	// training loop) or "input" (the data loader); "" where the batch does not fit.
	Bound string `json:"bound,omitempty"`
	// ScriptMS is the training script's own cost in IterMS (metrics, logging, .item()
	// reads; Curve.Script says which script): 0 for a tight loop.
	ScriptMS float64 `json:"script_ms"`
	// Epochs is how many epochs TotalS counts: the run's fixed epochs, or, training
	// to a target, the epochs the curve's recipe plan gives this batch, ±
	// EpochsErrorPct percent, in the optimizer regime Regime names (the recipe law's,
	// or "extrapolated" outside its evidence: the curve's Recipe says why).
	Epochs         float64 `json:"epochs,omitempty"`
	EpochsErrorPct float64 `json:"epochs_error_pct,omitempty"`
	Regime         string  `json:"regime,omitempty"`
}

// RunErrorPct is the expected relative error of the point's run time and cost, ±
// percent: the step's (ErrorPct) and, training to a target, the epochs' combined as
// independent errors, √(a² + b²); the step's alone for fixed epochs.
func (p Point) RunErrorPct() float64 {
	if p.EpochsErrorPct == 0 {
		return p.ErrorPct
	}
	return math.Hypot(p.ErrorPct, p.EpochsErrorPct)
}

// RankTotalS is the total time a ranking of machines uses: TotalS, at the slow end of
// an assumed host's range (HostSlowPct), so a machine whose CPU nobody named never
// outranks a known one on the strength of the reference core standing in for it.
func (p Point) RankTotalS() float64 { return p.TotalS * (1 + p.HostSlowPct/100) }

// Curve is one CNN×machine over a range of batch sizes.
type Curve struct {
	Model     string            `json:"model"`
	Machine   string            `json:"machine"`
	GPU       string            `json:"gpu"`
	GPUCount  int               `json:"gpu_count"`
	Precision measure.Precision `json:"precision"`
	Points    []Point           `json:"points"` // ascending batch size, infeasible ones included with Fits=false
	// Unavailable says why this model cannot be predicted on this machine with this
	// run (an input smaller than the model takes, a batch below the GPU count): the
	// curve then has no points, and the other curves of the query are predicted.
	Unavailable string `json:"unavailable,omitempty"`
	Best        int    `json:"best"`      // index in Points of the least total time among those that fit; -1 if none fits
	MaxBatch    int    `json:"max_batch"` // the largest batch that fits in memory; -1 when the GPU's memory is unknown
	// SweetSpots are batch sizes just below a jump in iteration time per image.
	SweetSpots []int `json:"sweet_spots"`
	// BestPow2 is the best power-of-two batch size and SavingVsPow2Pct how much less
	// total time the best batch takes than it.
	BestPow2        int     `json:"best_pow2"`
	SavingVsPow2Pct float64 `json:"saving_vs_pow2_pct"`
	// Recommended is the batch to advise, and NearMin–NearMax the range of batches
	// whose total time (and cost) is within NearBestPct of the best's: Best is often
	// one point of a flat plateau. Recommended is, in that range, the batch nearest
	// RecipeBatch (the batch the run's recipe was published with) whose per-GPU batch
	// is a multiple of 8 where one is in the range; without a recipe, the smallest such
	// batch, or a power of two where that is in the range too (see recommend); 0 when
	// nothing fits.
	Recommended int `json:"recommended"`
	NearMin     int `json:"near_best_min"`
	NearMax     int `json:"near_best_max"`
	// FastestBatch is the fastest batch LimitBest set aside (Best is then the best of
	// the batches it kept); 0 when Best is the fastest.
	FastestBatch int `json:"fastest_batch_set_aside,omitempty"`
	RecipeBatch  int `json:"recipe_batch,omitempty"`
	// PriceUSDPerHour is the machine's price used for the costs; CostKnown is false
	// when it has none (a bare GPU, an unpriced listing): costs are then unknown, not 0.
	PriceUSDPerHour float64 `json:"price_usd_per_hour"`
	CostKnown       bool    `json:"cost_known"`
	// Price says which price the costs use: on-demand or spot, the region, its date and
	// age (flagged when older than hw.StalePriceDays), or why there is none.
	Price hw.PriceBasis `json:"price"`
	// GPUSource is where the GPU's specifications come from (the catalog's citation).
	GPUSource string `json:"gpu_source,omitempty"`
	// TuningNote says, for an estimated GPU whose family no published run tunes (its
	// steps predicted from a neighbouring family's scales, with a band that covers the
	// held-out evidence), that there is no tuning measurement for its family; "" for
	// every other GPU, and for a GPU measured in the cache.
	TuningNote string `json:"tuning_note,omitempty"`
	// EnergyKnown is false when the GPU's power (TDP) is unknown: energy is then not given.
	EnergyKnown bool `json:"energy_known"`
	// Nodes is how many instances of the machine train together when more than one
	// (GPUCount is then the total and the price is the nodes' together), and Network
	// the network assumed between them; both absent for one machine.
	Nodes   int         `json:"nodes,omitempty"`
	Network *hw.Network `json:"network,omitempty"`
	// Input is the network's input size (pixels, height = width); Loader the input
	// pipeline, Workers its worker processes per GPU, LoaderImagesPerS its own rate
	// over all GPUs (absent for synthetic data), Format the activations' layout.
	Input            int             `json:"input"`
	Loader           pipeline.Loader `json:"loader"`
	Workers          int             `json:"workers,omitempty"`
	LoaderImagesPerS float64         `json:"loader_images_per_s,omitempty"`
	Format           MemoryFormat    `json:"memory_format,omitempty"`
	// Script is the training script around the step ("" or lean: a tight loop).
	Script Script `json:"script,omitempty"`
	// Framework is what runs the step: its per-tensor work is in IterMS.
	Framework Framework `json:"framework,omitempty"`
	// Software is the release of the kernel libraries the step is predicted for.
	Software Software `json:"software"`
	// Host is the machine's host that the loader's rate is scaled by: its CPU, family,
	// vCPUs and core speed, and what is assumed of it (nil: none given, as for a
	// measured CPU; CPUAssumed: the reference CPU stands in for an unknown one).
	Host *host.Host `json:"host,omitempty"`
	// Backend says, for a measured CPU, whose measurements answered: "pytorch"
	// (scripts/pytorch_sweep.py) or "cnntime-cpu" (cnntime's Go CPU backend); empty for a GPU.
	Backend string `json:"backend,omitempty"`
	// EpochsSource says where the points' epochs come from: "fixed" (the run's
	// epochs) or the recipe's ID ("torchvision-v1/resnet50", "custom"); Recipe is
	// the recipe's plan when training to a target (its recipe, target accuracy and
	// law), and then Best is the batch with the least time, and cost, to the target.
	EpochsSource string       `json:"epochs_source,omitempty"`
	Recipe       *recipe.Plan `json:"recipe,omitempty"`
	// Images is the training images of an epoch: an epoch is ceil(Images/batch) steps.
	Images int `json:"images,omitempty"`
	// Policy is cuDNN's algorithm choice the step assumes; Dataset the dataset the run
	// trains on (a preset's name; "" when none was named), which the caller sets.
	Policy  measure.Policy `json:"policy,omitempty"`
	Dataset string         `json:"dataset,omitempty"`
	// Anchors is the measured whole steps the curve passes through (Request.Anchors),
	// one per per-GPU batch, each with the step predicted there before (PredictedMS):
	// its points at those batches are Measured, the others Anchored. Nil when none.
	Anchors []MeasuredStep `json:"anchors,omitempty"`
}

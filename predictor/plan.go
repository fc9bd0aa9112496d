package predictor

import (
	"math"
	"math/bits"
	"slices"

	"cnntime/predictor/recipe"
)

// Run is the training run being planned: how many passes over how many images.
type Run struct {
	Epochs int
	Images int // training images per epoch
	// ToTarget, when set, replaces Epochs: the run trains to a target accuracy, each
	// batch size for the epochs its recipe's plan gives it (time to target); nil trains
	// every batch for Epochs.
	ToTarget *recipe.Plan
}

// EpochsSource says where a run's epochs come from: "fixed", or the recipe's ID
// ("torchvision-v1/resnet50", "custom" for a user's own figures).
func (r Run) EpochsSource() string {
	if r.ToTarget != nil {
		return r.ToTarget.Recipe.ID()
	}
	return "fixed"
}

// ImageNetImages is the number of images in ImageNet-1k's training set, the usual
// dataset the published figures train on.
const ImageNetImages = 1281167

// epochSeconds is the time of one epoch at global batch B: ceil(images/B) steps, all
// at batch B, which take stepB ms each, except the last, which runs at its own, smaller
// batch. stepMS(b) is the step time at global batch b.
func epochSeconds(stepB float64, stepMS func(b int) float64, images, B int) float64 {
	full := images / B
	last := images - full*B
	ms := float64(full) * stepB
	if last > 0 {
		ms += stepMS(last)
	}
	return ms / 1000
}

// fillSchedule sets each point's per-epoch and total time, cost and energy from its
// step time (its IterMS; stepMS(b) gives it at other global batches b, such as an
// epoch's last): the total is the epochs (run.Epochs, or the epochs to the target at
// the point's batch) times the epoch, ceil(images/B) steps. pricePerHour ≤ 0 means the
// price is unknown: cost stays zero and the curve says so. wattsAt(b, stepMS) is the
// machine's average power draw at global batch b, whose step takes stepMS.
func fillSchedule(c *Curve, run Run, pricePerHour float64, stepMS func(b int) float64, wattsAt func(b int, stepMS float64) float64) {
	c.Images = run.Images
	for i := range c.Points {
		p := &c.Points[i]
		if !p.Fits {
			continue
		}
		p.ImagesPerS = float64(p.Batch) / (p.IterMS / 1000)
		p.EpochS = epochSeconds(p.IterMS, stepMS, run.Images, p.Batch)
		p.Epochs = float64(run.Epochs)
		if m := run.ToTarget; m != nil {
			e := m.At(p.Batch)
			p.Epochs, p.EpochsErrorPct, p.Regime = e.Epochs, e.ErrorPct, e.Regime
		}
		p.TotalS = p.EpochS * p.Epochs
		hours := p.TotalS / 3600
		if pricePerHour > 0 {
			p.CostUSD = hours * pricePerHour
		}
		p.EnergyKWh = hours * wattsAt(p.Batch, p.IterMS) / 1000
	}
}

// summarise finds the curve's best batch (least total time among the points that
// fit), its sweet spots and its best power of two.
func summarise(c *Curve, maxSweetSpots int, jumpPct float64) {
	c.SweetSpots = sweetSpots(c.Points, maxSweetSpots, jumpPct)
	best(c, nil)
}

// LimitBest makes the curve's best batch, best power of two and recommended batch with
// its range the best among the points keep accepts (the others stay on the curve), and
// records in FastestBatch the fastest batch it sets aside; it reports whether the best
// or its recommendation and range changed (nothing changes when keep accepts no point
// that fits). A fixed-epoch run limits them to batches of enough steps an epoch.
func (c *Curve) LimitBest(keep func(Point) bool) bool {
	if c.Best < 0 || !slices.ContainsFunc(c.Points, func(p Point) bool { return p.Fits && keep(p) }) {
		return false // nothing else to offer: the fastest stays, with its warnings
	}
	before := [4]int{c.Best, c.Recommended, c.NearMin, c.NearMax}
	if keep(c.Points[c.Best]) {
		recommend(c, keep) // the best stays; the range within 1% of it keeps to what keep accepts
	} else {
		fastest := c.Points[c.Best].Batch
		best(c, keep)
		c.FastestBatch = fastest
	}
	return before != [4]int{c.Best, c.Recommended, c.NearMin, c.NearMax}
}

// best sets the curve's best batch (least total time among the points that fit and
// keep accepts; nil accepts all), its best power of two and its recommendation.
func best(c *Curve, keep func(Point) bool) {
	c.Best, c.BestPow2, c.SavingVsPow2Pct = -1, 0, 0
	bestPow2 := -1
	for i, p := range c.Points {
		if !p.Fits || (keep != nil && !keep(p)) {
			continue
		}
		if c.Best < 0 || p.TotalS < c.Points[c.Best].TotalS {
			c.Best = i
		}
		if bits.OnesCount(uint(p.Batch)) == 1 && (bestPow2 < 0 || p.TotalS < c.Points[bestPow2].TotalS) {
			bestPow2 = i
		}
	}
	if bestPow2 >= 0 {
		c.BestPow2 = c.Points[bestPow2].Batch
		if t := c.Points[bestPow2].TotalS; t > 0 {
			c.SavingVsPow2Pct = 100 * (t - c.Points[c.Best].TotalS) / t
		}
	}
	recommend(c, keep)
}

// NearBestPct is how close to the best batch's total time (and so its cost: on one
// machine the cost is hours × price) a batch counts as as good: the recommended batch
// and the range of batches within it (Curve.Recommended, Curve.NearMin–NearMax).
const NearBestPct = 1.0

// recommend sets the curve's advice besides its single best batch, which is often one
// arbitrary point of a flat plateau: the range of batches whose total time is within
// NearBestPct of the best's, and in it the batch to recommend. With a recipe
// (RecipeBatch), the batch in the range nearest the recipe's own (by ratio, the larger
// on a tie) among those whose per-GPU batch is a multiple of 8 (what tensor cores and
// memory like), or among all of the range when none is: on a plateau the batch the
// recipe was tuned at, or the nearest that fits and costs no more than 1%. Without
// one, the smallest per-GPU multiple of 8, or the smallest power of two above that
// where it is within the range too; the smallest batch in the range when none is a
// multiple of 8. Nothing is set when nothing fits.
func recommend(c *Curve, keep func(Point) bool) {
	c.Recommended, c.NearMin, c.NearMax = 0, 0, 0
	if c.Best < 0 {
		return
	}
	limit := c.Points[c.Best].TotalS * (1 + NearBestPct/100)
	gpus := max(c.GPUCount, 1)
	aligned, pow2 := 0, 0 // the smallest per-GPU multiple of 8, and power of two at least that
	for _, p := range c.Points {
		if !p.Fits || !(p.TotalS <= limit) || (keep != nil && !keep(p)) {
			continue
		}
		if c.NearMin == 0 {
			c.NearMin = p.Batch
		}
		c.NearMax = p.Batch
		per := p.Batch / gpus
		if p.Batch%gpus != 0 || per%8 != 0 {
			continue
		}
		if aligned == 0 {
			aligned = p.Batch
		}
		if pow2 == 0 && bits.OnesCount(uint(per)) == 1 {
			pow2 = p.Batch
		}
	}
	switch {
	case c.RecipeBatch > 0:
		c.Recommended = nearestNear(c, limit, aligned > 0, keep)
	case pow2 > 0:
		c.Recommended = pow2
	case aligned > 0:
		c.Recommended = aligned
	default:
		c.Recommended = c.NearMin
	}
}

// nearestNear is the batch within limit's total time nearest c.RecipeBatch by ratio
// (the larger on a tie), among the per-GPU multiples of 8 when aligned.
func nearestNear(c *Curve, limit float64, aligned bool, keep func(Point) bool) int {
	gpus := max(c.GPUCount, 1)
	best, bestDist := 0, math.Inf(1)
	for _, p := range c.Points {
		if !p.Fits || !(p.TotalS <= limit) || (keep != nil && !keep(p)) {
			continue
		}
		if aligned && (p.Batch%gpus != 0 || (p.Batch/gpus)%8 != 0) {
			continue
		}
		if d := math.Abs(math.Log(float64(p.Batch) / float64(c.RecipeBatch))); d <= bestDist {
			best, bestDist = p.Batch, d
		}
	}
	return best
}

// sweetSpots returns up to max batch sizes just below a jump: a point whose time per
// image is at least jumpPct percent lower than the next larger batch's, among the
// points that fit and are neighbours in the curve. The deepest jumps come first.
func sweetSpots(points []Point, max int, jumpPct float64) []int {
	type jump struct {
		batch int
		pct   float64
	}
	var jumps []jump
	for i := 0; i+1 < len(points); i++ {
		a, b := points[i], points[i+1]
		if !a.Fits || !b.Fits || a.IterMS <= 0 || b.IterMS <= 0 {
			continue
		}
		perA, perB := a.IterMS/float64(a.Batch), b.IterMS/float64(b.Batch)
		if pct := 100 * (perB - perA) / perA; pct >= jumpPct {
			jumps = append(jumps, jump{a.Batch, pct})
		}
	}
	// Keep the deepest; a short insertion sort, the list is small.
	for i := 1; i < len(jumps); i++ {
		for j := i; j > 0 && jumps[j].pct > jumps[j-1].pct; j-- {
			jumps[j], jumps[j-1] = jumps[j-1], jumps[j]
		}
	}
	if len(jumps) > max {
		jumps = jumps[:max]
	}
	out := make([]int, len(jumps))
	for i, j := range jumps {
		out[i] = j.batch
	}
	// Report them in batch order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// perGPUBatch is the batch each of n data-parallel GPUs runs for global batch B: the
// largest share, ceil(B/n); the step waits for the GPU that has it.
func perGPUBatch(B, n int) int { return (B + n - 1) / n }

// ringAllReduceMS is the time of a ring all-reduce of bytes over n GPUs whose links
// move gbps GB/s per direction: 2(n−1)/n of the data crosses each link, plus a
// latency of latencyUS per ring step (2(n−1) steps).
func ringAllReduceMS(bytes float64, n int, gbps, latencyUS float64) float64 {
	if n <= 1 || bytes <= 0 {
		return 0
	}
	if gbps <= 0 {
		return math.Inf(1)
	}
	steps := 2 * float64(n-1)
	return steps/float64(n)*bytes/(gbps*1e9)*1000 + steps*latencyUS/1000
}

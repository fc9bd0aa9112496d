package kernels

import (
	"math"
	"sort"
	"strings"
	"sync"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// Device is the GPU a prediction is for.
type Device struct {
	GPU hw.GPU
	Key string // the measured device's key in the cache; "" when it has never been measured
}

// Request is one phase of one layer configuration in one kernel precision.
type Request struct {
	Config    cnn.Config
	Phase     measure.Phase
	Precision measure.Precision // a kernel precision: fp32, tf32 or amp
	Policy    measure.Policy    // the cuDNN algorithm policy measurements must match
	// FusedElems, when positive, asks for a fused memory-bound kernel that a software
	// stack runs in place of several layers' own (batch norm, activation and add in one
	// pass): it reads and writes FusedElems tensor elements per sample. Config is then
	// only its first layer's, for the error band's family and arithmetic; no
	// measurement serves it, so it is always Estimated.
	FusedElems float64
	// NCHWNorm says the layer is a batch norm that runs cuDNN's NCHW kernels (an NCHW
	// network under amp in an eager stack): an estimate from specifications streams at
	// most Calibration.NCHWNormBytesPerSMCycle per SM, on as many SMs as the channels
	// fill (one block per channel, nchwNormRate). Measured, interpolated and
	// transferred times were measured in the network's layout, so it leaves them alone.
	NCHWNorm bool
	// LibraryMonth is when the kernel libraries that run it were released
	// (predictor.Software): an estimate's compute efficiency is the calibration's times
	// Calibration.Maturity of the GPU at that month. 0 takes the libraries as mature.
	// Measured and interpolated times ran on the libraries they ran on.
	LibraryMonth hw.Month
}

// Estimate is one predicted kernel time.
type Estimate struct {
	MS     float64 // milliseconds; 0 where the phase runs no kernel
	Source Source
	RelErr float64 // expected relative error, a fraction (0.1 = ±10%)
}

// Error bands of measured and interpolated times.
const (
	measuredMinRelErr  = 0.02 // a measurement's repeatability floor
	interpRelErr       = 0.03 // between two measured batch sizes
	extrapRelErrPerOct = 0.08 // added per octave beyond the measured range
	otherPolicyRelErr  = 0.05 // measured under the other algorithm policy
	// otherHalfRelErr widens a BF16 kernel's band where only its FP16 (amp) twin was
	// measured: the same tensor cores at the same rate, other kernels' tile choices.
	otherHalfRelErr     = 0.05
	maxMeasuredRelErrIn = 0.5
)

type seriesKey struct {
	config    string
	phase     measure.Phase
	precision measure.Precision
	policy    measure.Policy
}

// series is one device's measured times of one seriesKey, ascending in batch size.
type series struct {
	device  string
	batches []int
	ms      []float64
	relErr  []float64
}

// Model predicts kernel times from measurements where it has them and from the
// calibrated roofline where it does not. It is immutable once built and safe for
// concurrent use.
type Model struct {
	cal    *Calibration
	gpus   map[string]hw.GPU // measured CUDA device key → its specifications, for transfer
	series map[seriesKey][]*series
}

// NewModel builds a model from a calibration (see ParseCalibration), the GPU catalog
// (to find a measured device's specifications by its GPUID), the measured devices and
// their measurements. Measurements that are not OK (out of memory, unsupported) or
// invalid are ignored; of repeated measurements of the same point the latest counts.
// CPU devices' measurements serve only the CPU itself: they are never transferred to a GPU.
func NewModel(cal *Calibration, catalog []hw.GPU, devices []measure.Device, ms []measure.Measurement) *Model {
	if cal == nil || !cal.checked {
		cal = PriorCalibration()
	}
	m := &Model{cal: cal, gpus: map[string]hw.GPU{}, series: map[seriesKey][]*series{}}
	byID := make(map[string]hw.GPU, len(catalog))
	for _, g := range catalog {
		byID[g.ID] = g
	}
	for _, d := range devices {
		if d.Backend != "cuda" {
			continue
		}
		if g, ok := byID[d.GPUID]; ok {
			m.gpus[d.Key] = g
			continue
		}
		m.gpus[d.Key] = hw.GPU{ID: d.GPUID, Name: d.Name, ComputeCapability: d.ComputeCapability, SMs: d.SMs, BoostClockMHz: float64(d.ClockMHz)}
	}

	type point struct {
		ms, relErr float64
		at         int64
	}
	type devKey struct {
		seriesKey
		device string
	}
	points := map[devKey]map[int]point{}
	for _, x := range ms {
		if x.Status != measure.OK || x.Validate() != nil {
			continue
		}
		k := devKey{seriesKey{x.ConfigKey, x.Phase, x.Precision, x.Policy}, x.DeviceKey}
		if points[k] == nil {
			points[k] = map[int]point{}
		}
		if old, ok := points[k][x.Batch]; ok && old.at > x.At.UnixNano() {
			continue
		}
		rel := measuredMinRelErr
		if x.SpreadMS > 0 {
			rel = math.Min(math.Max(x.SpreadMS/x.MedianMS, measuredMinRelErr), maxMeasuredRelErrIn)
		}
		points[k][x.Batch] = point{x.MedianMS, rel, x.At.UnixNano()}
	}
	for k, pts := range points {
		s := &series{device: k.device}
		for b := range pts {
			s.batches = append(s.batches, b)
		}
		sort.Ints(s.batches)
		for _, b := range s.batches {
			s.ms = append(s.ms, pts[b].ms)
			s.relErr = append(s.relErr, pts[b].relErr)
		}
		m.series[k.seriesKey] = append(m.series[k.seriesKey], s)
	}
	for _, list := range m.series {
		sort.Slice(list, func(i, j int) bool { return list[i].device < list[j].device })
	}
	return m
}

// Calibration returns the calibration the model uses.
func (m *Model) Calibration() *Calibration { return m.cal }

// UntunedFamily says that g's family has no tuning measurement, where so (see
// Calibration.UntunedNote), and the least band of a step estimated on it
// (Calibration.UntunedBand); "" and 0 otherwise.
func (m *Model) UntunedFamily(g hw.GPU) (note string, band float64) {
	return m.cal.UntunedNote(g), m.cal.UntunedBand(hw.FamilyOf(g))
}

// Timings are one layer phase's predicted times at many batch sizes: the fields of an
// Estimate per batch, each in an array of its own (Rank holds the Source's Rank), so
// that a caller summing them reads only what it sums and keeps no pointers. Each
// array is at least as long as the batch sizes.
type Timings struct {
	MS, RelErr []float64
	Rank       []uint8
}

// Times fills out[i] with the predicted time of request r on dev at batch size
// batches[i]; out must be at least as long as batches. One call serves one layer
// configuration × phase over all batch sizes: the per-configuration work (the
// configuration's key, the measurement lookup, the device's rates) is done once, and
// each batch size then costs tens of nanoseconds. TimesInto writes the same
// estimates into arrays of their own.
//
// Sources, most trusted first: a measurement on dev at that batch size (Measured);
// dev's measurements at other batch sizes, linear between neighbours and scaled by the
// roofline's shape beyond the measured range (Interpolated); another GPU's
// measurements scaled by the ratio of the two GPUs' roofline times, which weighs the
// bandwidth and compute ratios by how memory- or compute-bound the kernel is and
// counts each GPU's waves (Transferred); the roofline alone (Estimated). Phases that
// run no kernel (the weight gradient of a layer without weights) and batch sizes ≤ 0
// get 0 ms, Estimated, unless dev itself measured that phase: a measurement wins over
// the cost model's idea of which kernels run.
func (m *Model) Times(dev Device, r Request, batches []int, out []Estimate) {
	t := timingsPool.Get().(*Timings)
	if n := len(batches); cap(t.MS) < n {
		t.MS, t.RelErr, t.Rank = make([]float64, n), make([]float64, n), make([]uint8, n)
	}
	m.TimesInto(dev, r, batches, *t)
	for i := range batches {
		out[i] = Estimate{MS: t.MS[i], Source: RankedSource(t.Rank[i]), RelErr: t.RelErr[i]}
	}
	timingsPool.Put(t)
}

// timingsPool holds Times' arrays between calls.
var timingsPool = sync.Pool{New: func() any { return new(Timings) }}

// TimesInto is Times writing into out's arrays: out.MS[i], out.RelErr[i] and
// out.Rank[i] are the estimate at batches[i].
func (m *Model) TimesInto(dev Device, r Request, batches []int, out Timings) {
	p := m.Prepare(dev, r)
	p.TimesInto(batches, out)
}

// Prepared is one request on one device as Model.TimesInto times it, with everything
// that does not depend on the batch size worked out once: the roofline estimators and
// the measured series it reads. A step's plan times each of its kernels over one
// block of batch sizes after another, and pays for that work once per kernel.
type Prepared struct {
	mode prepMode
	// est is the request's roofline on dev (in prepEstimated, with an NCHW batch
	// norm's rate); srcEst the source GPU's, whose series a transfer scales.
	est, srcEst estimator
	own, src    *series // dev's own measured series, or another GPU's to transfer
	widen       float64 // the error widening of a series of another policy or precision
	transferErr float64 // Calibration.TransferRelErr
}

// prepMode is which of TimesInto's sources a Prepared answers from.
type prepMode uint8

const (
	prepNone      prepMode = iota // the cost model runs no kernel and nothing is measured: 0 ms
	prepStream                    // a fused memory-bound kernel (Request.FusedElems)
	prepEstimated                 // the roofline alone
	prepSeries                    // a measured series: dev's own or another GPU's
)

// Prepare works out r on dev for TimesInto over any batch sizes (Prepared).
func (m *Model) Prepare(dev Device, r Request) Prepared {
	if r.FusedElems > 0 {
		return Prepared{mode: prepStream, est: newStreamEstimator(m.cal, r.FusedElems, dev.GPU, r.Precision)}
	}
	p := Prepared{est: newEstimator(m.cal, r.Config, r.Phase, dev.GPU, r.Precision, r.LibraryMonth)}
	p.own, p.src, p.widen = m.lookup(dev, r)
	switch {
	case p.est.cost.none && p.own == nil:
		// The cost model says no kernel runs (cuDNN fuses batch norm's weight gradient
		// into its data gradient); a device that measured one (the CPU backend runs it
		// separately) is answered from its own measurements.
		p.mode = prepNone
	case p.own == nil && p.src == nil:
		p.mode = prepEstimated
		if r.NCHWNorm {
			p.est.memRate = nchwNormRate(m.cal, dev.GPU, p.est, r.Config.In.C)
		}
	default:
		p.mode = prepSeries
		p.transferErr = m.cal.TransferRelErr
		if p.src != nil {
			p.srcEst = newEstimator(m.cal, r.Config, r.Phase, m.gpus[p.src.device], r.Precision, r.LibraryMonth)
		}
	}
	return p
}

// TimesInto sets out.MS[i], out.RelErr[i] and out.Rank[i] to the prepared request's
// estimate at batches[i], as Model.TimesInto does.
func (p *Prepared) TimesInto(batches []int, out Timings) {
	ms, relErr, rank := out.MS[:len(batches)], out.RelErr[:len(batches)], out.Rank[:len(batches)]
	switch p.mode {
	case prepNone:
		fill(ms, 0)
		fill(relErr, 0)
		fill(rank, Estimated.Rank())
	case prepStream:
		p.est.atEach(batches, ms)
		fill(relErr, p.est.relErr)
		fill(rank, Estimated.Rank())
	case prepEstimated:
		p.est.atEach(batches, ms)
		fill(rank, Estimated.Rank())
		for i, b := range batches {
			relErr[i] = p.est.relErr
			if b <= 0 {
				relErr[i] = 1 // no batch, no time
			}
		}
	default:
		p.seriesInto(batches, ms, relErr, rank)
	}
}

// seriesInto is TimesInto from a measured series: dev's own, or another GPU's scaled
// by the ratio of the two GPUs' roofline times.
func (p *Prepared) seriesInto(batches []int, ms, relErr []float64, rank []uint8) {
	for i, b := range batches {
		var e Estimate
		switch {
		case b <= 0:
			e = Estimate{Source: Estimated, RelErr: 1} // no batch, no time
		case p.own != nil:
			e = p.own.at(b, &p.est)
			e.RelErr += p.widen
		default:
			t := p.src.at(b, &p.srcEst)
			scale := 1.0
			if s := p.srcEst.at(b); s > 0 {
				scale = p.est.at(b) / s
			}
			e = Estimate{MS: t.MS * scale, Source: Transferred, RelErr: t.RelErr + p.widen + p.transferErr + p.est.rates.extraRelErr}
		}
		ms[i], relErr[i], rank[i] = e.MS, e.RelErr, e.Source.Rank()
	}
}

// fill sets every element of s to v.
func fill[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// lookup finds dev's own measured series for r, or else the best other GPU's series
// to transfer from, and the error widening for a policy mismatch. A BF16 kernel that no
// device measured in BF16 takes its FP16 (amp) twin's series, its band widened by
// otherHalfRelErr.
func (m *Model) lookup(dev Device, r Request) (own, src *series, widen float64) {
	if len(m.series) == 0 {
		return nil, nil, 0
	}
	own, src, widen = m.lookupIn(dev, r, r.Precision)
	if own == nil && src == nil && r.Precision == measure.BF16 {
		own, src, widen = m.lookupIn(dev, r, measure.AMP)
		if own != nil || src != nil {
			widen += otherHalfRelErr
		}
	}
	return own, src, widen
}

// lookupIn is lookup among the series measured in precision p.
func (m *Model) lookupIn(dev Device, r Request, p measure.Precision) (own, src *series, widen float64) {
	key := seriesKey{r.Config.Key(), r.Phase, p, r.Policy}
	policies := [...]measure.Policy{r.Policy, measure.Heuristic, measure.Fastest, measure.NoPolicy}
	for i, p := range policies {
		if i > 0 && p == r.Policy {
			continue
		}
		key.policy = p
		list := m.series[key]
		if len(list) == 0 {
			continue
		}
		if i > 0 {
			widen = otherPolicyRelErr
		}
		if dev.Key != "" {
			for _, s := range list {
				if s.device == dev.Key {
					return s, nil, widen
				}
			}
		}
		if s := m.bestSource(dev.GPU, list); s != nil {
			return nil, s, widen
		}
	}
	return nil, nil, 0
}

// bestSource picks the measured GPU most like g: the same architecture first, then
// the same compute capability major version, then cnntime's worker's rows before
// PyTorch's (scripts/pytorch_sweep.py --layers, "cuda:…:pytorch": a small layer's time
// there holds Python's issue rate, which the step model adds as host time, so they
// serve only where the worker measured nothing, as they do for the GPU itself), then
// the series with most batch sizes.
func (m *Model) bestSource(g hw.GPU, list []*series) *series {
	var best *series
	bestScore := -1
	arch := archFamily(g.Architecture)
	major := hw.ParseComputeCapability(g.ComputeCapability) / 10
	for _, s := range list {
		sg, ok := m.gpus[s.device]
		if !ok {
			continue // a CPU or an unknown device
		}
		score := 0
		if arch != "" && archFamily(sg.Architecture) == arch {
			score += 2
		}
		if major > 0 && hw.ParseComputeCapability(sg.ComputeCapability)/10 == major {
			score++
		}
		score *= 2
		if !measure.MeasuredByPyTorch(s.device) {
			score++
		}
		score = score*1_000_000 + len(s.batches)
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// archFamily is the first word of an architecture name: "Ampere (GA102)" → "ampere".
func archFamily(a string) string {
	f, _, _ := strings.Cut(strings.TrimSpace(a), " ")
	return strings.ToLower(f)
}

// at returns the series' time at batch size b: the measurement itself, linear
// interpolation between the neighbouring measured batch sizes, or beyond the measured
// range the nearest measurement scaled by the roofline estimator's shape e.
func (s *series) at(b int, e *estimator) Estimate {
	i := sort.SearchInts(s.batches, b)
	switch {
	case i < len(s.batches) && s.batches[i] == b:
		return Estimate{MS: s.ms[i], Source: Measured, RelErr: s.relErr[i]}
	case i > 0 && i < len(s.batches):
		lo, hi := s.batches[i-1], s.batches[i]
		f := float64(b-lo) / float64(hi-lo)
		ms := s.ms[i-1] + f*(s.ms[i]-s.ms[i-1])
		return Estimate{MS: ms, Source: Interpolated, RelErr: interpRelErr + math.Max(s.relErr[i-1], s.relErr[i])}
	}
	j := len(s.batches) - 1
	if i == 0 {
		j = 0
	}
	ms := s.ms[j]
	if ref := e.at(s.batches[j]); ref > 0 {
		ms *= e.at(b) / ref
	}
	octaves := math.Abs(math.Log2(float64(b) / float64(s.batches[j])))
	return Estimate{MS: ms, Source: Interpolated, RelErr: s.relErr[j] + interpRelErr + extrapRelErrPerOct*octaves}
}

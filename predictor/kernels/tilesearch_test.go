package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// everyTileSeconds is tiledSeconds as it tried every tile shape before the search
// stopped at a floor: the reference the faster search must equal. A Winograd
// convolution tries every tile of both of its algorithms.
func (e *estimator) everyTileSeconds(m, k float64) float64 {
	best := e.everyTileOf(m, k, max(e.rowsPerTileRow, 1), 1)
	if e.rowsPerTileRow > 1 && e.directSlowdown > 0 {
		best = min(best, e.everyTileOf(m, k, 1, e.directSlowdown))
	}
	return best
}

// everyTileOf is the best time over every tile shape of tile rows covering w GEMM
// rows, each tile slow times as long as a plain GEMM's.
func (e *estimator) everyTileOf(m, k, w, slow float64) float64 {
	best := math.Inf(1)
	for _, p := range e.plans[:e.nPlans] {
		tiles := ceil(m/w*p.invM) * p.colTiles
		kPer := k
		reduce := 0.0
		if w == 1 && tiles < e.rates.sms {
			split := min(float64(int64(e.rates.sms/tiles)), ceil(k*(1.0/minSplitK)), e.splitKMax)
			if split > 1 {
				reduce = split * m * p.outCols * splitKReduceBytes / e.memRate
				tiles *= split
				kPer = ceil(k / split)
			}
		}
		waves := tiles * e.invSMs
		if e.rates.quantize {
			waves = ceil(waves)
		}
		if s := waves*kPer*p.secPerKRow*(w*slow) + reduce; s < best {
			best = s
		}
	}
	return best
}

// TestTileSearchStopsWithoutChangingTheTime: the tile search that stops at a tile whose
// floor cannot beat the best time, or once a tile is under the memory time, gives a
// kernel time bit for bit equal to trying every tile shape, for every convolution and
// linear layer of a network of each family, each phase, on GPUs with and without
// tensor cores and with an unknown SM count, in every arithmetic, under cuDNN 7's and
// modern split-K, at batch sizes from 1 to 4096.
func TestTileSearchStopsWithoutChangingTheTime(t *testing.T) {
	noSMs := hw.GPU{ID: "no-sms", Architecture: "Ampere", ComputeCapability: "8.6", FP32TFLOPS: 35, TF32TFLOPS: 70, FP16TFLOPS: 140, MemoryBandwidthGBs: 900}
	gpus := []hw.GPU{v100, a100, p100, t4, h100, noSMs}
	legacy, modern := PriorCalibration(), PriorCalibration()
	modern.SplitKMax = ModernSplitK
	if err := modern.Validate(); err != nil {
		t.Fatal(err)
	}
	var batches []int
	for b := 1; b <= 4096; b += 1 + b/16 {
		batches = append(batches, b)
	}
	seen := map[string]bool{}
	var configs []cnn.Config
	for _, family := range cnn.Families() {
		var name string
		for _, n := range cnn.Names() {
			if cnn.Family(n) == family {
				name = n
				break
			}
		}
		net, err := cnn.Build(name, cnn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range net.Layers {
			if c := l.Config; (c.Op == cnn.OpConv2d || c.Op == cnn.OpLinear) && !seen[c.Key()] {
				seen[c.Key()] = true
				configs = append(configs, c)
			}
		}
	}
	tried, stopped := 0, 0
	for _, cal := range []*Calibration{legacy, modern} {
		for _, g := range gpus {
			for _, p := range []measure.Precision{measure.FP32, measure.TF32, measure.AMP} {
				for _, c := range configs {
					for _, phase := range []measure.Phase{measure.Forward, measure.BackwardData, measure.BackwardWeights} {
						e := newEstimator(cal, c, phase, g, p, 0)
						if !e.cost.hasGEMM || !e.tiled {
							continue
						}
						for _, b := range batches {
							fn := float64(b)
							m := float64(e.cost.gemm.m0) + float64(e.cost.gemm.mPerSample)*fn
							k := float64(e.cost.gemm.k0) + float64(e.cost.gemm.kPerSample)*fn
							want := e.everyTileSeconds(m, k)
							got := e.tiledSeconds(m, k, 0)
							tried++
							if got != want {
								t.Fatalf("%s %s on %s in %s at batch %d: %v s, every tile gives %v s", c.Key(), phase, g.ID, p, b, got, want)
							}
							// Under a memory time the search may stop early; the kernel's time may not move.
							for _, memS := range []float64{want / 2, want, want * 1.5} {
								if got := e.tiledSeconds(m, k, memS); max(got, memS) != max(want, memS) {
									t.Fatalf("%s %s on %s at batch %d with memory time %v: kernel time %v, every tile gives %v",
										c.Key(), phase, g.ID, b, memS, max(got, memS), max(want, memS))
								}
							}
							if e.nPlans > 1 && m*k*e.plans[1].floorPerMK > want*floorMargin {
								stopped++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d GEMMs, %d stopped after the first tile", tried, stopped)
	// The search must actually stop early somewhere, or it saves nothing.
	if tried == 0 || stopped < tried/4 {
		t.Errorf("the search stopped after the first tile at %d of %d GEMMs; want at least a quarter", stopped, tried)
	}
}

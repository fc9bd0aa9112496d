package cudakern_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"cnntime/gpu/convalgo"
	"cnntime/gpu/cudakern"
	"cnntime/gpu/timing"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// h200Row is one layer phase of the first real run's report (an H200,
// app/firstrun/testdata/h200-first-run.json): the worker's and PyTorch's times, and how
// the worker timed it.
type h200Row struct {
	Config    string  `json:"config"`
	Op        string  `json:"op"`
	Phase     string  `json:"phase"`
	Batch     int     `json:"batch"`
	Precision string  `json:"precision"`
	WorkerMS  float64 `json:"worker_ms"`
	PyTorchMS float64 `json:"pytorch_ms"`
	Notes     string  `json:"notes"`
}

func h200Rows(t *testing.T) []h200Row {
	t.Helper()
	raw, err := os.ReadFile("../../app/firstrun/testdata/h200-first-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Layers []h200Row `json:"layers"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Layers
}

// h200L2 is the L2 the H200 reported: 60 MiB, which the run's own notes bracket (below).
const h200L2 = 60 << 20

// TestH200RowsThatFitTheirPhaseAreFlushed is built from the first real run. It decided
// the flush on everything a layer allocates: its own-kernel rows noted l2-flushed all
// hold at most 55.1 MiB and the others at least 61.25 MiB, which brackets the H200's
// 60 MiB L2. So a phase that touches far less than the L2 ran warm when its layer held
// more, as fp32 ReLU6 at 1280×7×7, batch 64, did: its forward touches 32.1 MB and ran at
// 4.29 TB/s, 1.4× the kernel's sustained rate, between flushed neighbours at 1.9 and 2.8
// TB/s. The decision now rests on the bytes the phase touches: that row and 100 more of
// the report are timed after a flush.
func TestH200RowsThatFitTheirPhaseAreFlushed(t *testing.T) {
	maxFlushed, minWarm := int64(0), int64(1)<<62
	changed, relu6 := 0, false
	for _, r := range h200Rows(t) {
		c, err := cnn.ParseKey(r.Config)
		if err != nil {
			t.Fatalf("%s: %v", r.Config, err)
		}
		half := r.Precision == string(measure.AMP)
		elem := int64(4)
		if half {
			elem = 2
		}
		flushed := strings.Contains(r.Notes, timing.NoteL2Flushed)
		phase := measure.Phase(r.Phase)
		var phaseBytes int64
		switch {
		case c.Op == cnn.OpConv2d:
			phaseBytes = convalgo.ConvPhaseBytes(c, r.Batch, phase, elem, 0)
		default:
			p, err := cudakern.Build(c, r.Batch, 132)
			if err != nil {
				continue // cuDNN's batch norm, cuBLAS's linear layers
			}
			phaseBytes = p.PhaseBytes(phase, half)
			if foot := p.Footprint(half); flushed {
				maxFlushed = max(maxFlushed, foot)
			} else {
				minWarm = min(minWarm, foot)
			}
		}
		d := timing.DecideL2(phaseBytes, h200L2, timing.L2Cold, true, true)
		if !flushed && d.Flush {
			changed++
			if r.Config == "relu6:in=1280x7x7,out=1280x7x7" && r.Batch == 64 && r.Precision == "fp32" && phase == measure.Forward {
				relu6 = true
				if phaseBytes != 32112640 {
					t.Errorf("ReLU6's forward touches %d bytes, want 32,112,640 (x and y)", phaseBytes)
				}
			}
		}
		if flushed && !d.Flush {
			t.Errorf("%s %s at batch %d was flushed, and would now run warm touching %d bytes", r.Config, r.Phase, r.Batch, phaseBytes)
		}
	}
	if !(maxFlushed <= h200L2 && h200L2 < minWarm) {
		t.Errorf("the report's flushed layers hold up to %d bytes and its warm ones from %d: a %d-byte L2 is not between", maxFlushed, minWarm, h200L2)
	}
	if !relu6 || changed < 100 {
		t.Errorf("%d rows of the report that ran warm are now flushed (fp32 ReLU6 1280x7x7 b64 among them: %v); want it and at least 100", changed, relu6)
	}
}

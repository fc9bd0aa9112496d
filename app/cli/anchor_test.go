package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/predictor"
)

// anchorSteps is a steps.csv of ResNet-50 on an A100 40GB as cnntime_train.py writes
// one (fp32, contiguous: 60 ms at 64, 250 ms at 256; channels_last: 30 ms at 64) and
// steps that must anchor nothing here: another GPU and precision, a run of 8
// processes (its step holds their all-reduce), a framework cnntime cannot read, a
// CIFAR-sized input.
const anchorSteps = "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n" +
	"gpu:a100-sxm4-40gb,resnet50,64,fp32,pytorch 2.8.0 cnntime_train.py,60,1.2,ok,\"cnntime_train.py on lab (NVIDIA A100, 1 processes, 8 workers each, input 224)\",2026-11-01T12:00:00Z\n" +
	"gpu:a100-sxm4-40gb,resnet50,256,fp32,pytorch 2.8.0 cnntime_train.py,250,2.5,ok,lab,2026-11-01T12:00:00Z\n" +
	"gpu:a100-sxm4-40gb,resnet50,64,fp32,pytorch 2.8.0 cnntime_train.py channels_last,30,0.3,ok,lab,2026-11-01T12:00:00Z\n" +
	"gpu:a100-sxm4-40gb,resnet50,128,fp32,pytorch 2.8.0 cnntime_train.py,10,0.1,ok,\"cnntime_train.py on lab (NVIDIA A100, 8 processes, 8 workers each, input 224)\",2026-11-01T12:00:00Z\n" +
	"gpu:a100-sxm4-40gb,resnet50,128,fp32,tensorflow 2.15,10,0.1,ok,lab,2026-11-01T12:00:00Z\n" +
	"gpu:a100-sxm4-40gb,resnet50,32,fp32,pytorch 2.8.0 cnntime_train.py,10,0.1,ok,\"cnntime_train.py on lab (NVIDIA A100, 1 processes, 8 workers each, input 32)\",2026-11-01T12:00:00Z\n" +
	"gpu:v100-sxm2-16gb,resnet50,64,amp,pytorch 2.8.0 cnntime_train.py,20,0.2,ok,lab,2026-11-01T12:00:00Z\n"

// Whole steps measured and imported into the cache anchor the predicted curve of the
// same model, GPU, precision and stack: at a measured per-GPU batch the step is the
// measurement (source measured, its spread the band), between measured batches the
// prediction times the measured/predicted ratio interpolated in log-batch, beyond them
// the outermost ratio (source anchored); on eight GPUs the all-reduce is added as
// predicted. Steps of another precision, GPU, memory format, input, process count or
// an unreadable framework change nothing.
func TestMeasuredStepsAnchorThePrediction(t *testing.T) {
	dir := t.TempDir()
	cache, fresh, steps := filepath.Join(dir, "cache.db"), filepath.Join(dir, "fresh.db"), filepath.Join(dir, "steps.csv")
	if err := os.WriteFile(steps, []byte(anchorSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLIWithDB(t, cache, "cache", "import", steps); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	run := []string{"--model", "resnet50", "--loader", "synthetic"}
	iter := func(db string, args ...string) (ms float64, source string, errorPct float64, anchoredTo int) {
		t.Helper()
		rows := predictRows(t, db, append(append([]string(nil), run...), args...)...)
		if len(rows) != 1 || rows[0].IterMS == nil || rows[0].ErrorPct == nil {
			t.Fatalf("predict %v: want one row that fits, got %+v", args, rows)
		}
		return *rows[0].IterMS, rows[0].Source, *rows[0].ErrorPct, rows[0].AnchoredTo
	}
	a100 := []string{"--gpu", "a100-sxm4-40gb"}
	at := func(batch string, more ...string) []string {
		return append(append(append([]string(nil), a100...), "--batches", batch), more...)
	}
	plain64, _, _, _ := iter(fresh, at("64")...)
	plain256, _, _, _ := iter(fresh, at("256")...)
	r64, r256 := 60/plain64, 250/plain256

	for _, tc := range []struct {
		name     string
		args     []string
		want     func(plain float64) float64 // from the prediction without steps
		source   string
		errorPct float64 // 0: the prediction's own
		anchors  int
	}{
		{"at a measured batch: the measurement", at("64"), func(float64) float64 { return 60 }, "measured", 2, 2},
		{"the other measured batch", at("256"), func(float64) float64 { return 250 }, "measured", 1, 2},
		{"between them: the ratio interpolated in log-batch", at("128"), func(p float64) float64 { return p * (r64 + r256) / 2 }, "anchored", 0, 2},
		{"below them: the smallest batch's ratio", at("16"), func(p float64) float64 { return p * r64 }, "anchored", 0, 2},
		{"channels_last: its own step", at("64", "--memory-format", "nhwc"), func(float64) float64 { return 30 }, "measured", 1, 1},
		{"another precision: as predicted", at("64", "--precision", "amp"), func(p float64) float64 { return p }, "", 0, 0},
		{"another GPU: as predicted", []string{"--gpu", "v100-sxm2-16gb", "--batches", "64"}, func(p float64) float64 { return p }, "", 0, 0},
		{"another input: as predicted", at("32", "--input", "160"), func(p float64) float64 { return p }, "", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, plainSource, plainErr, none := iter(fresh, tc.args...)
			ms, source, errorPct, anchors := iter(cache, tc.args...)
			if want := tc.want(plain); math.Abs(ms-want) > 0.002+want*1e-4 {
				t.Errorf("step %v ms, want %v ms (predicted without steps: %v ms)", ms, want, plain)
			}
			if tc.source == "" {
				tc.source = plainSource
			}
			if tc.errorPct == 0 {
				tc.errorPct = plainErr
			}
			if source != tc.source || math.Abs(errorPct-tc.errorPct) > 0.05 || anchors != tc.anchors || none != 0 {
				t.Errorf("source %s ±%v%%, anchored to %d (without steps: %d), want %s ±%v%%, anchored to %d",
					source, errorPct, anchors, none, tc.source, tc.errorPct, tc.anchors)
			}
		})
	}

	// Eight A100s at 64 each: the measured step and the all-reduce as predicted, whose
	// exposed part stays and whose stragglers' wait is a share of the step: the step is
	// 14% shorter than predicted, so the sync may be at most that much less.
	p4d := []string{"--machine", "aws/p4d.24xlarge", "--batches", "512"}
	plain8, _, _, _ := iter(fresh, p4d...)
	ms8, source8, _, _ := iter(cache, p4d...)
	if comm, plainComm := ms8-60, plain8-plain64; source8 != "measured" || comm > plainComm || comm < plainComm*60/plain64 {
		t.Errorf("eight A100s at 64 each: %v ms (%s), %v ms of it the sync; want %v ms of it at most, at least %v ms",
			ms8, source8, comm, plainComm, plainComm*60/plain64)
	}

	// explain keeps the model's step and says what predict gives at its batch.
	for _, tc := range []struct {
		batch, source string
		anchors       int
	}{{"128", "anchored", 2}, {"64", "measured", 2}} {
		var x predictor.Explanation
		code, out, errOut := runCLIWithDB(t, cache, append([]string{"explain", "--json", "--batch", tc.batch}, append(run, a100...)...)...)
		if code != 0 || json.Unmarshal([]byte(out), &x) != nil {
			t.Fatalf("explain --json: exit %d: %s", code, errOut)
		}
		predicted, _, _, _ := iter(cache, at(tc.batch)...)
		if plain, _, _, _ := iter(fresh, at(tc.batch)...); math.Abs(x.AnchoredMS-predicted) > 0.002 || string(x.AnchoredSource) != tc.source ||
			x.AnchoredTo != tc.anchors || math.Abs(x.IterMS-plain) > 0.002 {
			t.Errorf("explain at %s: %v ms, anchored %v ms (%s, %d steps); want the model's %v ms and predict's %v ms (%s, %d steps)",
				tc.batch, x.IterMS, x.AnchoredMS, x.AnchoredSource, x.AnchoredTo, plain, predicted, tc.source, tc.anchors)
		}
	}

	// The table says what the steps did; where none suits, the output is what it was.
	args := append([]string{"predict"}, append(run, at("64,128")...)...)
	_, out, _ := runCLIWithDB(t, cache, args...)
	if want := "measured: resnet50 on gpu/a100-sxm4-40gb: anchored to 2 measured steps (per-GPU batch 64: 60.0 ms ±1.20 ms, predicted "; !strings.Contains(out, want) {
		t.Errorf("predict's table says nothing of the measured steps (want %q):\n%s", want, out)
	}
	_, bestOut, _ := runCLIWithDB(t, cache, "best", "--model", "resnet50", "--gpu", "a100-sxm4-40gb", "--loader", "synthetic")
	if !strings.Contains(bestOut, "measured: resnet50 on gpu/a100-sxm4-40gb: anchored to 2 measured steps") {
		t.Errorf("best says nothing of the measured steps:\n%s", bestOut)
	}
	for _, other := range [][]string{at("64,128", "--precision", "amp"), {"--gpu", "v100-sxm2-16gb", "--batches", "64,128"}} {
		args := append([]string{"predict"}, append(run, other...)...)
		_, before, _ := runCLIWithDB(t, fresh, args...)
		_, after, _ := runCLIWithDB(t, cache, args...)
		if before != after {
			t.Errorf("predict %v changed with steps that do not suit it:\nbefore:\n%s\nafter:\n%s", other, before, after)
		}
	}
}

package cli

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/gpu/cpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// localNetJSON is a small CNN at 32×32 with every kind of kernel the CPU backend adds
// to PyTorch's (batch norm's weight gradient, a residual add's gradient, a view copy).
const localNetJSON = `{"name": "local_mini", "input": [3, 32, 32], "classes": 10, "layers": [
	{"name": "conv1", "op": "conv2d", "out": 8, "kernel": 3, "padding": 1, "bias": false},
	{"name": "bn1", "op": "batchnorm2d"},
	{"name": "relu1", "op": "relu"},
	{"name": "conv2", "op": "conv2d", "out": 8, "kernel": 3, "padding": 1, "bias": false},
	{"name": "add", "op": "add", "inputs": ["conv2", "relu1"]},
	{"name": "pool", "op": "maxpool2d", "kernel": 2},
	{"name": "gap", "op": "adaptiveavgpool2d", "size": 1},
	{"name": "flatten", "op": "flatten"},
	{"name": "fc", "op": "linear", "out": 10}
]}`

// sweptCPU sweeps localNetJSON on this machine's CPU at batches 1, 2 and 4 into a new
// cache and returns the cache's path and the model file's.
func sweptCPU(t *testing.T) (dbPath, model string) {
	t.Helper()
	dir := t.TempDir()
	dbPath, model = filepath.Join(dir, "cache.db"), writeModel(t, dir, "local_mini.json", localNetJSON)
	if code, _, errOut := runCLIWithDB(t, dbPath, "sweep", "--device", "cpu", "--models", model, "--batches", "1,2,4", "--repeats", "1"); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	return dbPath, model
}

func listedMachine(t *testing.T, dbPath, id string) (hw.Machine, bool) {
	t.Helper()
	code, out, errOut := runCLIWithDB(t, dbPath, "machines", "--json")
	if code != 0 {
		t.Fatalf("machines: exit %d: %s", code, errOut)
	}
	var got machinesJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, m := range got.Machines {
		if m.ID == id {
			return m, true
		}
	}
	return hw.Machine{}, false
}

func TestLocalCPUAfterASweep(t *testing.T) {
	dbPath, model := sweptCPU(t)
	dev := cpu.New().Device()

	m, ok := listedMachine(t, dbPath, hw.LocalCPUID)
	if !ok {
		t.Fatalf("cnntime machines does not list %s after a CPU sweep", hw.LocalCPUID)
	}
	if m.Provider != hw.LocalProvider || m.GPUID != hw.CPUGPUID || m.Instance != "This computer's CPU: "+dev.Name ||
		m.VCPUs != dev.SMs || m.MemoryGiB != math.Round(float64(dev.MemoryBytes)/(1<<30)*10)/10 || m.Listing != hw.ListingUnpriced || m.PriceUSDPerHour != 0 {
		t.Errorf("local/cpu = %+v; want provider local, GPU cpu, %q, %d cores, the host's memory, unpriced", m, dev.Name, dev.SMs)
	}

	rows := predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID, "--batches", "1-4", "--precision", "amp")
	wantSource := map[int]string{1: "measured", 2: "measured", 3: "interpolated", 4: "measured"}
	if len(rows) != 4 {
		t.Fatalf("predict gave %d rows; want 4", len(rows))
	}
	for _, r := range rows {
		if r.Source != wantSource[r.Batch] || !r.Fits || r.IterMS == nil || *r.IterMS <= 0 {
			t.Errorf("batch %d: source %s, fits %t, iter %v; want %s and a time", r.Batch, r.Source, r.Fits, r.IterMS, wantSource[r.Batch])
		}
		if r.Machine != hw.LocalCPUID || r.Device != hw.CPUGPUID || r.GPU != "" || r.GPUCount != 0 || r.Precision != "fp32" || r.CostUSD != nil || r.EnergyKWh != nil {
			t.Errorf("batch %d: %s on %s (device %q, GPU %q ×%d) in %s, cost %v, energy %v; want local/cpu, device cpu and no GPU, fp32 (it has no amp), unknown cost and energy",
				r.Batch, r.Model, r.Machine, r.Device, r.GPU, r.GPUCount, r.Precision, r.CostUSD, r.EnergyKWh)
		}
	}

	// At a swept batch the step is the CPU's own measured kernels, one after another
	// (the CPU backend's kernel rule), and whatever CPUOverheads adds for the update.
	want := measuredCPUStepMS(t, dbPath, model, dev.Key, 2)
	if got := *rows[1].IterMS; math.Abs(got-want) > 1e-3+1e-6*want {
		t.Errorf("batch 2: %.4f ms; want the sum of its measured kernels and the update, %.4f ms", got, want)
	}

	// A price makes costs known; resetting it makes them unknown again.
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "set-price", hw.LocalCPUID, "0.05"); code != 0 {
		t.Fatalf("set-price: exit %d: %s", code, errOut)
	}
	if m, _ := listedMachine(t, dbPath, hw.LocalCPUID); m.PriceUSDPerHour != 0.05 || m.Listing != hw.ListingLocal {
		t.Errorf("after set-price: %+v; want $0.05/h, listing local", m)
	}
	priced := predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID, "--batch", "4", "--images", "36000")
	// Both sides are rounded to 4 decimals (the cost from the unrounded time, the
	// check from the row's total_s), so at a rounding boundary they may differ by one
	// unit of the last place: allow it, plus float noise.
	if r := priced[0]; r.CostUSD == nil || r.TotalS == nil || math.Abs(*r.CostUSD-round(*r.TotalS/3600*0.05, 4)) > 1e-4+1e-9 {
		t.Errorf("cost %s for %s s at $0.05/h", fmtPtr(r.CostUSD), fmtPtr(r.TotalS))
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "reset-price", hw.LocalCPUID); code != 0 {
		t.Fatalf("reset-price: exit %d: %s", code, errOut)
	}
	if m, _ := listedMachine(t, dbPath, hw.LocalCPUID); m.PriceUSDPerHour != 0 || m.Listing != hw.ListingUnpriced {
		t.Errorf("after reset-price: %+v; want unpriced", m)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "reset-price", hw.LocalCPUID); code != 1 || !strings.Contains(errOut, "no price set") {
		t.Errorf("a second reset-price: exit %d, %q; want 1 and that it has no price", code, errOut)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "remove", hw.LocalCPUID); code != 1 || !strings.Contains(errOut, "measured") {
		t.Errorf("remove local/cpu: exit %d, %q; want 1 and why it cannot be", code, errOut)
	}

	// A network the CPU never measured is estimated from its own roofline, not from a GPU.
	est := predictRows(t, dbPath, "--model", "resnet18", "--machine", hw.LocalCPUID, "--batch", "2")
	if r := est[0]; r.Source != "estimated" || r.IterMS == nil || *r.IterMS <= *rows[1].IterMS {
		t.Errorf("resnet18 at 224×224 on local/cpu: %s, %v ms; want estimated and slower than the tiny swept net (%v ms)", r.Source, r.IterMS, *rows[1].IterMS)
	}

	// The GUI's machine list offers it too, and predicts it.
	ctx := context.Background()
	b, err := app.OpenEngineBackend(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	choices, err := b.MachineChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range choices {
		found = found || c.ID == hw.LocalCPUID
	}
	if !found {
		t.Errorf("MachineChoices lacks %s", hw.LocalCPUID)
	}
}

// measuredCPUStepMS is the CPU step of the model file at batch b from the cache's
// measurements: every kernel of the CPU backend's rule, added, plus CPUOverheads'
// update (none while the backend updates inside its weight-gradient kernels).
func measuredCPUStepMS(t *testing.T, dbPath, model, deviceKey string, b int) float64 {
	t.Helper()
	net, err := app.ReadCustomModelFile(context.Background(), model)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ms, err := cache.Measurements(context.Background(), deviceKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		config string
		phase  measure.Phase
	}
	at := map[point]float64{}
	for _, m := range ms {
		if m.Batch == b && m.Status == measure.OK {
			at[point{m.ConfigKey, m.Phase}] = m.MedianMS
		}
	}
	sum := 0.0
	for i := range net.Layers {
		l := &net.Layers[i]
		for _, ph := range predictor.EveryPhaseKernels.Phases(l) {
			x, ok := at[point{l.Config.Key(), ph}]
			if !ok {
				t.Fatalf("the sweep did not measure %s of %s at batch %d", ph, l.Name, b)
			}
			sum += x
		}
	}
	eng, err := app.NewEngine(context.Background(), cache)
	if err != nil {
		t.Fatal(err)
	}
	target, err := eng.MachineTarget(hw.LocalCPUID)
	if err != nil {
		t.Fatal(err)
	}
	update := float64(net.Params()) * predictor.CPUOverheads.UpdateBytesPerParam / (target.GPU.MemoryBandwidthGBs * 1e9 * predictor.CPUOverheads.MemoryEfficiency) * 1000
	return sum + update
}

// A CUDA device measured in the cache (a GPU sweep, an import) is a machine when the
// catalog knows its GPU; its own measurements come first there. A CPU whose
// measurements give no roofline is listed, and predicting it says why it cannot be.
func TestLocalMachinesFromCachedDevices(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 8, H: 4, W: 4}, Out: cnn.Shape{C: 8, H: 4, W: 4}, NumInputs: 1}
	desc, _ := json.Marshal(relu)
	if err := cache.PutConfig(ctx, relu.Key(), string(desc)); err != nil {
		t.Fatal(err)
	}
	devices := []measure.Device{
		{Key: "cuda:GPU-t4", Backend: "cuda", Name: "Tesla T4", GPUID: "t4"},
		{Key: "cuda:GPU-odd", Backend: "cuda", Name: "Mystery GPU"}, // no catalog GPU: not a machine
		{Key: "cuda:GPU-unmeasured", Backend: "cuda", Name: "NVIDIA L4", GPUID: "l4"},
		{Key: "cpu:elsewhere:Old CPU", Backend: "cpu", Name: "Old CPU", Host: "elsewhere", SMs: 4},
	}
	at := time.Unix(1_700_000_000, 0)
	var ms []measure.Measurement
	for _, d := range devices {
		if err := cache.PutDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
		if d.Key == "cuda:GPU-unmeasured" {
			continue
		}
		ms = append(ms, measure.Measurement{DeviceKey: d.Key, ConfigKey: relu.Key(), Batch: 8, Precision: measure.FP32, Phase: measure.Forward,
			Policy: measure.Heuristic, MedianMS: 0.01, Repeats: 3, Status: measure.OK, At: at})
	}
	ms[len(ms)-1].Policy = measure.NoPolicy
	if err := cache.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	machines, err := app.Machines(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	var local []string
	for _, m := range machines {
		if m.Provider == hw.LocalProvider {
			local = append(local, m.ID+" "+m.GPUID+" "+m.Instance)
		}
	}
	want := []string{"local/cpu cpu CPU of elsewhere: Old CPU", "local/t4 t4 This computer's GPU: Tesla T4"}
	if strings.Join(local, "|") != strings.Join(want, "|") {
		t.Errorf("local machines %q; want %q", local, want)
	}
	eng, err := app.NewEngine(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	cache.Close()
	tgt, err := eng.MachineTarget("LOCAL/T4")
	if err != nil || tgt.DeviceKey != "cuda:GPU-t4" || tgt.GPU.ID != "t4" {
		t.Errorf("MachineTarget(local/t4) = %+v, %v; want the T4 with its device", tgt, err)
	}
	if _, err := eng.MachineTarget(hw.LocalCPUID); err == nil || !strings.Contains(err.Error(), "0 GEMM kernels") {
		t.Errorf("MachineTarget(local/cpu) with only a ReLU measured: %v; want why its roofline is unknown", err)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "set-price", "local/l4", "1"); code != 1 || !strings.Contains(errOut, "unknown machine") {
		t.Errorf("set-price of an unmeasured device: exit %d, %q; want 1, unknown machine", code, errOut)
	}
}

// TestLocalCPUPrefersPyTorch: once the cache holds PyTorch's layer timings of this CPU
// beside the Go backend's, local/cpu is PyTorch's (composed of the kernels PyTorch runs)
// and says so, the Go backend's is local/cpu-cnntime, and each prediction names whose
// measurements answered.
func TestLocalCPUPrefersPyTorch(t *testing.T) {
	dbPath, model := sweptCPU(t)
	goDev := cpu.New().Device()
	ptKey := goDev.Key + ":pytorch-1-threads"
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := cache.Measurements(context.Background(), goDev.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	// PyTorch's timings: the same kernels as the Go backend's, each doubled, of the
	// phases PyTorch runs only.
	net, err := app.ReadCustomModelFile(context.Background(), model)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for i := range net.Layers {
		for _, ph := range net.Layers[i].Phases() {
			runs[net.Layers[i].Config.Key()+"/"+string(ph)] = true
		}
	}
	var pt []measure.Measurement
	for _, m := range ms {
		if runs[m.ConfigKey+"/"+string(m.Phase)] {
			m.DeviceKey, m.MedianMS = ptKey, 2*m.MedianMS
			pt = append(pt, m)
		}
	}
	ptDev := goDev
	ptDev.Key = ptKey
	if err := cache.PutDevice(context.Background(), ptDev); err != nil {
		t.Fatal(err)
	}
	if err := cache.PutMeasurements(context.Background(), pt); err != nil {
		t.Fatal(err)
	}
	cache.Close()

	m, ok := listedMachine(t, dbPath, hw.LocalCPUID)
	if !ok || m.Instance != "This computer's CPU: "+goDev.Name+" (PyTorch, 1 thread)" || m.Notes != "measured device "+ptKey {
		t.Errorf("local/cpu = %+v; want PyTorch's measured CPU", m)
	}
	g, ok := listedMachine(t, dbPath, hw.LocalCPUID+"-cnntime")
	if !ok || g.Instance != "This computer's CPU: "+goDev.Name+" (cnntime's Go CPU backend)" || g.Notes != "measured device "+goDev.Key {
		t.Errorf("local/cpu-cnntime = %+v, %v; want the Go backend's measured CPU", g, ok)
	}
	rows := predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID+","+hw.LocalCPUID+"-cnntime", "--batch", "2", "--loader", "synthetic")
	if len(rows) != 2 || rows[0].Backend != "pytorch" || rows[1].Backend != "cnntime-cpu" {
		t.Fatalf("rows %+v; want local/cpu answered by pytorch, local/cpu-cnntime by cnntime-cpu", rows)
	}
	// PyTorch's step is its own kernels (the phases it runs), the Go backend's its own.
	var want float64
	for _, m := range pt {
		if m.Batch == 2 {
			for i := range net.Layers {
				for _, ph := range net.Layers[i].Phases() {
					if net.Layers[i].Config.Key() == m.ConfigKey && ph == m.Phase {
						want += m.MedianMS
					}
				}
			}
		}
	}
	if got := *rows[0].IterMS; math.Abs(got-want) > 1e-3+1e-6*want {
		t.Errorf("local/cpu at batch 2: %.4f ms; want the sum of PyTorch's kernels, %.4f ms", got, want)
	}
	if got, goWant := *rows[1].IterMS, measuredCPUStepMS(t, dbPath, model, goDev.Key, 2); math.Abs(got-goWant) > 1e-3+1e-6*goWant {
		t.Errorf("local/cpu-cnntime at batch 2: %.4f ms; want the Go backend's kernels, %.4f ms", got, goWant)
	}
}

// fmtPtr prints an optional number of a JSON row: its value, or null.
func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// A measured CPU is described as a CPU everywhere: its step's bound is "cpu" in predict
// and explain (not "gpu"), explain gives its memory per CPU, and the window's Why tab
// says the CPU bounds it, charts its CPU kernels and says where an estimate comes from
// in the CPU's terms (its own roofline, not a GPU's specifications).
func TestLocalCPUIsDescribedAsACPU(t *testing.T) {
	dbPath, model := sweptCPU(t)
	for _, r := range predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID, "--batches", "1-4") {
		if r.Bound != app.BoundCPU {
			t.Errorf("batch %d: bound %q, want cpu", r.Batch, r.Bound)
		}
	}
	code, out, errOut := runCLIWithDB(t, dbPath, "explain", "--model", model, "--machine", hw.LocalCPUID, "--batch", "4")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"bound      cpu", "machine    local/cpu (CPU)", "of the host's memory at this batch"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain on %s lacks %q:\n%s", hw.LocalCPUID, want, out)
		}
	}
	if strings.Contains(out, "per GPU") || strings.Contains(out, "1×cpu") || strings.Contains(out, "-0.00") || strings.Contains(out, " 0.0 GB") {
		t.Errorf("explain on %s speaks of a GPU, of 0.0 GB or of a negative phase:\n%s", hw.LocalCPUID, out)
	}
	// Its JSON names the device, not a GPU, a GPU count or a per-GPU batch.
	_, js, _ := runCLIWithDB(t, dbPath, "explain", "--json", "--model", model, "--machine", hw.LocalCPUID, "--batch", "4")
	if !strings.Contains(js, `"device": "cpu"`) || strings.Contains(js, `"gpu_count"`) || strings.Contains(js, `"per_gpu_batch"`) || strings.Contains(js, `"gpu":`) {
		t.Errorf("explain --json on %s: %.600s", hw.LocalCPUID, js)
	}
	// The tables call it a CPU; Instances (--nodes) do not multiply this computer.
	_, table, _ := runCLIWithDB(t, dbPath, "best", "--model", model, "--machine", hw.LocalCPUID, "--batches", "1-4")
	if !strings.Contains(table, "local/cpu  CPU ") || strings.Contains(table, "1×cpu") {
		t.Errorf("best on %s:\n%s", hw.LocalCPUID, table)
	}
	one := predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID, "--batch", "4")
	four := predictRows(t, dbPath, "--model", model, "--machine", hw.LocalCPUID, "--batch", "4", "--nodes", "4")
	if *one[0].IterMS != *four[0].IterMS || four[0].Nodes != 0 || four[0].GPUCount != 0 {
		t.Errorf("--nodes 4 on %s: %v ms on %d nodes; want one instance's %v ms", hw.LocalCPUID, *four[0].IterMS, four[0].Nodes, *one[0].IterMS)
	}

	ctx := context.Background()
	b, err := app.OpenEngineBackend(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	name, err := b.AddCustomModel([]byte(localNetJSON))
	if err != nil {
		t.Fatal(err)
	}
	s := app.DefaultSessionSettings()
	s.Models, s.Machines, s.Data = []string{name}, []string{hw.LocalCPUID}, app.RunData{}
	x, err := b.Explain(ctx, s, name, hw.LocalCPUID, 4)
	if err != nil {
		t.Fatal(err)
	}
	head := app.WhyHeadline(&x)
	if !strings.Contains(head, "Bound: the CPU,") || !strings.Contains(head, "data already in memory") || strings.Contains(head, "no loader to wait for") {
		t.Errorf("the Why tab on %s says:\n%s", hw.LocalCPUID, head)
	}
	for _, g := range app.PhaseGroups(&x) {
		if g.Name == app.GroupGPU {
			t.Errorf("the Why chart of %s has a %q group", hw.LocalCPUID, g.Name)
		}
	}
	// Where it does not measure, its estimate is its own roofline's.
	x, err = b.Explain(ctx, s, "resnet18", hw.LocalCPUID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if head := app.WhyHeadline(&x); !strings.Contains(head, "the CPU's roofline") || strings.Contains(head, "GPU") {
		t.Errorf("the Why tab on an estimated %s says:\n%s", hw.LocalCPUID, head)
	}
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// Local machines are the devices measured in the cache, offered for comparison like
// catalog machines: this computer's CPU after a CPU sweep ("local/cpu") and a CUDA GPU
// after a GPU sweep or an import ("local/<catalog GPU id>"). Their price is the user's
// (cnntime machine set-price), unknown until set; it is kept with the price overrides.

// localMachine is one measured device offered as a machine.
type localMachine struct {
	machine hw.Machine
	device  measure.Device
}

// localMachines lists the cache's measured devices as machines, sorted by id, with the
// user's prices. A device counts as measured when it has a kernel measurement that is
// not out of memory; a CUDA device needs a catalog GPU (its GPU id), since its
// specifications are what the rest of a prediction (memory, transfer) reads.
func localMachines(ctx context.Context, d *db.DB, prices map[string]float64) ([]localMachine, error) {
	if d == nil {
		return nil, nil
	}
	c, err := LoadCatalog()
	if err != nil {
		return nil, err
	}
	devices, err := d.Devices(ctx)
	if err != nil {
		return nil, err
	}
	info, err := d.Info(ctx)
	if err != nil {
		return nil, err
	}
	measured := map[string]bool{}
	for _, dc := range info.Devices {
		measured[dc.Key] = dc.Measurements > dc.OutOfMemory
	}
	here, _ := os.Hostname()
	// A host whose CPU PyTorch measured: its local/cpu is PyTorch's (what a person trains
	// with on a CPU), and the Go CPU backend's is local/cpu-cnntime beside it.
	pytorchHosts := map[string]bool{}
	for _, dev := range devices {
		if measured[dev.Key] && dev.Backend == "cpu" && measure.CPUFramework(dev.Key) == measure.FrameworkPyTorch {
			pytorchHosts[cpuHost(dev)] = true
		}
	}
	var out []localMachine
	taken := map[string]bool{}
	for _, dev := range devices { // sorted by key
		if !measured[dev.Key] {
			continue
		}
		ours := dev.Host == "" || dev.Host == here
		var m hw.Machine
		switch dev.Backend {
		case "cpu":
			name := dev.Name
			id := hw.LocalCPUID
			if measure.CPUFramework(dev.Key) == measure.FrameworkPyTorch {
				name += " (PyTorch" + pytorchThreads(dev.Key) + ")"
			} else if pytorchHosts[cpuHost(dev)] {
				name += " (cnntime's Go CPU backend)"
				id += "-cnntime"
			}
			m = hw.Machine{ID: id, Instance: "This computer's CPU: " + name, GPUID: hw.CPUGPUID,
				VCPUs: dev.SMs, MemoryGiB: hostMemoryGiB(dev)}
			if !ours {
				m.Instance = "CPU of " + dev.Host + ": " + name
			}
		case "cuda":
			g, err := c.GPU(dev.GPUID)
			if dev.GPUID == "" || err != nil {
				continue // no catalog GPU: nothing to predict its memory or transfer with
			}
			name := dev.Name
			if measure.MeasuredByPyTorch(dev.Key) { // pytorch_sweep.py --layers, apart from the worker's rows
				name += " (PyTorch's layer timings)"
			}
			m = hw.Machine{ID: hw.LocalProvider + "/" + g.ID, Instance: "This computer's GPU: " + name, GPUID: g.ID}
			if !ours {
				m.Instance = "GPU of " + dev.Host + ": " + name
			}
		default:
			continue
		}
		m.ID = uniqueLocalID(m.ID, dev, ours, taken)
		m.Provider, m.GPUCount = hw.LocalProvider, 1
		m.Notes = "measured device " + dev.Key
		priceLocal(&m, prices)
		out = append(out, localMachine{machine: m, device: dev})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].machine.ID < out[j].machine.ID })
	return out, nil
}

// cpuHost is the host of a CPU device: as described, else from its key "cpu:<host>:…".
func cpuHost(dev measure.Device) string {
	if dev.Host != "" {
		return dev.Host
	}
	parts := strings.SplitN(dev.Key, ":", 3)
	if len(parts) == 3 {
		return parts[1]
	}
	return ""
}

// pytorchThreads is ", N threads" for a PyTorch CPU key ending ":pytorch-N-threads".
func pytorchThreads(key string) string {
	n := strings.TrimSuffix(key[strings.LastIndexByte(key, ':')+1:], "-threads")
	n = strings.TrimPrefix(n, "pytorch-")
	if n == "1" {
		return ", 1 thread"
	}
	return ", " + n + " threads"
}

// hostMemoryGiB is a CPU device's host memory in GiB to a tenth, as a spec table shows it.
func hostMemoryGiB(dev measure.Device) float64 {
	return math.Round(float64(dev.MemoryBytes)/gibibyte*10) / 10
}

// uniqueLocalID is id, or for a second device of the same kind (another host's CPU
// in an imported cache, a second GPU of one model) id with the host, then a number.
func uniqueLocalID(id string, dev measure.Device, ours bool, taken map[string]bool) string {
	if taken[id] && !ours && dev.Host != "" {
		if host, err := hw.UserMachineID(dev.Host); err == nil {
			id += "-" + strings.TrimPrefix(host, hw.UserProvider+"/")
		}
	}
	base := id
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	taken[id] = true
	return id
}

// priceLocal sets a local machine's price from the user's prices: unpriced (cost
// unknown) until the user sets one.
func priceLocal(m *hw.Machine, prices map[string]float64) {
	if p, ok := prices[m.ID]; ok && hw.CheckPrice(p) == nil {
		m.PriceUSDPerHour, m.PriceSource, m.Listing = p, "set by the user (cnntime machine reset-price "+m.ID+" makes it unknown again)", hw.ListingLocal
		return
	}
	m.PriceUSDPerHour, m.Listing = 0, hw.ListingUnpriced
	m.PriceSource = "not set: cost is unknown until you set it with 'cnntime machine set-price " + m.ID + " USD' (e.g. electricity price × power)"
}

// findLocalMachine finds a local machine by id (case-insensitive).
func findLocalMachine(ctx context.Context, d *db.DB, id string) (hw.Machine, bool, error) {
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(id)), hw.LocalProvider+"/") {
		return hw.Machine{}, false, nil
	}
	prices, err := d.PriceOverrides(ctx)
	if err != nil {
		return hw.Machine{}, false, err
	}
	local, err := localMachines(ctx, d, prices)
	if err != nil {
		return hw.Machine{}, false, err
	}
	for _, lm := range local {
		if strings.EqualFold(lm.machine.ID, strings.TrimSpace(id)) {
			return lm.machine, true, nil
		}
	}
	return hw.Machine{}, false, nil
}

// cpuMemoryModel is the memory model of a CPU: the host's memory, with no CUDA context.
var cpuMemoryModel = func() predictor.MemoryModel {
	m := predictor.DefaultMemoryModel
	m.ContextBytes = 0
	return m
}()

// newCPUPredictor is the step model of a CPU that the CPU backend measured: kernel
// times from timer, run one after another on the calling thread (predictor.CPUOverheads).
func newCPUPredictor(timer predictor.LayerTimer) *predictor.Engine {
	return predictor.NewEngine(timer, predictor.CPUOverheads, cpuMemoryModel)
}

// cpuStepRequest turns r into a request for a training step on a CPU: FP32 (a CPU is
// measured in no other arithmetic: an amp or fp32-strict request is predicted as the
// FP32 run it would be), no algorithm policy, and the kernels its framework runs
// (predictor.CPUKernels: PyTorch's phases for a CPU PyTorch measured; for the Go CPU
// backend every layer's forward pass, data gradient and weight gradient each a kernel).
func cpuStepRequest(r predictor.Request) predictor.Request {
	r.Precision, r.Policy, r.Kernels = measure.FP32, measure.NoPolicy, predictor.CPUKernels(r.DeviceKey)
	r.Script = "" // the CPU backend's step is its kernels alone: no script around it
	return r
}

// cpuTarget builds the target of a measured CPU: its roofline is fitted to its own
// measurements, and its predictions come from those and that roofline alone.
func cpuTarget(lm localMachine, model *kernels.Model, ms []measure.Measurement, configs map[string]cnn.Config) (Target, error) {
	var own []measure.Measurement
	for _, m := range ms {
		if m.DeviceKey == lm.device.Key && m.Precision == measure.FP32 {
			own = append(own, m)
		}
	}
	roof, err := kernels.FitCPURoofline(own, configs)
	if err != nil {
		return Target{}, fmt.Errorf("machine %s: %w", lm.machine.ID, err)
	}
	g := hw.HostCPU(lm.device.Name, lm.device.SMs, hostMemoryGiB(lm.device), roof.GFLOPS/1000, roof.GBs,
		fmt.Sprintf("rates achieved in its own %d measured kernels (medians); memory: the host's", roof.Kernels))
	return Target{Machine: lm.machine, GPU: g, DeviceKey: lm.device.Key,
		cpu: newCPUPredictor(kernels.CPUTimer{Model: model, Roofline: roof})}, nil
}

// cacheConfigs reads the layer configurations the cache holds, by key: from their
// description, or, for one known by its key alone (imported from a kernel measurement
// CSV), from the key itself (cnn.ParseKey). A configuration that reads neither way is
// left out: its measurements then only count where they are looked up by key.
func cacheConfigs(ctx context.Context, d *db.DB) (map[string]cnn.Config, error) {
	list, err := d.Configs(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]cnn.Config, len(list))
	for _, c := range list {
		var cfg cnn.Config
		if c.Description == "" || json.Unmarshal([]byte(c.Description), &cfg) != nil || cfg.Key() != c.Key {
			if cfg, err = cnn.ParseKey(c.Key); err != nil {
				continue
			}
		}
		out[c.Key] = cfg
	}
	return out, nil
}

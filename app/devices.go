package app

import (
	"context"
	"fmt"

	"cnntime/gpu"
	"cnntime/gpu/cpu"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// DeviceEntry is one device a sweep can run on.
type DeviceEntry struct {
	ID     string         `json:"id"` // what --device takes: "cpu" or "cuda:N"
	Device measure.Device `json:"device"`
}

// DeviceList is the devices found, and why CUDA devices are missing when they are.
type DeviceList struct {
	Devices []DeviceEntry `json:"devices"`
	CUDA    string        `json:"cuda_note,omitempty"`
	// NoNVIDIA is set when this computer's PCI bus lists no NVIDIA GPU: that, more
	// than a missing worker, is why only the CPU is listed.
	NoNVIDIA bool `json:"no_nvidia_gpu,omitempty"`
}

// ListSweepDevices finds this machine's CPU and, through the worker, its CUDA GPUs.
func ListSweepDevices(ctx context.Context) DeviceList {
	list := DeviceList{Devices: []DeviceEntry{{ID: "cpu", Device: cpu.New().Device()}}}
	path, err := gpu.FindWorker()
	if err != nil {
		list.CUDA = err.Error()
		if present, known := NVIDIAPresence(); known && !present {
			list.NoNVIDIA = true
			list.CUDA = "this computer has no NVIDIA GPU (its PCI bus lists none); and " + err.Error()
		}
		return list
	}
	devs, err := gpu.ListDevices(ctx, path)
	if err != nil {
		list.CUDA = err.Error()
		return list
	}
	for i, d := range devs {
		list.Devices = append(list.Devices, DeviceEntry{ID: fmt.Sprintf("cuda:%d", i), Device: d})
	}
	if len(devs) == 0 {
		list.CUDA = "the CUDA worker found no GPU"
	}
	return list
}

// GPUOfDevice is what a measured CUDA device is, for predicting on it: the catalog's GPU
// where the device names one (its GPU id, or a driver name and memory the catalog knows),
// else what the device says of itself.
func GPUOfDevice(cat *hw.Catalog, dev measure.Device) hw.GPU {
	if g, err := cat.GPU(dev.GPUID); dev.GPUID != "" && err == nil {
		return g
	}
	if id, ok := cat.MatchGPUName(dev.Name, float64(dev.MemoryBytes)/(1<<30)); ok {
		if g, err := cat.GPU(id); err == nil {
			return g
		}
	}
	return hw.GPU{ID: dev.Key, Name: dev.Name, ComputeCapability: dev.ComputeCapability, SMs: dev.SMs,
		BoostClockMHz: float64(dev.ClockMHz), MemoryGB: float64(dev.MemoryBytes) / 1e9}
}

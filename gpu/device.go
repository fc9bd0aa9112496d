package gpu

import (
	"fmt"
	"strings"

	"cnntime/predictor/measure"
)

// DeviceUUID is a CUDA device's UUID as nvidia-smi prints it: "GPU-…" for a whole GPU;
// "MIG-…" for a MIG instance, whose cuDeviceGetUuid_v2 (v2, when the driver has it)
// differs from the parent GPU's UUID that the first cuDeviceGetUuid (v1) returns for
// every slice, so that each slice is a device of its own in the cache.
func DeviceUUID(v1, v2 [16]byte, haveV2 bool) string {
	if haveV2 && v2 != v1 {
		return "MIG-" + formatUUID(v2)
	}
	return "GPU-" + formatUUID(v1)
}

func formatUUID(b [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// DeviceOrderEnv is CUDA's variable for the order it numbers GPUs in; the worker runs
// with it set to PCI_BUS_ID, so that cuda:N is nvidia-smi's GPU N (CUDA's default puts
// the fastest first).
const DeviceOrderEnv = "CUDA_DEVICE_ORDER"

// WorkerEnviron is the environment the worker runs in: this one, with CUDA numbering
// the GPUs in PCI bus order unless the user chose an order.
func WorkerEnviron(environ []string) []string {
	for _, e := range environ {
		if strings.HasPrefix(e, DeviceOrderEnv+"=") {
			return environ
		}
	}
	return append(append([]string(nil), environ...), DeviceOrderEnv+"=PCI_BUS_ID")
}

// DeviceIndex finds the device a sweep names among those the worker listed: cuda:N (N
// in PCI bus order, nvidia-smi's index) or cuda:GPU-<uuid> / cuda:MIG-<uuid> (or the bare
// UUID, as nvidia-smi -L prints it).
func DeviceIndex(devs []measure.Device, name string) (int, error) {
	id := strings.TrimPrefix(name, "cuda:")
	if strings.HasPrefix(id, "GPU-") || strings.HasPrefix(id, "MIG-") {
		for i, d := range devs {
			if strings.EqualFold(d.UUID, id) {
				return i, nil
			}
		}
		var have []string
		for _, d := range devs {
			have = append(have, d.UUID)
		}
		return -1, fmt.Errorf("no CUDA device has UUID %s (the worker found %s); nvidia-smi -L lists the UUIDs", id, strings.Join(have, ", "))
	}
	var n int
	if _, err := fmt.Sscanf(id, "%d", &n); err != nil || fmt.Sprint(n) != id || n < 0 {
		return -1, fmt.Errorf("device %q: write cuda:N with N the GPU's index in nvidia-smi (0 for the first), or cuda:GPU-<uuid>", name)
	}
	if n >= len(devs) {
		return -1, fmt.Errorf("there is no CUDA device %d: the worker found %d (use cnntime devices to list them)", n, len(devs))
	}
	return n, nil
}

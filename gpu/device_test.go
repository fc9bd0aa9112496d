package gpu

import (
	"strings"
	"testing"

	"cnntime/predictor/measure"
)

// TestDeviceUUID: a whole GPU keeps its GPU- UUID; a MIG slice, whose v1 UUID is its
// parent's, is MIG- with its own (v2), so two slices of one GPU are two devices.
func TestDeviceUUID(t *testing.T) {
	parent := [16]byte{0xdf, 0x68, 0x5e, 0x46, 0x1c, 0x23, 0xda, 0x29, 0xbd, 0x09, 0x76, 0x32, 0xe5, 0xcd, 0x93, 0x9c}
	slice1, slice2 := parent, parent
	slice1[15], slice2[15] = 1, 2
	if got := DeviceUUID(parent, parent, true); got != "GPU-df685e46-1c23-da29-bd09-7632e5cd939c" {
		t.Errorf("whole GPU: %s", got)
	}
	if got := DeviceUUID(parent, [16]byte{}, false); got != "GPU-df685e46-1c23-da29-bd09-7632e5cd939c" {
		t.Errorf("a driver without v2: %s", got)
	}
	a, b := DeviceUUID(parent, slice1, true), DeviceUUID(parent, slice2, true)
	if !strings.HasPrefix(a, "MIG-") || a == b || !strings.HasSuffix(a, "e5cd9301") {
		t.Errorf("MIG slices: %s and %s, want two MIG- UUIDs of their own", a, b)
	}
}

// TestWorkerEnvironNumbersByPCIBus: the worker numbers GPUs as nvidia-smi does unless the
// user chose an order.
func TestWorkerEnvironNumbersByPCIBus(t *testing.T) {
	got := WorkerEnviron([]string{"PATH=/bin"})
	if len(got) != 2 || got[1] != "CUDA_DEVICE_ORDER=PCI_BUS_ID" {
		t.Errorf("environment %q, want PCI_BUS_ID added", got)
	}
	mine := []string{"CUDA_DEVICE_ORDER=FASTEST_FIRST"}
	if got := WorkerEnviron(mine); len(got) != 1 || got[0] != mine[0] {
		t.Errorf("the user's order was replaced: %q", got)
	}
}

// TestDeviceIndex: cuda:N, or a device's UUID, GPU- or MIG-.
func TestDeviceIndex(t *testing.T) {
	devs := []measure.Device{{UUID: "GPU-aaaa"}, {UUID: "MIG-bbbb"}}
	for _, c := range []struct {
		name string
		want int
		err  string
	}{
		{"cuda:1", 1, ""}, {"cuda:MIG-bbbb", 1, ""}, {"cuda:gpu-AAAA", -1, "write cuda:N"}, {"cuda:GPU-AAAA", 0, ""}, {"GPU-aaaa", 0, ""},
		{"cuda:2", -1, "no CUDA device 2"}, {"cuda:GPU-cccc", -1, "no CUDA device has UUID GPU-cccc"}, {"cuda:x", -1, "write cuda:N"}, {"cuda:01", -1, "write cuda:N"},
	} {
		got, err := DeviceIndex(devs, c.name)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("DeviceIndex(%q) = %d, %v; want %d, %q", c.name, got, err, c.want, c.err)
		}
	}
}

package app

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// pciRoot is where Linux lists the PCI devices; tests point it at a made-up tree.
var pciRoot = "/sys/bus/pci/devices"

// nvidiaVendor is NVIDIA's PCI vendor id.
const nvidiaVendor = "0x10de"

// NVIDIAPresence says whether this computer has an NVIDIA GPU, as its PCI bus lists
// it (vendor 0x10de, a display or 3D controller), without the NVIDIA driver or the
// CUDA worker: known is false where the bus cannot be read (not Linux, a container
// without /sys).
func NVIDIAPresence() (present, known bool) { return nvidiaOn(pciRoot) }

func nvidiaOn(root string) (present, known bool) {
	if runtime.GOOS != "linux" && root == pciRoot {
		return false, false
	}
	devs, err := os.ReadDir(root)
	if err != nil || len(devs) == 0 {
		return false, false
	}
	for _, d := range devs {
		vendor, err1 := os.ReadFile(filepath.Join(root, d.Name(), "vendor"))
		class, err2 := os.ReadFile(filepath.Join(root, d.Name(), "class"))
		if err1 != nil || err2 != nil {
			continue
		}
		// Class 0x03xxxx: a display controller (VGA 0x0300, 3D 0x0302).
		if strings.TrimSpace(string(vendor)) == nvidiaVendor && strings.HasPrefix(strings.TrimSpace(string(class)), "0x03") {
			return true, true
		}
	}
	return false, true
}

// noNVIDIAReason is the sentence for a computer whose PCI bus lists no NVIDIA GPU:
// that, not a missing worker, is why there is nothing to check or sweep but the CPU.
const noNVIDIAReason = "this computer has no NVIDIA GPU (its PCI bus lists none), so there is no GPU to check or sweep: sweeps run on the CPU, and predictions for cloud GPUs need none"

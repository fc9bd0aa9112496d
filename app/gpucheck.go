package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"cnntime/gpu"
	"cnntime/gpu/selftest"
)

// GPUCheck is what "cnntime devices --check" and the Benchmark tab's Check GPU button
// show: the CUDA worker's self-test report, or the one sentence that says why there is
// none, and the items earlier sweeps quarantined.
type GPUCheck struct {
	Worker      string            `json:"worker,omitempty"` // the worker's path, when found
	Device      int               `json:"device"`
	Trusted     bool              `json:"trusted"`          // the report found nothing wrong
	NoGPU       bool              `json:"no_gpu"`           // no worker, or no usable GPU: Reason says which
	Reason      string            `json:"reason,omitempty"` // why there is no report, or why it is not trusted
	Report      *selftest.Report  `json:"report,omitempty"`
	Quarantined []gpu.Quarantined `json:"quarantined,omitempty"`
	Quarantine  string            `json:"quarantine_file,omitempty"`
}

// gpuChecker finds and asks the worker; tests replace its functions.
type gpuChecker struct {
	nvidia     func() (present, known bool)
	findWorker func() (string, error)
	selfTest   func(ctx context.Context, path string, index int) (selftest.Report, error)
	quarantine func() *gpu.Quarantine
}

var localGPUChecker = gpuChecker{nvidia: NVIDIAPresence, findWorker: gpu.FindWorker, selfTest: gpu.SelfTest, quarantine: gpu.DefaultQuarantine}

// CheckGPU runs the CUDA worker's self-test on GPU device (a minute on a GPU; at once
// without one). It never fails: what went wrong is in Reason.
func CheckGPU(ctx context.Context, device int) GPUCheck { return localGPUChecker.check(ctx, device) }

func (c gpuChecker) check(ctx context.Context, device int) GPUCheck {
	res := GPUCheck{Device: device}
	if q := c.quarantine(); q != nil {
		res.Quarantine = q.Path
		if list, err := q.List(); err == nil {
			res.Quarantined = list
		}
	}
	path, err := c.findWorker()
	if err != nil {
		res.NoGPU, res.Reason = true, err.Error()
		// No NVIDIA GPU at all is the reason that matters: a worker would not help.
		if c.nvidia != nil {
			if present, known := c.nvidia(); known && !present {
				res.Reason = noNVIDIAReason + ". Besides, " + err.Error()
			}
		}
		return res
	}
	res.Worker = path
	rep, err := c.selfTest(ctx, path, device)
	switch {
	case errors.Is(err, gpu.ErrNoGPU):
		res.NoGPU, res.Reason = true, err.Error()
		return res
	case err != nil:
		res.Reason = err.Error()
		return res
	}
	res.Report = &rep
	res.Trusted = rep.Trustworthy()
	if !res.Trusted {
		res.Reason = "do not trust this GPU's measurements yet: " + strings.Join(rep.Problems(), "; ")
	}
	return res
}

// Write prints the check as a person reads it.
func (g GPUCheck) Write(w io.Writer) error {
	if g.Report == nil {
		if _, err := fmt.Fprintf(w, "GPU check: %s\n", g.Reason); err != nil {
			return err
		}
	} else if err := g.Report.Write(w); err != nil {
		return err
	}
	return g.WriteQuarantined(w)
}

// WriteQuarantined prints the quarantined items, if any.
func (g GPUCheck) WriteQuarantined(w io.Writer) error {
	if len(g.Quarantined) > 0 {
		fmt.Fprintf(w, "\n%d items quarantined by earlier sweeps (they crashed, hung or failed in the worker; a new worker build or cuDNN tries them again; delete them from %s to retry now):\n", len(g.Quarantined), g.Quarantine)
		for _, q := range g.Quarantined {
			fmt.Fprintf(w, "  %s on %s (worker %s, cuDNN %s): %s, %s\n", q, q.DeviceKey, orUnknown(q.Worker), orUnknown(q.CuDNN), q.Reason, q.At.Format("2006-01-02 15:04"))
		}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

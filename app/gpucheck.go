package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"cnntime/gpu"
	"cnntime/gpu/libfind"
	"cnntime/gpu/selftest"
)

// GPUCheck is what "cnntime devices --check" and the Benchmark tab's Check GPU button
// show: the CUDA worker's self-test report, or the one sentence that says why there is
// none, where the CUDA libraries were looked for, and the items earlier sweeps
// quarantined.
type GPUCheck struct {
	Worker      string            `json:"worker,omitempty"` // the worker's path, when found
	Device      int               `json:"device"`
	Trusted     bool              `json:"trusted"`          // the report found nothing wrong
	NoGPU       bool              `json:"no_gpu"`           // no worker, or no usable GPU: Reason says which
	Reason      string            `json:"reason,omitempty"` // why there is no report, or why it is not trusted
	Report      *selftest.Report  `json:"report,omitempty"`
	Quarantined []gpu.Quarantined `json:"quarantined,omitempty"`
	Quarantine  string            `json:"quarantine_file,omitempty"`
	// Libraries are the places cuDNN, cuBLAS, NVRTC and NVML are looked for, in the
	// worker's order, with the file it would load (verdict "load") and why each other
	// place was taken or skipped: known with no GPU and no worker too.
	Libraries []libfind.Candidate `json:"libraries"`
}

// SearchLibraries lists where the worker looks for each CUDA library on this machine
// and what it would load (package libfind), without loading anything.
func SearchLibraries() []libfind.Candidate {
	h := libfind.System()
	var out []libfind.Candidate
	for _, l := range libfind.Libraries {
		out = append(out, l.Search(h, "")...)
	}
	return out
}

// gpuChecker finds and asks the worker; tests replace its functions.
type gpuChecker struct {
	nvidia     func() (present, known bool)
	findWorker func() (string, error)
	selfTest   func(ctx context.Context, path string, index int) (selftest.Report, error)
	quarantine func() *gpu.Quarantine
	libraries  func() []libfind.Candidate
}

var localGPUChecker = gpuChecker{nvidia: NVIDIAPresence, findWorker: gpu.FindWorker, selfTest: gpu.SelfTest, quarantine: gpu.DefaultQuarantine, libraries: SearchLibraries}

// CheckGPU runs the CUDA worker's self-test on GPU device (a minute on a GPU; at once
// without one). It never fails: what went wrong is in Reason.
func CheckGPU(ctx context.Context, device int) GPUCheck { return localGPUChecker.check(ctx, device) }

func (c gpuChecker) check(ctx context.Context, device int) GPUCheck {
	res := GPUCheck{Device: device}
	if c.libraries != nil {
		res.Libraries = c.libraries()
	}
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
	if err := WriteLibraries(w, g.Libraries); err != nil {
		return err
	}
	return g.WriteQuarantined(w)
}

// WriteLibraries prints where each CUDA library was looked for: per library the file
// the worker would load, then every place in the search order and what it held.
func WriteLibraries(w io.Writer, cands []libfind.Candidate) error {
	if len(cands) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nCUDA libraries, where the worker looks for them (in order: %s):\n", libfind.SearchOrder)
	var lib string
	for i, c := range cands {
		if c.Library != lib {
			lib = c.Library
			var group []libfind.Candidate
			for _, o := range cands[i:] {
				if o.Library != lib {
					break
				}
				group = append(group, o)
			}
			if chosen, ok := libfind.Chosen(group); ok {
				fmt.Fprintf(&b, "  %s: would load %s\n", lib, chosen.Path)
			} else {
				fmt.Fprintf(&b, "  %s: found nowhere\n", lib)
			}
		}
		where := c.Path
		if where == "" {
			where = c.Dir
		}
		if where == "" {
			where = "-"
		}
		fmt.Fprintf(&b, "    %-7s  %-15s  %s  (%s)\n", c.Verdict, c.Source, where, c.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
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

package gpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cnntime/predictor/measure"
)

// Job is a planned sweep for one device: what to measure and how.
type Job struct {
	Precision measure.Precision
	Policy    measure.Policy
	Repeats   int
	Items     []Item
	// CuDNNAPI is the cuDNN API convolutions choose their algorithm through on a GPU:
	// "" (legacy) or v8 (package gpu/convalgo).
	CuDNNAPI string
	// Layout is the activations' layout: "" or NCHW, or NHWC (channels_last), whose
	// measurements are stored under the device's LayoutKey.
	Layout string
	// L2 is how a GPU times a phase that fits in its L2: "" or cold (flushed before each
	// run), or producer-hot (flushed, then its input read back in, as a step's previous
	// layer leaves it); package timing.
	L2 string
}

// L2Setter is implemented by backends that time against an L2 cache.
type L2Setter interface {
	SetL2Mode(mode string) error
}

// Finisher is implemented by backends that have something to say once a sweep is done
// (another process started on the GPU while it ran); "" when nothing.
type Finisher interface {
	Finish() string
}

// APISetter is implemented by backends whose convolutions can choose their algorithm
// through either cuDNN API.
type APISetter interface {
	SetCuDNNAPI(api string) error
}

// Sink receives a sweep's results as they happen.
type Sink struct {
	// Measured is called with each measurement as soon as it is taken; an error from it
	// stops the sweep (the caller could not store the result).
	Measured func(measure.Measurement) error
	// Warning is called with problems that do not stop the sweep, e.g. throttling.
	Warning func(string)
	// Starting, when set, is called with an item's index before it is measured (the
	// worker tells the app which item is in flight, should it crash).
	Starting func(index int) error
	// Failed, when set, is called with an item whose measurement returned an error (a
	// bad parameter, a failed execution, a sticky CUDA error): the sweep records it and
	// goes on, except after a sticky error (ErrSticky), which leaves the device unusable
	// until its process restarts. Unset, the first error stops the sweep. An error from
	// it stops the sweep.
	Failed func(Failure) error
}

// ErrSticky is wrapped by the error of a measurement that left the GPU's context
// broken (an illegal address, a launch failure: CUDA's sticky errors), so that every
// later call in the process fails too; the worker must restart.
var ErrSticky = errors.New("the GPU's CUDA context is broken until the worker restarts (a sticky error)")

// Failure is an item whose measurement returned an error.
type Failure struct {
	Index  int // in the job's items
	Item   Item
	Reason string
	Sticky bool // the error was sticky: the worker restarts before the next item
	// Install says the libraries failed as installed (a cuDNN sub-library missing, a
	// CUDA runtime it does not accept), not the item: it is not quarantined.
	Install bool
	// Quarantine, when not empty, is the file the item is now listed in: later sweeps
	// with the same worker and cuDNN skip it.
	Quarantine string
}

func (f Failure) String() string {
	s := fmt.Sprintf("%s at batch %d (%s) failed: %s", f.Item.Config.Key(), f.Item.Batch, f.Item.Phase, f.Reason)
	switch {
	case f.Quarantine != "":
		s += fmt.Sprintf("; it is quarantined, later sweeps with this worker and cuDNN skip it (delete it from %s to try again)", f.Quarantine)
	case f.Install:
		s += "; not quarantined: the install failed, not the item (fix it, see cnntime devices --check, and sweep again)"
	}
	return s
}

// IsInstallFault reports whether err comes from a library that cannot run here as
// installed (cudastatus.Error's InstallFault), rather than from the item measured.
func IsInstallFault(err error) bool {
	var f interface{ InstallFault() bool }
	return errors.As(err, &f) && f.InstallFault()
}

// Sweeper runs sweeps on one device: in this process (Local) or in the worker (Remote).
type Sweeper interface {
	Device() measure.Device
	Sweep(ctx context.Context, job Job, sink Sink) error
}

// Monitor is implemented by backends that watch their device during a sweep; Check is
// called after each measurement and returns a warning, or "" when all is well.
type Monitor interface {
	Check() string
}

// Local runs sweeps on a backend in this process.
type Local struct{ Backend Backend }

// Device describes the backend's device.
func (l Local) Device() measure.Device { return l.Backend.Device() }

// Sweep runs the job on the backend; see Execute.
func (l Local) Sweep(ctx context.Context, job Job, sink Sink) error {
	return Execute(ctx, l.Backend, job, sink)
}

// Execute takes the job's measurements one by one on b and hands each to the sink.
// Once a configuration is out of memory at a batch size, its items at that size and
// above are reported out of memory without running them (with Repeats 0: inferred, not
// timed). An item whose measurement fails goes to sink.Failed and the sweep goes on,
// unless the failure was sticky; without sink.Failed it stops at the first error. It
// stops when ctx is cancelled (returning ctx's error).
func Execute(ctx context.Context, b Backend, job Job, sink Sink) error {
	if job.Repeats < 1 {
		return fmt.Errorf("sweep with %d repeats: measure each kernel at least once", job.Repeats)
	}
	if err := CheckLayout(job.Layout); err != nil {
		return err
	}
	if job.Layout == NHWC {
		s, ok := b.(LayoutSetter)
		if !ok {
			return fmt.Errorf("the %s backend measures NCHW only, not %s", b.Device().Backend, job.Layout)
		}
		if err := s.SetLayout(job.Layout); err != nil {
			return err
		}
	}
	if job.L2 != "" {
		s, ok := b.(L2Setter)
		if !ok {
			return fmt.Errorf("the %s backend has no L2 timing modes (asked for %s)", b.Device().Backend, job.L2)
		}
		if err := s.SetL2Mode(job.L2); err != nil {
			return err
		}
	}
	if f, ok := b.(Finisher); ok && sink.Warning != nil {
		defer func() {
			if w := f.Finish(); w != "" {
				sink.Warning(w)
			}
		}()
	}
	deviceKey := LayoutKey(b.Device().Key, job.Layout)
	oomAt := map[string]int{} // configuration key → smallest batch that did not fit
	mon, _ := b.(Monitor)
	for i, it := range job.Items {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sink.Starting != nil {
			if err := sink.Starting(i); err != nil {
				return err
			}
		}
		key := it.Config.Key()
		prec := it.KernelPrecision(job.Precision)
		var m measure.Measurement
		if limit, ok := oomAt[key]; ok && it.Batch >= limit {
			m = measure.Measurement{
				ConfigKey: key, Batch: it.Batch, Precision: prec,
				Phase: it.Phase, Policy: job.Policy, Status: measure.OutOfMemory, At: time.Now().UTC(),
			}
		} else {
			var err error
			m, err = b.TimeLayer(ctx, it.Config, it.Batch, it.Phase, prec, job.Policy, job.Repeats)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				err = fmt.Errorf("measure %s at batch %d (%s): %w", key, it.Batch, it.Phase, err)
				if sink.Failed == nil {
					return err
				}
				f := Failure{Index: i, Item: it, Reason: err.Error(), Sticky: errors.Is(err, ErrSticky), Install: IsInstallFault(err)}
				if ferr := sink.Failed(f); ferr != nil {
					return ferr
				}
				if f.Sticky {
					return err
				}
				continue
			}
			if m.Status == measure.OutOfMemory {
				if limit, ok := oomAt[key]; !ok || it.Batch < limit {
					oomAt[key] = it.Batch
				}
			}
		}
		m.DeviceKey = deviceKey
		if err := sink.Measured(m); err != nil {
			return err
		}
		if mon != nil && sink.Warning != nil {
			if w := mon.Check(); w != "" {
				sink.Warning(w)
			}
		}
	}
	return nil
}

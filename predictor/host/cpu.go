package host

import "fmt"

// CPU is a machine's host processor: its model, base and (single-core) turbo clock,
// GHz (0: not published), and where the figures come from. Assumed is set when the
// catalog does not name the machine's CPU and ReferenceCPU stands in for it.
type CPU struct {
	Model    string  `json:"model"`
	BaseGHz  float64 `json:"base_ghz,omitempty"`
	TurboGHz float64 `json:"turbo_ghz,omitempty"`
	Source   string  `json:"source"`
	Assumed  bool    `json:"assumed,omitempty"`
	// MeasuredSpeed, when positive, is Speed measured on this computer (its loader
	// rate per worker over the reference CPU's), and LoaderImagesPerWorker the rate
	// measured: a local machine's CPU after scripts/dataloader_rate.py.
	MeasuredSpeed         float64 `json:"measured_speed,omitempty"`
	LoaderImagesPerWorker float64 `json:"loader_images_per_worker,omitempty"`
}

// ReferenceCPU is the CPU the loader rates are fitted on: DLPerf's V100 servers (2 ×
// Intel Xeon Gold 5118, 2.3 GHz base, 3.2 GHz turbo; Intel ARK), where one DataLoader
// worker delivered 134 ImageNet images/s (predictor/pipeline.WorkerImagesPerS). A
// machine whose CPU is unknown (a bare --gpu, a provider that does not say) is taken to
// have it, and says so.
var ReferenceCPU = CPU{Model: "Intel Xeon Gold 5118", BaseGHz: 2.3, TurboGHz: 3.2,
	Source: "ASSUMED: the loader model's reference CPU (DLPerf's V100 servers; Intel ARK: 2.3 GHz base, 3.2 GHz turbo)", Assumed: true}

// Family is the CPU's family as FamilyOf tells it from the model's name; ok is false
// when the name is no family's (its core is then scaled by its clock alone).
func (c CPU) Family() (Family, bool) { return FamilyOf(c.Model) }

// Speed is how fast one of the CPU's cores runs the DataLoader's work (JPEG decode and
// augmentation) relative to ReferenceCPU's: the measured ratio where this computer
// measured one (MeasuredSpeed); else its family's measured core (Family.CoreSpeed);
// else its turbo clock over the reference's, the per-clock work taken equal to the
// reference family's (the families the loader model was fitted and checked on); else,
// with no clock, its family's default (Family.DefaultSpeed), or 1.
func (c CPU) Speed() float64 {
	if c.MeasuredSpeed > 0 {
		return c.MeasuredSpeed
	}
	f, known := c.Family()
	if known && f.CoreSpeed() > 0 {
		return f.CoreSpeed()
	}
	if c.TurboGHz > 0 {
		return c.TurboGHz / ReferenceCPU.TurboGHz
	}
	if known && f.DefaultSpeed > 0 {
		return f.DefaultSpeed
	}
	return 1
}

// String names the CPU for a result line: "Intel Xeon Platinum 8259CL (3.5 GHz turbo)",
// with "assumed" where it stands in for an unknown one.
func (c CPU) String() string {
	s := c.Model
	if c.TurboGHz > 0 {
		s += fmt.Sprintf(" (%g GHz turbo)", c.TurboGHz)
	}
	if c.Assumed {
		s += ", assumed"
	}
	return s
}

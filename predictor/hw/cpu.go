package hw

import (
	"fmt"
	"strings"
)

// CPUsFile is the catalog file of the instances' host CPUs.
const CPUsFile = "cpus.csv"

var cpuColumns = []string{"machine", "cpu", "base_ghz", "turbo_ghz", "source"}

// CPU is a machine's host processor: its model, base and (single-core) turbo clock,
// GHz, and where the figures come from. Assumed is set when the catalog does not name
// the machine's CPU and ReferenceCPU stands in for it.
type CPU struct {
	Model    string  `json:"model"`
	BaseGHz  float64 `json:"base_ghz"`
	TurboGHz float64 `json:"turbo_ghz"`
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

// Speed is how fast one of the CPU's cores decodes images relative to ReferenceCPU's:
// the measured ratio where there is one (MeasuredSpeed), else the ratio of their turbo
// clocks (a busy loader worker runs at its core's turbo). The cores' work per clock
// differs by generation too; only a measurement sees that.
func (c CPU) Speed() float64 {
	if c.MeasuredSpeed > 0 {
		return c.MeasuredSpeed
	}
	if !(c.TurboGHz > 0) {
		return 1
	}
	return c.TurboGHz / ReferenceCPU.TurboGHz
}

// String names the CPU for a result line: "Intel Xeon Platinum 8259CL (3.5 GHz)",
// with "assumed" where it stands in for an unknown one.
func (c CPU) String() string {
	s := fmt.Sprintf("%s (%g GHz turbo)", c.Model, c.TurboGHz)
	if c.Assumed {
		s += ", assumed"
	}
	return s
}

// ParseCPUs reads the CPU file against the catalog: every row names a catalog machine
// once, with a CPU model, positive clocks (turbo at least base) and a source. It fills
// each listed machine's CPU in c.
func ParseCPUs(data []byte, c *Catalog) error {
	t, err := readTable(CPUsFile, data, cpuColumns)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range t.rows {
		id, err := r.required("machine")
		if err != nil {
			return err
		}
		key := strings.ToLower(id)
		if seen[key] {
			return r.errorf("machine", "%q is listed twice", id)
		}
		seen[key] = true
		var cpu CPU
		if cpu.Model, err = r.required("cpu"); err != nil {
			return err
		}
		if cpu.BaseGHz, err = r.number("base_ghz"); err != nil {
			return err
		}
		if cpu.TurboGHz, err = r.number("turbo_ghz"); err != nil {
			return err
		}
		if !(cpu.BaseGHz > 0) || cpu.TurboGHz < cpu.BaseGHz || cpu.TurboGHz > 10 {
			return r.errorf("turbo_ghz", "clocks %g/%g GHz: give a positive base and a turbo at least as high (below 10 GHz)", cpu.BaseGHz, cpu.TurboGHz)
		}
		if cpu.Source, err = r.required("source"); err != nil {
			return err
		}
		if err := c.setCPU(id, cpu); err != nil {
			return r.errorf("machine", "%q is not in %s", id, MachinesFile)
		}
	}
	return nil
}

// setCPU sets the CPU of the catalog machine id.
func (c *Catalog) setCPU(id string, cpu CPU) error {
	i, ok := c.machIndex[strings.ToLower(strings.TrimSpace(id))]
	if !ok {
		return fmt.Errorf("no machine %q", id)
	}
	c.machines[i].CPU = &cpu
	return nil
}

package hw

import (
	"fmt"
	"strings"

	"cnntime/predictor/host"
)

// CPUsFile is the catalog file of the instances' host CPUs.
const CPUsFile = "cpus.csv"

var cpuColumns = []string{"machine", "cpu", "base_ghz", "turbo_ghz", "source"}

// ParseCPUs reads the CPU file against the catalog: every row names a catalog machine
// once, with a CPU model, its clocks where published (both empty when not: a family
// measured as a whole needs none, predictor/host) and a source. It fills each listed
// machine's CPU in c.
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
		var cpu host.CPU
		if cpu.Model, err = r.required("cpu"); err != nil {
			return err
		}
		if cpu.BaseGHz, err = r.number("base_ghz"); err != nil {
			return err
		}
		if cpu.TurboGHz, err = r.number("turbo_ghz"); err != nil {
			return err
		}
		if (cpu.BaseGHz > 0 || cpu.TurboGHz > 0) && (!(cpu.BaseGHz > 0) || cpu.TurboGHz < cpu.BaseGHz || cpu.TurboGHz > 10) {
			return r.errorf("turbo_ghz", "clocks %g/%g GHz: give a positive base and a turbo at least as high (below 10 GHz), or leave both empty when they are not published", cpu.BaseGHz, cpu.TurboGHz)
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
func (c *Catalog) setCPU(id string, cpu host.CPU) error {
	i, ok := c.machIndex[strings.ToLower(strings.TrimSpace(id))]
	if !ok {
		return fmt.Errorf("no machine %q", id)
	}
	c.machines[i].CPU = &cpu
	return nil
}

package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"cnntime/app/prices"
	"cnntime/app/shipped"
	"cnntime/db"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/pipeline"
)

// LoadCatalog returns the embedded GPU and cloud machine catalog (package shipped),
// parsed and validated the first time it is asked for. The catalog is shared and
// read-only.
func LoadCatalog() (*hw.Catalog, error) { return shipped.Catalog() }

// Machines returns every machine the user can compare: the catalog's joined with the
// cloud prices imported into the cache (every imported instance type whose GPU cnntime
// can predict is a machine; see hw.Catalog.WithOffers), with the user's price overrides
// applied, then the user's own machines (see hw.MergeMachines), then the devices
// measured in the cache (local/cpu after a CPU sweep, local/<GPU id> after a GPU sweep
// or an import). Each is priced at its cheapest region's on-demand price and aged
// (price_age_days). With a nil cache it returns the shipped catalog alone.
func Machines(ctx context.Context, d *db.DB) ([]hw.Machine, error) {
	return MachinesPriced(ctx, d, hw.PriceChoice{})
}

// MachinesPriced is Machines with the price the choice asks for (a region, spot): a
// machine without such a price comes back unpriced, its PriceNote saying why.
func MachinesPriced(ctx context.Context, d *db.DB, choice hw.PriceChoice) ([]hw.Machine, error) {
	all, _, err := machinesWithLocal(ctx, d)
	if err != nil {
		return nil, err
	}
	now := today()
	for i := range all {
		all[i] = all[i].Priced(choice).Aged(now)
	}
	return all, nil
}

// PriceMachine is m with the price the choice asks for (see hw.Machine.Priced), aged
// as of today: what a view shows of a machine's price under the Run tab's choice.
func PriceMachine(m hw.Machine, choice hw.PriceChoice) hw.Machine {
	return m.Priced(choice).Aged(today())
}

// machinesWithLocal is Machines, and the measured devices behind its local machines.
func machinesWithLocal(ctx context.Context, d *db.DB) ([]hw.Machine, []localMachine, error) {
	c, err := LoadCatalog()
	if err != nil {
		return nil, nil, err
	}
	now := today()
	aged := func(all []hw.Machine) []hw.Machine {
		for i := range all {
			all[i] = all[i].Priced(hw.PriceChoice{}).Aged(now)
		}
		return all
	}
	if d == nil {
		return aged(c.Merge(nil, nil)), nil, nil
	}
	user, err := d.UserMachines(ctx)
	if err != nil {
		return nil, nil, err
	}
	overrides, err := d.PriceOverrides(ctx)
	if err != nil {
		return nil, nil, err
	}
	local, err := localMachines(ctx, d, overrides)
	if err != nil {
		return nil, nil, err
	}
	// Only offers whose accelerator cnntime can predict become machines: the others'
	// rows are not read (the prices command lists them).
	offers, sources, err := prices.Imported(ctx, d, hw.PredictableAccelerators())
	if err != nil {
		return nil, nil, err
	}
	base, _ := c.WithOffers(offers, sources)
	all := hw.MergeMachines(base, user, overrides)
	for _, lm := range local {
		all = append(all, lm.machine)
	}
	if cpu, ok, err := measuredCPU(ctx, d); err != nil {
		return nil, nil, err
	} else if ok {
		for i := range all {
			if thisComputer(all[i]) {
				c := cpu
				all[i].CPU = &c
			}
		}
		for i := range local {
			c := cpu
			local[i].machine.CPU = &c
		}
	}
	return aged(all), local, nil
}

// OnThisComputer reports whether the machine id is this computer: the workstation
// cnntime detected, or a device measured here (local/…). Instances do not multiply it.
func OnThisComputer(id string) bool {
	return strings.EqualFold(id, hw.WorkstationID) || strings.HasPrefix(strings.ToLower(id), hw.LocalProvider+"/")
}

// thisComputer reports whether m is this computer: the workstation cnntime detected,
// or a device measured here (local/…).
func thisComputer(m hw.Machine) bool {
	return strings.EqualFold(m.ID, hw.WorkstationID) || m.Provider == hw.LocalProvider
}

// measuredCPU is this computer's CPU as its measured DataLoader rate describes it
// (scripts/dataloader_rate.py --csv, imported with cache import); ok is false when the
// cache holds none.
func measuredCPU(ctx context.Context, d *db.DB) (host.CPU, bool, error) {
	rates, err := d.LoaderRates(ctx)
	if err != nil {
		return host.CPU{}, false, err
	}
	for _, r := range rates {
		if r.Loader != string(pipeline.PyTorch) {
			continue
		}
		model := r.CPU
		if model == "" {
			model = "this computer's CPU"
		}
		where := r.Host
		if where == "" {
			where = "this computer"
		}
		return host.CPU{Model: model, MeasuredSpeed: r.ImagesPerS / pipeline.WorkerImagesPerS, LoaderImagesPerWorker: r.ImagesPerS,
			Source: fmt.Sprintf("MEASURED: scripts/dataloader_rate.py on %s, %s: %.0f images/s per DataLoader worker on its own core (the loader model's reference CPU: %.0f), imported from %s",
				where, r.MeasuredAt.Format("2006-01-02"), r.ImagesPerS, pipeline.WorkerImagesPerS, strings.TrimPrefix(r.Source, "csv:"))}, true, nil
	}
	return host.CPU{}, false, nil
}

// MachineSpec is what the user gives for a machine of their own.
type MachineSpec struct {
	Name      string  // "Lab box"; the id becomes user/lab-box
	GPUID     string  // a catalog GPU id
	GPUCount  int     // at least 1
	PriceUSD  float64 // per hour: cloud price, or electricity and wear for one's own
	VCPUs     int     // 0: unknown
	MemoryGiB float64 // 0: unknown
	Region    string
	Notes     string
	// CPUModel names the host CPU ("AMD EPYC 9354"; "": unknown, a reference core
	// stands in) and CPUTurboGHz its turbo clock (0: unknown). They set the loader's
	// per-core rate (predictor/host) as cpus.csv does for catalog machines.
	CPUModel    string
	CPUTurboGHz float64
}

// UserMachine is the machine spec describes, checked against the catalog (its GPU, its
// counts, its price, its CPU): what AddUserMachine stores, without a cache.
func (spec MachineSpec) UserMachine() (hw.Machine, error) {
	c, err := LoadCatalog()
	if err != nil {
		return hw.Machine{}, err
	}
	id, err := hw.UserMachineID(spec.Name)
	if err != nil {
		return hw.Machine{}, err
	}
	m := hw.Machine{
		ID: id, Provider: hw.UserProvider, Instance: strings.TrimSpace(spec.Name), GPUID: strings.ToLower(strings.TrimSpace(spec.GPUID)),
		GPUCount: spec.GPUCount, VCPUs: spec.VCPUs, MemoryGiB: spec.MemoryGiB, Region: spec.Region,
		PriceUSDPerHour: spec.PriceUSD, PriceSource: userPriceSource(), Notes: spec.Notes,
		User: true, Listing: hw.ListingUser,
	}
	if model := strings.TrimSpace(spec.CPUModel); model != "" || spec.CPUTurboGHz != 0 {
		m.CPU = hw.UserCPU(model, spec.CPUTurboGHz)
	}
	if err := c.CheckUserMachine(m); err != nil {
		return hw.Machine{}, err
	}
	return m, nil
}

// AddUserMachine validates spec and stores it as a new user machine. A bad spec, or a
// name already used, is an error and the cache is left as it was.
func AddUserMachine(ctx context.Context, d *db.DB, spec MachineSpec) (hw.Machine, error) {
	m, err := spec.UserMachine()
	if err != nil {
		return hw.Machine{}, err
	}
	id := m.ID
	if _, found, err := userMachine(ctx, d, id); err != nil {
		return hw.Machine{}, err
	} else if found {
		return hw.Machine{}, fmt.Errorf("there is already a machine %s; remove it first (cnntime machine remove %s) or choose another name", id, id)
	}
	if err := d.PutUserMachine(ctx, m); err != nil {
		return hw.Machine{}, err
	}
	return m, nil
}

// SetMachinePrice sets the price per hour of a machine: for a catalog machine it
// stores an override (shown as such, undone by ResetMachinePrice); for a user machine
// it changes the machine's own price. It returns the machine as it now is.
func SetMachinePrice(ctx context.Context, d *db.DB, id string, usdPerHour float64) (hw.Machine, error) {
	if err := hw.CheckPrice(usdPerHour); err != nil {
		return hw.Machine{}, err
	}
	if m, found, err := cloudMachine(ctx, d, id); err != nil {
		return hw.Machine{}, err
	} else if found {
		if err := d.SetPriceOverride(ctx, m.ID, usdPerHour); err != nil {
			return hw.Machine{}, err
		}
		m.CatalogPrice, m.PriceUSDPerHour, m.PriceOverridden, m.PriceKind = m.PriceUSDPerHour, usdPerHour, true, hw.UserPrice
		return m, nil
	}
	if m, found, err := findLocalMachine(ctx, d, id); err != nil {
		return hw.Machine{}, err
	} else if found {
		if err := d.SetPriceOverride(ctx, m.ID, usdPerHour); err != nil {
			return hw.Machine{}, err
		}
		priceLocal(&m, map[string]float64{m.ID: usdPerHour})
		return m, nil
	}
	m, found, err := userMachine(ctx, d, id)
	if err != nil {
		return hw.Machine{}, err
	}
	if !found {
		return hw.Machine{}, unknownMachine(ctx, d, id)
	}
	m.PriceUSDPerHour, m.PriceSource = usdPerHour, userPriceSource()
	if err := d.PutUserMachine(ctx, m); err != nil {
		return hw.Machine{}, err
	}
	return m, nil
}

// ResetMachinePrice drops the user's price override of a catalog machine, going back
// to the catalog's price, or the user's price of a local machine, whose cost is then
// unknown; it returns the machine as it now is.
func ResetMachinePrice(ctx context.Context, d *db.DB, id string) (hw.Machine, error) {
	if m, found, err := findLocalMachine(ctx, d, id); err != nil {
		return hw.Machine{}, err
	} else if found {
		if err := d.ClearPriceOverride(ctx, m.ID); err != nil {
			if errors.Is(err, db.ErrNotFound) {
				return hw.Machine{}, fmt.Errorf("%s has no price set: its cost is unknown already", m.ID)
			}
			return hw.Machine{}, err
		}
		priceLocal(&m, nil)
		return m, nil
	}
	m, found, err := cloudMachine(ctx, d, id)
	if err != nil {
		return hw.Machine{}, err
	}
	if !found {
		if _, found, uerr := userMachine(ctx, d, id); uerr == nil && found {
			return hw.Machine{}, fmt.Errorf("%s is your own machine: it has no catalog price to go back to; set its price with 'cnntime machine set-price %s USD'", id, id)
		}
		return hw.Machine{}, unknownMachine(ctx, d, id)
	}
	if err := d.ClearPriceOverride(ctx, m.ID); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return hw.Machine{}, fmt.Errorf("the price of %s is not overridden: it is the catalog's $%.4g/h already", m.ID, m.PriceUSDPerHour)
		}
		return hw.Machine{}, err
	}
	return m, nil
}

// RemoveUserMachine deletes one of the user's own machines. Catalog machines cannot
// be removed.
func RemoveUserMachine(ctx context.Context, d *db.DB, id string) error {
	if m, found, err := cloudMachine(ctx, d, id); err != nil {
		return err
	} else if found {
		return fmt.Errorf("%s is a catalog machine and cannot be removed; only your own machines (user/...) can", m.ID)
	}
	if m, found, err := findLocalMachine(ctx, d, id); err != nil {
		return err
	} else if found {
		return fmt.Errorf("%s is a device measured in the cache and cannot be removed as a machine: it is listed as long as the cache holds its measurements", m.ID)
	}
	m, found, err := userMachine(ctx, d, id)
	if err != nil {
		return err
	}
	if !found {
		return unknownMachine(ctx, d, id)
	}
	return d.RemoveUserMachine(ctx, m.ID)
}

// cloudMachine finds a cloud machine by id (case-insensitive): the shipped catalog's or
// one imported with SkyPilot's prices, without the user's price override.
func cloudMachine(ctx context.Context, d *db.DB, id string) (hw.Machine, bool, error) {
	c, err := LoadCatalog()
	if err != nil {
		return hw.Machine{}, false, err
	}
	var offers []hw.CloudOffer
	var sources map[string]hw.PriceSource
	if d != nil {
		if offers, sources, err = prices.Imported(ctx, d, hw.PredictableAccelerators()); err != nil {
			return hw.Machine{}, false, err
		}
	}
	base, _ := c.WithOffers(offers, sources)
	for _, m := range base {
		if strings.EqualFold(m.ID, strings.TrimSpace(id)) {
			return m.Priced(hw.PriceChoice{}).Aged(today()), true, nil
		}
	}
	return hw.Machine{}, false, nil
}

// userMachine finds a user machine by id (case-insensitive).
func userMachine(ctx context.Context, d *db.DB, id string) (hw.Machine, bool, error) {
	user, err := d.UserMachines(ctx)
	if err != nil {
		return hw.Machine{}, false, err
	}
	for _, m := range user {
		if strings.EqualFold(m.ID, strings.TrimSpace(id)) {
			return m, true, nil
		}
	}
	return hw.Machine{}, false, nil
}

// unknownMachine is the error for an id that is neither in the catalog nor the
// user's, suggesting the closest of both.
func unknownMachine(ctx context.Context, d *db.DB, id string) error {
	var ids []string
	if all, err := Machines(ctx, d); err == nil {
		for _, m := range all {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return &hw.UnknownIDError{Kind: "machine", ID: id, Suggestions: hw.Closest(id, ids, 3)}
}

func userPriceSource() string {
	return "set by the user on " + today().Format(time.DateOnly)
}

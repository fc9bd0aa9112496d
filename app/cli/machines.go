package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor/hw"
)

func machineCommands(register func(Command)) {
	register(Command{
		Name:    "machines",
		Summary: "list the GPUs and machines (catalog, your own, price overrides)",
		Usage:   "machines [--json] [--provider NAME] [--gpu ID] [--region R] [--spot] [--max-price USD] [--has-spot]",
		Run:     runMachines,
	})
	register(Command{
		Name:    "machine",
		Summary: "add, price or remove your own machines; override catalog prices",
		Usage: "machine add --name NAME --gpu ID [--count N] --price USD [--vcpus N] [--memory GiB]\n" +
			"        [--cpu MODEL [--cpu-ghz GHZ]] [--region R] [--notes TEXT]\n" +
			"       cnntime machine set-price ID USD\n" +
			"       cnntime machine reset-price ID\n" +
			"       cnntime machine remove ID\n" +
			"       cnntime machine detect [--json]",
		Run: runMachine,
	})
}

// machinesArgument is the usage error for an argument given to 'machines', which takes
// none: it points at what was likely meant, a 'machine' subcommand or a filter flag.
func machinesArgument(arg string) error {
	switch arg {
	case "add", "set-price", "reset-price", "remove", "detect":
		return Usagef("unexpected argument %q: 'machines' lists; to %s, run 'cnntime machine %s' (see 'cnntime help machine')", arg, strings.ReplaceAll(arg, "-", " "), arg)
	}
	if c, err := app.LoadCatalog(); err == nil {
		for _, g := range c.GPUs() {
			if strings.EqualFold(g.ID, arg) {
				return Usagef("unexpected argument %q: for the machines with that GPU, run 'cnntime machines --gpu %s'", arg, g.ID)
			}
		}
		for _, m := range c.Machines() {
			if strings.EqualFold(m.Provider, arg) {
				return Usagef("unexpected argument %q: for that provider's machines, run 'cnntime machines --provider %s'", arg, m.Provider)
			}
		}
	}
	return Usagef("unexpected argument %q: 'machines' takes flags only (see 'cnntime help machines')", arg)
}

// machinesJSON is the --json form of 'cnntime machines'.
type machinesJSON struct {
	GPUs     []hw.GPU     `json:"gpus"`
	Machines []hw.Machine `json:"machines"`
}

func runMachines(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["machines"])
	provider := fs.String("provider", "", "only machines of this provider (aws, gcp, azure, lambda, runpod, user)")
	gpu := fs.String("gpu", "", "only machines with this GPU id (e.g. v100-sxm2-16gb), and only that GPU")
	region := fs.String("region", "", "price the machines in this region (default: each machine's cheapest)")
	spot := fs.Bool("spot", false, "show spot prices instead of on-demand ones")
	maxPrice := fs.String("max-price", "", "only machines priced at most this many US dollars per hour")
	hasSpot := fs.Bool("has-spot", false, "only machines with a spot price in some region")
	if err := checkFlagValues(fs, args); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return machinesArgument(fs.Arg(0))
	}
	limit := -1.0
	if *maxPrice != "" {
		p, err := hw.ParsePrice(*maxPrice)
		if err != nil {
			return Usagef("--max-price: %v", err)
		}
		limit = p
	}
	c, err := app.LoadCatalog()
	if err != nil {
		return err
	}
	if *gpu != "" {
		g, err := c.GPU(*gpu)
		if err != nil {
			return Usagef("--gpu: %v", err)
		}
		*gpu = g.ID
	}
	machines, err := machinesFromCache(env, hw.PriceChoice{Region: strings.TrimSpace(*region), Spot: *spot})
	if err != nil {
		return err
	}
	if strings.EqualFold(*provider, hw.UserProvider) && !hasProvider(machines, *provider) && !env.JSON {
		// A provider with none yet, not a mistake: say so, and how to add one.
		fmt.Fprintln(env.Stdout, "no machines of your own yet: add one with 'cnntime machine add --name NAME --gpu ID --price USD' (or 'cnntime machine detect' for this computer)")
		return nil
	}
	if *provider != "" && !strings.EqualFold(*provider, hw.UserProvider) && !hasProvider(machines, *provider) {
		return Usagef("--provider: no machines of provider %q%s", *provider, app.Suggest(*provider, append(c.Providers(), hw.UserProvider)))
	}
	var shown []hw.Machine
	for _, m := range machines {
		if (*provider == "" || strings.EqualFold(m.Provider, *provider)) && (*gpu == "" || m.GPUID == *gpu) &&
			(limit < 0 || (m.PriceUSDPerHour > 0 && m.PriceUSDPerHour <= limit)) && (!*hasSpot || m.HasSpot()) {
			shown = append(shown, m)
		}
	}
	gpus := c.GPUs()
	if *gpu != "" {
		g, _ := c.GPU(*gpu)
		gpus = []hw.GPU{g}
	}
	if env.JSON {
		if shown == nil {
			shown = []hw.Machine{}
		}
		return WriteJSON(env.Stdout, machinesJSON{GPUs: gpus, Machines: shown})
	}
	return writeMachineTables(env, gpus, shown)
}

// machinesFromCache merges the catalog with the cache's imported prices, user machines
// and overrides, priced as choice asks; a cache that does not exist yet holds none, and
// is not created just to list. A region no machine is priced in is a usage error.
func machinesFromCache(env *Env, choice hw.PriceChoice) ([]hw.Machine, error) {
	var d *db.DB
	if _, err := os.Stat(env.DBPath); !errors.Is(err, os.ErrNotExist) {
		if d, err = env.Cache(); err != nil {
			return nil, err
		}
	}
	machines, err := app.MachinesPriced(env.Ctx, d, choice)
	if err != nil || choice.Region == "" {
		return machines, err
	}
	var regions []string
	for _, m := range machines {
		if strings.EqualFold(m.Region, choice.Region) {
			return machines, nil
		}
		for _, r := range m.Regions {
			if strings.EqualFold(r.Region, choice.Region) {
				return machines, nil
			}
			regions = append(regions, r.Region)
		}
		regions = append(regions, m.Region)
	}
	return nil, Usagef("--region: no machine has a price in region %q%s", choice.Region, app.SuggestRegion(choice.Region, regions))
}

func hasProvider(ms []hw.Machine, provider string) bool {
	for _, m := range ms {
		if strings.EqualFold(m.Provider, provider) {
			return true
		}
	}
	return false
}

func writeMachineTables(env *Env, gpus []hw.GPU, machines []hw.Machine) error {
	t := app.NewTable(env.Stdout, "GPU", "NAME", "ARCH", "SMS", "FP32", "TF32", "FP16", "MEMORY", "BANDWIDTH", "LINK")
	for _, g := range gpus {
		t.Row(g.ID, g.Name, g.Architecture, count(g.SMs), tflops(g.FP32TFLOPS), tflops(g.TF32TFLOPS), tflops(g.FP16TFLOPS),
			unit(g.MemoryGB, "GB")+" "+g.MemoryType, unit(g.MemoryBandwidthGBs, "GB/s"), link(g))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout)
	t = app.NewTable(env.Stdout, "MACHINE", "GPU", "COUNT", "VCPUS", "RAM", "PRICE/H", "KIND", "SPOT/H", "PRICE DATE", "AGE", "REGION", "REGIONS", "LISTING")
	for _, m := range machines {
		t.Row(m.ID, m.GPUID, strconv.Itoa(m.GPUCount), count(m.VCPUs), unit(m.MemoryGiB, "GiB"), price(m), dash(string(m.PriceKind)),
			spotPrice(m), dash(m.PriceDate), ageCell(m), dash(m.Region), count(len(m.Regions)), string(m.Listing))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\n%d GPUs, %d machines. '-' is unknown; * is your price override; OLD is a price older than %d days.\n"+
		"Prices' sources and every region's prices: cnntime machines --json; where prices come from: cnntime prices\n", len(gpus), len(machines), hw.StalePriceDays)
	return nil
}

func spotPrice(m hw.Machine) string {
	if m.SpotPriceUSDPerHour == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4g", m.SpotPriceUSDPerHour)
}

// ageCell is a price's age in days, OLD beyond hw.StalePriceDays.
func ageCell(m hw.Machine) string {
	if m.PriceAgeDays == nil {
		return "-"
	}
	s := strconv.Itoa(*m.PriceAgeDays) + "d"
	if m.PriceStale {
		s += " OLD"
	}
	return s
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func tflops(x float64) string { return unit(x, "") }

func unit(x float64, u string) string {
	if x == 0 {
		return "-"
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if u == "" {
		return s
	}
	return s + " " + u
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func link(g hw.GPU) string {
	if g.InterconnectGBs == 0 {
		return "-"
	}
	return fmt.Sprintf("%s %g GB/s", g.Interconnect, g.InterconnectGBs)
}

func price(m hw.Machine) string {
	if m.PriceUSDPerHour == 0 && m.Listing == hw.ListingUnpriced {
		return "-"
	}
	s := fmt.Sprintf("$%.4g", m.PriceUSDPerHour)
	if m.PriceOverridden {
		s += "*"
	}
	return s
}

func runMachine(env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("say what to do: add, set-price, reset-price, remove or detect")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fs := env.Flags(commandIndex()["machine"])
		return fs.Parse([]string{"-h"})
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "add":
		return runMachineAdd(env, rest)
	case "set-price":
		return withIDArgs(env, sub, rest, 2, func(d *db.DB, a []string) error {
			usd, err := hw.ParsePrice(a[1])
			if err != nil {
				return Usagef("%v", err)
			}
			m, err := app.SetMachinePrice(env.Ctx, d, a[0], usd)
			if err != nil {
				return err
			}
			if m.PriceUSDPerHour == 0 {
				return report(env, m, "price of %s is now none (0): %s", m.ID, noPriceNote)
			}
			return report(env, m, "price of %s is now $%g/h", m.ID, m.PriceUSDPerHour)
		})
	case "reset-price":
		return withIDArgs(env, sub, rest, 1, func(d *db.DB, a []string) error {
			m, err := app.ResetMachinePrice(env.Ctx, d, a[0])
			if err != nil {
				return err
			}
			return report(env, m, "price of %s is back to the catalog's $%g/h (%s)", m.ID, m.PriceUSDPerHour, dash(m.PriceDate))
		})
	case "remove":
		return withIDArgs(env, sub, rest, 1, func(d *db.DB, a []string) error {
			if err := app.RemoveUserMachine(env.Ctx, d, a[0]); err != nil {
				return err
			}
			if env.JSON {
				return WriteJSON(env.Stdout, map[string]string{"removed": a[0]})
			}
			fmt.Fprintf(env.Stdout, "removed %s\n", a[0])
			return nil
		})
	case "detect":
		return withIDArgs(env, sub, rest, 0, func(d *db.DB, _ []string) error {
			m, det, err := app.DetectWorkstation(env.Ctx, d)
			if err != nil {
				return err
			}
			if env.JSON {
				return WriteJSON(env.Stdout, map[string]any{"detection": det, "machine": m})
			}
			fmt.Fprintf(env.Stdout, "%s: %d × %s (found by %s); price $%g/h", m.ID, m.GPUCount, m.GPUID, det.Method, m.PriceUSDPerHour)
			if m.PriceUSDPerHour == 0 {
				fmt.Fprintf(env.Stdout, " (set it: cnntime machine set-price %s USD)", m.ID)
			}
			fmt.Fprintln(env.Stdout)
			if m.CPU != nil {
				fmt.Fprintf(env.Stdout, "host: %s, %d threads, %s\n", m.CPU.Model, m.VCPUs, unit(m.MemoryGiB, "GiB"))
			}
			return nil
		})
	}
	return Usagef("unknown action %q%s: use add, set-price, reset-price, remove or detect", sub, app.Suggest(sub, []string{"add", "set-price", "reset-price", "remove", "detect"}))
}

// withIDArgs parses --json and exactly n positional arguments for a machine action,
// opens the cache and runs fn.
func withIDArgs(env *Env, action string, args []string, n int, fn func(d *db.DB, args []string) error) error {
	fs := env.Flags(commandIndex()["machine"])
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != n {
		want := map[string]string{"set-price": "ID USD", "reset-price": "ID", "remove": "ID", "detect": "no arguments"}[action]
		return Usagef("machine %s takes %s; got %d argument(s)", action, want, fs.NArg())
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	return fn(d, fs.Args())
}

func runMachineAdd(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["machine"])
	name := fs.String("name", "", "the machine's name; its id becomes user/NAME (required)")
	gpu := fs.String("gpu", "", "catalog GPU id, e.g. rtx-3090 (required; see cnntime machines)")
	n := wholeFlag(fs, "count", 1, "number of GPUs")
	priceText := fs.String("price", "", "cost in US dollars per hour (required; 0: no price, its costs show as unknown)")
	vcpus := wholeFlag(fs, "vcpus", 0, "CPU threads (0: unknown)")
	memory := decimalFlag(fs, "memory", 0, "RAM in GiB (0: unknown)")
	region := fs.String("region", "", "where it is (optional)")
	notes := fs.String("notes", "", "a note to keep with it (optional)")
	cpu := fs.String("cpu", "", `its host CPU's model, e.g. "AMD EPYC 9354" (optional: without it a reference core stands in and the band widens)`)
	cpuGHz := decimalFlag(fs, "cpu-ghz", 0, "the CPU's turbo clock in GHz (optional; sets its per-core rate where its family has no measured one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q (flags come as --name NAME --gpu ID --price USD)", fs.Arg(0))
	case *name == "":
		return Usagef("--name is required")
	case *gpu == "":
		return Usagef("--gpu is required (a catalog GPU id; see cnntime machines)")
	case *priceText == "":
		return Usagef("--price is required (US dollars per hour; 0: no price, its costs show as unknown)")
	}
	usd, err := hw.ParsePrice(*priceText)
	if err != nil {
		return Usagef("--price: %v", err)
	}
	switch {
	case *vcpus < 0 || *vcpus > maxVCPUs:
		return Usagef("--vcpus %d: give the machine's CPU threads, 1 to %d (0: unknown)", *vcpus, maxVCPUs)
	case !(*memory >= 0 && *memory <= maxMemoryGiB):
		return Usagef("--memory %g: give the machine's RAM in GiB, up to %d (0: unknown)", *memory, maxMemoryGiB)
	}
	spec := app.MachineSpec{Name: *name, GPUID: *gpu, GPUCount: *n, PriceUSD: usd, VCPUs: *vcpus, MemoryGiB: *memory, Region: *region, Notes: *notes,
		CPUModel: *cpu, CPUTurboGHz: *cpuGHz}
	// Validate before opening the cache, so a bad command line leaves no file behind.
	if err := checkSpec(spec); err != nil {
		return err
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	m, err := app.AddUserMachine(env.Ctx, d, spec)
	if err != nil {
		return err
	}
	return report(env, m, "added %s: %d × %s %s", m.ID, m.GPUCount, m.GPUID, priceSentence(m.PriceUSDPerHour))
}

// The ranges of a user machine's vCPUs and RAM: far above the largest servers (448
// threads and 24 TiB today); more is a typing mistake.
const (
	maxVCPUs     = 4096
	maxMemoryGiB = 65536
)

// priceSentence says what a machine's price per hour means for its costs: a price of 0
// is no price, so its costs show as unknown, not $0 (noPriceNote).
func priceSentence(usd float64) string {
	if usd == 0 {
		return "with no price (0): " + noPriceNote
	}
	return fmt.Sprintf("at $%g/h", usd)
}

// noPriceNote says what a price of 0 means.
const noPriceNote = "its costs show as unknown; give what an hour costs (electricity and wear for your own) to see them"

// checkSpec validates a spec against the catalog without a cache.
func checkSpec(spec app.MachineSpec) error {
	if _, err := hw.UserMachineID(spec.Name); err != nil {
		return Usagef("--name: %v", err)
	}
	if _, err := spec.UserMachine(); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// report prints a machine as JSON, or a one-line message.
func report(env *Env, m hw.Machine, format string, args ...any) error {
	if env.JSON {
		return WriteJSON(env.Stdout, m)
	}
	fmt.Fprintf(env.Stdout, format+"\n", args...)
	return nil
}

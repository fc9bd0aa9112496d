package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/app/pricefeed"
	"cnntime/app/prices"
	"cnntime/predictor/hw"
)

// maxPriceMiB bounds --max-mib: a price catalog is tens of MiB; a limit past 4 GiB is
// no limit (and one past 2^43 MiB overflowed into a negative number of bytes).
const maxPriceMiB = 4096

func priceCommands(register func(Command)) {
	register(Command{
		Name:    "prices",
		Summary: "where the prices come from; import or download SkyPilot's price catalog",
		Usage: "prices [--json]\n" +
			"       cnntime prices import PATH [--cloud NAME] [--date YYYY-MM-DD] [--json]\n" +
			"       cnntime prices update [--url URL] [--clouds aws,gcp,...] [--timeout 60s] [--max-mib 64] [--json]",
		Details: "Prices start as the snapshot shipped with cnntime (assets/catalog/machines.csv). SkyPilot's catalog\n" +
			"(github.com/skypilot-org/skypilot-catalog, catalogs/" + hw.SkyPilotLayout + "/<cloud>/vms.csv, also cached by SkyPilot under\n" +
			"~/.sky/catalogs/" + hw.SkyPilotLayout + ") replaces a cloud's prices with every region's on-demand and spot prices, and adds\n" +
			"every instance type whose GPU cnntime can predict.\n\n" +
			"  prices            the imported clouds, the shipped prices' dates, and the instance types with no\n" +
			"                    performance data\n" +
			"  prices import     read a vms.csv, a cloud's directory or a directory of clouds; all or nothing\n" +
			"  prices update     download each cloud's vms.csv (" + prices.URLEnv + " or --url changes where from); an\n" +
			"                    unchanged file is not downloaded again; a cloud that fails keeps its prices;\n" +
			"                    HTTPS on every redirect; a password in the URL is used, never stored\n\n" +
			"A catalog over " + strconv.Itoa(hw.MaxCatalogRows) + " rows or " + strconv.Itoa(hw.MaxCloudInstanceTypes) + " instance types per cloud, figures no instance has, or a date\n" +
			"in the future or older than the cache's prices is refused, and the prices stay as they were.",
		Run: runPrices,
	})
}

func runPrices(env *Env, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "import":
			return runPricesImport(env, args[1:])
		case "update":
			return runPricesUpdate(env, args[1:])
		}
		return Usagef("unknown action %q%s: use import or update, or nothing to see the prices' sources",
			args[0], app.Suggest(args[0], []string{"import", "update"}))
	}
	fs := env.Flags(commandIndex()["prices"])
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	var st prices.Status
	var err error
	if _, serr := os.Stat(env.DBPath); errors.Is(serr, os.ErrNotExist) {
		st, err = prices.Current(env.Ctx, nil)
	} else {
		d, derr := env.Cache()
		if derr != nil {
			return derr
		}
		st, err = prices.Current(env.Ctx, d)
	}
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, st)
	}
	return writePricesStatus(env, st)
}

func writePricesStatus(env *Env, st prices.Status) error {
	now, _ := time.Parse(time.DateOnly, st.Today)
	age := func(date string) string {
		days, ok := hw.PriceAgeDays(date, now)
		if !ok {
			return "-"
		}
		s := strconv.Itoa(days) + " days"
		if days > hw.StalePriceDays {
			s += " OLD"
		}
		return s
	}
	fmt.Fprintln(env.Stdout, "Imported from SkyPilot's catalog:")
	if len(st.Imported) == 0 {
		fmt.Fprintln(env.Stdout, "  none: the shipped prices are used ('cnntime prices update' downloads current ones)")
	} else {
		t := app.NewTable(env.Stdout, "CLOUD", "PRICES OF", "AGE", "OFFERS", "CHECKED", "SOURCE")
		for _, c := range st.Imported {
			t.Row(c.Cloud, c.PriceDate, age(c.PriceDate), strconv.Itoa(c.Offers), c.CheckedAt.UTC().Format("2006-01-02 15:04"), c.Source)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(env.Stdout, "\nShipped with cnntime (assets/catalog/machines.csv):")
	t := app.NewTable(env.Stdout, "PROVIDER", "MACHINES", "NEWEST PRICE", "AGE", "OLDEST PRICE", "UNDATED")
	for _, s := range st.Shipped {
		t.Row(s.Provider, strconv.Itoa(s.Machines), dash(s.Newest), age(s.Newest), dash(s.Oldest), strconv.Itoa(s.Undated))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(st.NoPerformanceData) > 0 {
		fmt.Fprintf(env.Stdout, "\nNo performance data (%d imported instance types cnntime cannot predict):\n", len(st.NoPerformanceData))
		t := app.NewTable(env.Stdout, "CLOUD", "INSTANCE", "ACCELERATOR", "COUNT", "WHY")
		for _, u := range st.NoPerformanceData {
			t.Row(u.Cloud, u.Instance, u.Accelerator, strconv.FormatFloat(u.AcceleratorCount, 'g', -1, 64), u.Why)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "\nPrices older than %d days are marked OLD. 'cnntime prices update' downloads from %s\n", hw.StalePriceDays, st.URL)
	return nil
}

func runPricesImport(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["prices"])
	cloud := fs.String("cloud", "", "the cloud of a single vms.csv (default: its directory's name, e.g. aws)")
	date := fs.String("date", "", "the day the prices are as of, YYYY-MM-DD (default: the file's modification day)")
	if err := checkFlagValues(fs, args); err != nil {
		return err
	}
	path, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if path == "" && fs.NArg() == 1 {
		path = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return Usagef("unexpected argument %q: prices import takes one PATH", fs.Arg(0))
	}
	if path == "" {
		return Usagef("give a PATH: a vms.csv, a cloud's directory, or a directory of clouds (catalogs/%s, ~/.sky/catalogs)", hw.SkyPilotLayout)
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	rep, err := prices.Import(env.Ctx, d, path, prices.ImportOptions{Cloud: *cloud, Date: *date})
	if err != nil {
		return err
	}
	return writePricesReport(env, rep)
}

func runPricesUpdate(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["prices"])
	base := fs.String("url", prices.URL(), "the catalog's location, holding <cloud>/vms.csv (also "+prices.URLEnv+")")
	clouds := fs.String("clouds", strings.Join(prices.DefaultClouds, ","), "the clouds to download, comma-separated")
	timeout := fs.Duration("timeout", prices.DefaultTimeout, "the longest one download may take")
	maxMiB := wholeFlag(fs, "max-mib", pricefeed.DefaultMaxBytes>>20, "refuse a file larger than this many MiB")
	if err := checkFlagValues(fs, args); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q", fs.Arg(0))
	case *timeout <= 0:
		return Usagef("--timeout %v: must be positive, e.g. 60s", *timeout)
	case *maxMiB <= 0:
		return Usagef("--max-mib %d: must be positive", *maxMiB)
	case *maxMiB > maxPriceMiB:
		return inRange("max-mib", *maxMiB, 1, maxPriceMiB, false, "the largest price file to take, in MiB")
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	rep, err := prices.Update(env.Ctx, d, prices.UpdateOptions{BaseURL: *base, Clouds: splitList(*clouds),
		Timeout: *timeout, MaxBytes: int64(*maxMiB) << 20})
	if werr := writePricesReport(env, rep); werr != nil && err == nil {
		err = werr
	}
	return err
}

// writePricesReport prints what an import or update did, cloud by cloud.
func writePricesReport(env *Env, rep prices.Report) error {
	if env.JSON {
		if rep.Clouds == nil {
			rep.Clouds = []prices.CloudReport{}
		}
		return WriteJSON(env.Stdout, rep)
	}
	if len(rep.Clouds) == 0 {
		return nil
	}
	t := app.NewTable(env.Stdout, "CLOUD", "STATUS", "PRICES OF", "OFFERS", "MACHINES", "NO PERF DATA", "SOURCE / ERROR")
	for _, c := range rep.Clouds {
		what := c.Source
		if c.Error != "" {
			what = c.Error
		}
		t.Row(c.Cloud, c.Status, dash(c.Date), count(c.Offers), count(c.Machines), count(c.NoPerformanceData), what)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "\n'cnntime machines' lists the machines; 'cnntime prices' lists the instance types with no performance data.")
	return nil
}

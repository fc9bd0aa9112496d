package prices

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"cnntime/app/clock"
	"cnntime/app/infile"
	"cnntime/app/inputerr"
	"cnntime/app/pricefeed"
	"cnntime/app/shipped"
	"cnntime/db"
	"cnntime/predictor/hw"
)

// DefaultURL is where `prices update` downloads SkyPilot's catalog from: the
// catalog repository's raw files, one <cloud>/vms.csv under it. URLEnv overrides it.
const DefaultURL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/" + hw.SkyPilotLayout

// URLEnv names the environment variable that replaces DefaultURL.
const URLEnv = "CNNTIME_PRICES_URL"

// DefaultClouds are the clouds `prices update` fetches when none are named.
var DefaultClouds = []string{"aws", "azure", "gcp", "lambda", "runpod"}

// DefaultTimeout bounds each download.
const DefaultTimeout = 60 * time.Second

// CloudReport is what an import or update did for one cloud.
type CloudReport struct {
	Cloud  string `json:"cloud"`
	Source string `json:"source"`
	// Status is "imported" (new prices stored), "unchanged" (the server's copy is the
	// cache's: HTTP 304) or "failed" (Error says why; the cache keeps the cloud's prices).
	Status   string `json:"status"`
	Date     string `json:"date,omitempty"` // the day the prices are as of
	Rows     int    `json:"rows,omitempty"`
	Offers   int    `json:"offers,omitempty"`   // instance types × regions with an accelerator
	Machines int    `json:"machines,omitempty"` // instance types cnntime can predict
	// NoPerformanceData counts the instance types whose accelerator cnntime has no
	// performance data for (listed by `cnntime prices`).
	NoPerformanceData int    `json:"no_performance_data,omitempty"`
	Error             string `json:"error,omitempty"`
}

// Report is an import's or update's report, one entry per cloud.
type Report struct {
	Clouds []CloudReport `json:"clouds"`
}

// Failed lists the clouds whose prices were not stored.
func (r Report) Failed() []CloudReport {
	var out []CloudReport
	for _, c := range r.Clouds {
		if c.Status == "failed" {
			out = append(out, c)
		}
	}
	return out
}

// ImportOptions are an import's settings.
type ImportOptions struct {
	Cloud    string // for a single file: its cloud ("" takes the name of its directory)
	Date     string // YYYY-MM-DD the prices are as of ("" the file's modification day)
	MaxBytes int64  // the largest file read (0: pricefeed.DefaultMaxBytes)
}

// Import reads SkyPilot catalog files and stores their prices, all or nothing:
// every file is read and checked first, and any mistake is an error naming the file
// and line, with the cache unchanged. path is a cloud's vms.csv (its cloud from
// opts.Cloud or its directory's name), a cloud's directory (aws/ holding vms.csv), or
// a directory of clouds (catalogs/v7, or ~/.sky/catalogs whose v7 is used).
func Import(ctx context.Context, d *db.DB, path string, opts ImportOptions) (Report, error) {
	if opts.Date != "" {
		if _, ok := hw.PriceAgeDays(opts.Date, clock.Now()); !ok || len(opts.Date) != len(time.DateOnly) {
			return Report{}, inputerr.Errorf("date %q is not a day such as 2026-11-20", opts.Date)
		}
	}
	files, err := catalogFiles(path, opts.Cloud)
	if err != nil {
		return Report{}, err
	}
	c, err := shipped.Catalog()
	if err != nil {
		return Report{}, err
	}
	var rep Report
	var sets []db.CloudPrices
	for _, f := range files {
		data, mod, err := readLimited(ctx, f.path, opts.MaxBytes)
		if err != nil {
			return Report{}, err
		}
		cat, err := hw.ParseSkyPilotCatalog(f.cloud, f.path, data)
		if err != nil {
			return Report{}, fmt.Errorf("%w; nothing was imported", err)
		}
		date, what := opts.Date, "the date given"
		if date == "" {
			date, what = mod.UTC().Format(time.DateOnly), "its modification day"
		}
		if now := clock.Today().Format(time.DateOnly); date > now {
			return Report{}, inputerr.Errorf("%s: %s, %s, is after today (%s): prices dated in the future never look old; give the day the prices are of (--date YYYY-MM-DD); nothing was imported",
				f.path, what, date, now)
		}
		abs, _ := filepath.Abs(f.path)
		sets = append(sets, db.CloudPrices{
			Catalog: db.PriceCatalog{Cloud: f.cloud, Source: abs, PriceDate: date, ImportedAt: time.Now(), Rows: cat.Rows},
			Offers:  cat.Offers,
		})
		rep.Clouds = append(rep.Clouds, reportOf(c, cat, abs, date, "imported"))
	}
	if err := d.ReplacePrices(ctx, sets); err != nil {
		return Report{}, err
	}
	return rep, nil
}

type catalogFile struct{ cloud, path string }

// catalogFiles finds the vms.csv files path names, with their clouds.
func catalogFiles(path, cloud string) ([]catalogFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	if !st.IsDir() {
		if cloud == "" {
			cloud = filepath.Base(filepath.Dir(path))
			if hw.CheckCloudName(cloud) != nil {
				return nil, inputerr.Errorf("%s: say which cloud its prices are (the directory %q is not a cloud's name): give the cloud, e.g. aws", path, cloud)
			}
		}
		if err := hw.CheckCloudName(cloud); err != nil {
			return nil, inputerr.Errorf("%v", err)
		}
		return []catalogFile{{cloud, path}}, nil
	}
	if cloud != "" {
		return nil, inputerr.Errorf("%s is a directory: its clouds are its sub-directories' names; name a cloud only for a single file", path)
	}
	if v := filepath.Join(path, hw.SkyPilotLayout); isDir(v) {
		path = v // ~/.sky/catalogs or the repository's catalogs/
	}
	if isFile(filepath.Join(path, hw.SkyPilotFile)) {
		name := filepath.Base(path)
		if err := hw.CheckCloudName(name); err != nil {
			return nil, inputerr.Errorf("%s holds a %s but %v", path, hw.SkyPilotFile, err)
		}
		return []catalogFile{{name, filepath.Join(path, hw.SkyPilotFile)}}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	var out []catalogFile
	for _, e := range entries {
		f := filepath.Join(path, e.Name(), hw.SkyPilotFile)
		if e.IsDir() && isFile(f) && hw.CheckCloudName(e.Name()) == nil {
			out = append(out, catalogFile{e.Name(), f})
		}
	}
	if len(out) == 0 {
		return nil, inputerr.Errorf("no SkyPilot catalog in %s: expected %s/<cloud>/%s (as in skypilot-catalog's catalogs/%s or ~/.sky/catalogs/%s)",
			path, path, hw.SkyPilotFile, hw.SkyPilotLayout, hw.SkyPilotLayout)
	}
	return out, nil
}

func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }

// readLimited reads a file of at most max bytes (0: pricefeed.DefaultMaxBytes), until
// ctx ends (a read waiting on a pipe stops then).
func readLimited(ctx context.Context, path string, max int64) ([]byte, time.Time, error) {
	if max <= 0 {
		max = pricefeed.DefaultMaxBytes
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read prices: %w", err)
	}
	data, err := infile.Read(ctx, path, infile.Spec{What: "price catalog", Max: max})
	var large *infile.TooLargeError
	switch {
	case errors.As(err, &large) && st.Mode().IsRegular():
		return nil, time.Time{}, inputerr.Errorf("%s is %d MiB, larger than the limit of %d MiB: not a price catalog", path, st.Size()>>20, max>>20)
	case errors.As(err, &large):
		return nil, time.Time{}, inputerr.Errorf("%s is larger than the limit of %d MiB: not a price catalog", path, max>>20)
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("read prices: %w", err)
	}
	return data, st.ModTime(), nil
}

// reportOf counts what a parsed catalog holds for cnntime.
func reportOf(c *hw.Catalog, cat *hw.SkyPilotCatalog, source, date, status string) CloudReport {
	machines, unknown := c.WithOffers(cat.Offers, map[string]hw.PriceSource{cat.Cloud: {Cloud: cat.Cloud, Source: source, Date: date}})
	n := 0
	for _, m := range machines {
		if len(m.Regions) > 0 {
			n++
		}
	}
	return CloudReport{Cloud: cat.Cloud, Source: source, Status: status, Date: date, Rows: cat.Rows,
		Offers: len(cat.Offers), Machines: n, NoPerformanceData: len(unknown)}
}

// UpdateOptions are a download's settings.
type UpdateOptions struct {
	BaseURL  string        // the catalog's location, holding <cloud>/vms.csv ("" DefaultURL or URLEnv)
	Clouds   []string      // nil: DefaultClouds
	Timeout  time.Duration // per file (0: DefaultTimeout)
	MaxBytes int64         // the largest file accepted (0: pricefeed.DefaultMaxBytes)
	Client   *http.Client  // nil: a new client with the timeout
}

// URL is the catalog location an update uses when none is given.
func URL() string {
	if u := os.Getenv(URLEnv); u != "" {
		return u
	}
	return DefaultURL
}

// Update downloads each cloud's vms.csv and stores the new ones in one
// transaction. A conditional request (the ETag and Last-Modified of the cloud's last
// download) makes an unchanged file a 304 that changes nothing but the check time.
// A cloud whose download or file fails keeps its prices and is reported as failed; the
// error then says which, and that the others were updated. When no server could be
// reached at all the error is an *OfflineError that says so and what prices remain.
func Update(ctx context.Context, d *db.DB, opts UpdateOptions) (Report, error) {
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = strings.TrimRight(URL(), "/")
	}
	clouds := opts.Clouds
	if len(clouds) == 0 {
		clouds = DefaultClouds
	}
	for _, cl := range clouds {
		if err := hw.CheckCloudName(cl); err != nil {
			return Report{}, inputerr.Errorf("%v", err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	c, err := shipped.Catalog()
	if err != nil {
		return Report{}, err
	}
	var rep Report
	var sets []db.CloudPrices
	var unchanged []string
	offline := 0
	for _, cl := range clouds {
		addr := base + "/" + cl + "/" + hw.SkyPilotFile
		shown := pricefeed.Redact(addr) // what is stored and said: never the credentials an address may carry
		prev, err := d.PriceCatalog(ctx, cl)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return Report{}, err
		}
		req := pricefeed.Request{URL: addr, MaxBytes: opts.MaxBytes}
		// The validators of the cache's copy go with a request for the same file; after
		// a redirect the source is where the file came from, and the next download is
		// unconditional.
		if err == nil && prev.Source == shown {
			req.ETag, req.LastModified = prev.ETag, prev.LastModified
		}
		fctx, cancel := context.WithTimeout(ctx, timeout)
		res, err := pricefeed.Fetch(fctx, client, req)
		cancel()
		fail := func(err error) {
			rep.Clouds = append(rep.Clouds, CloudReport{Cloud: cl, Source: shown, Status: "failed", Error: err.Error()})
		}
		var off *pricefeed.OfflineError
		switch {
		case errors.As(err, &off):
			offline++
			fail(err)
			continue
		case err != nil:
			fail(err)
			continue
		case res.NotModified && prev.Cloud == "":
			fail(fmt.Errorf("GET %s: the server answered 304 Not Modified to a request for a file the cache does not have", shown))
			continue
		case res.NotModified:
			unchanged = append(unchanged, cl)
			rep.Clouds = append(rep.Clouds, CloudReport{Cloud: cl, Source: prev.Source, Status: "unchanged", Date: prev.PriceDate, Rows: prev.Rows, Offers: prev.Offers})
			continue
		}
		fetched := res.Date
		if fetched.IsZero() { // no Last-Modified: the prices are as of the day they were fetched
			fetched = clock.Today()
		}
		date := fetched.Format(time.DateOnly)
		if err := checkFeedDate(res.URL, date, prev); err != nil {
			fail(err)
			continue
		}
		cat, err := hw.ParseSkyPilotCatalog(cl, res.URL, res.Body)
		if err != nil {
			fail(err)
			continue
		}
		sets = append(sets, db.CloudPrices{
			Catalog: db.PriceCatalog{Cloud: cl, Source: res.URL, PriceDate: date, ImportedAt: time.Now(), ETag: res.ETag, LastModified: res.LastModified, Rows: cat.Rows},
			Offers:  cat.Offers,
		})
		rep.Clouds = append(rep.Clouds, reportOf(c, cat, res.URL, date, "imported"))
	}
	if err := d.ReplacePrices(ctx, sets); err != nil {
		return Report{}, err
	}
	for _, cl := range unchanged {
		if err := d.MarkPricesChecked(ctx, cl, time.Now()); err != nil {
			return Report{}, err
		}
	}
	failed := rep.Failed()
	switch {
	case len(failed) == 0:
		return rep, nil
	case offline == len(clouds):
		return rep, &OfflineError{Host: hostOf(pricefeed.Redact(base)), Keeping: keptPrices(ctx, d)}
	}
	names := make([]string, len(failed))
	for i, f := range failed {
		names[i] = f.Cloud + " (" + f.Error + ")"
	}
	return rep, fmt.Errorf("the prices of %s were not updated and stay as they were%s", strings.Join(names, "; "), othersNote(len(failed), len(clouds)))
}

// checkFeedDate refuses a downloaded file dated (by its server's Last-Modified) after
// today, which would never age, or before the prices the cache holds of its cloud
// (prev), which it would replace with older ones.
func checkFeedDate(source, date string, prev db.PriceCatalog) error {
	now := clock.Today().Format(time.DateOnly)
	switch {
	case date > now:
		return fmt.Errorf("%s: the server dates the file %s (Last-Modified), after today (%s): a wrong date would keep these prices from ever looking old; nothing was stored", source, date, now)
	case prev.Cloud != "" && date < prev.PriceDate && prev.PriceDate <= now:
		return fmt.Errorf("%s: the file is of %s, older than the %s prices the cache holds (of %s, from %s); the cache keeps the newer ones", source, date, prev.Cloud, prev.PriceDate, prev.Source)
	}
	return nil
}

func othersNote(failed, all int) string {
	if failed == all {
		return ""
	}
	return "; the other clouds' prices were updated"
}

func hostOf(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		addr = addr[i+3:]
	}
	host, _, _ := strings.Cut(addr, "/")
	return host
}

// OfflineError is an update that reached no server: the prices stay as they were.
type OfflineError struct {
	Host    string
	Keeping string // which prices cnntime goes on using
}

func (e *OfflineError) Error() string {
	return fmt.Sprintf("cannot reach %s: this computer seems to be offline. Nothing changed; cnntime keeps using %s. "+
		"Try again when online, or import a copy of the catalog: cnntime prices import DIR", e.Host, e.Keeping)
}

// keptPrices says in words which prices the cache goes on using.
func keptPrices(ctx context.Context, d *db.DB) string {
	cats, err := d.PriceCatalogs(ctx)
	if err != nil || len(cats) == 0 {
		return "the prices shipped with cnntime (" + shippedDates() + ")"
	}
	parts := make([]string, len(cats))
	for i, c := range cats {
		parts[i] = c.Cloud + " " + c.PriceDate
	}
	return "the imported prices (" + strings.Join(parts, ", ") + ") and, for other clouds, the shipped ones"
}

// ShippedDate is one provider's dates in the shipped catalog.
type ShippedDate struct {
	Provider string `json:"provider"`
	Oldest   string `json:"oldest"`
	Newest   string `json:"newest"`
	Undated  int    `json:"undated"` // machines whose price has no date
	Machines int    `json:"machines"`
}

// ShippedDates are the shipped catalog's price dates by provider.
func ShippedDates() []ShippedDate {
	c, err := shipped.Catalog()
	if err != nil {
		return nil
	}
	by := map[string]*ShippedDate{}
	for _, m := range c.Machines() {
		s := by[m.Provider]
		if s == nil {
			s = &ShippedDate{Provider: m.Provider}
			by[m.Provider] = s
		}
		s.Machines++
		switch {
		case m.PriceDate == "":
			s.Undated++
		default:
			if s.Oldest == "" || m.PriceDate < s.Oldest {
				s.Oldest = m.PriceDate
			}
			if m.PriceDate > s.Newest {
				s.Newest = m.PriceDate
			}
		}
	}
	out := make([]ShippedDate, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out
}

func shippedDates() string {
	var parts []string
	for _, s := range ShippedDates() {
		if s.Newest != "" {
			parts = append(parts, s.Provider+" "+s.Newest)
		}
	}
	return "dated " + strings.Join(parts, ", ")
}

// Status is what `cnntime prices` shows: each imported cloud, the shipped
// prices' dates, and the imported instance types cnntime cannot predict.
type Status struct {
	Imported          []db.PriceCatalog       `json:"imported"`
	Shipped           []ShippedDate           `json:"shipped"`
	NoPerformanceData []hw.UnpredictableOffer `json:"no_performance_data"`
	URL               string                  `json:"url"` // where `prices update` downloads from
	Today             string                  `json:"today"`
}

// Prices reports the cache's prices; with a nil cache, only the shipped ones.
func Current(ctx context.Context, d *db.DB) (Status, error) {
	st := Status{Shipped: ShippedDates(), URL: pricefeed.Redact(URL()), Today: clock.Today().Format(time.DateOnly),
		Imported: []db.PriceCatalog{}, NoPerformanceData: []hw.UnpredictableOffer{}}
	if d == nil {
		return st, nil
	}
	c, err := shipped.Catalog()
	if err != nil {
		return st, err
	}
	offers, sources, err := Imported(ctx, d, nil)
	if err != nil {
		return st, err
	}
	if st.Imported, err = d.PriceCatalogs(ctx); err != nil {
		return st, err
	}
	if st.Imported == nil {
		st.Imported = []db.PriceCatalog{}
	}
	for i := range st.Imported { // a source stored before credentials were kept out of it
		st.Imported[i].Source = pricefeed.Redact(st.Imported[i].Source)
	}
	if _, unknown := c.WithOffers(offers, sources); unknown != nil {
		st.NoPerformanceData = unknown
	}
	return st, nil
}

// Imported reads the cache's offers of the accelerators named (nil: all) and where
// each cloud's came from.
func Imported(ctx context.Context, d *db.DB, accelerators []string) ([]hw.CloudOffer, map[string]hw.PriceSource, error) {
	cats, err := d.PriceCatalogs(ctx)
	if err != nil || len(cats) == 0 {
		return nil, nil, err
	}
	offers, err := d.CloudOffersOf(ctx, accelerators)
	if err != nil {
		return nil, nil, err
	}
	sources := make(map[string]hw.PriceSource, len(cats))
	for _, c := range cats {
		sources[c.Cloud] = hw.PriceSource{Cloud: c.Cloud, Source: pricefeed.Redact(c.Source), Date: c.PriceDate}
	}
	return offers, sources, nil
}

// Changed says whether any cloud's prices were stored (not all unchanged or failed).
func (r Report) Changed() bool {
	for _, c := range r.Clouds {
		if c.Status == "imported" {
			return true
		}
	}
	return false
}

// Lines says what an import or update did, a line per cloud: "aws as of 2026-11-20
// (212 machines)", "gcp unchanged (as of 2026-11-19)", "lambda failed (…)".
func (r Report) Lines() []string {
	lines := make([]string, 0, len(r.Clouds))
	for _, c := range r.Clouds {
		switch c.Status {
		case "imported":
			lines = append(lines, fmt.Sprintf("%s as of %s (%d machines)", c.Cloud, c.Date, c.Machines))
		case "unchanged":
			lines = append(lines, fmt.Sprintf("%s unchanged (as of %s)", c.Cloud, c.Date))
		default:
			lines = append(lines, fmt.Sprintf("%s %s (%s)", c.Cloud, c.Status, c.Error))
		}
	}
	return lines
}

// Summary says the Lines in one sentence, as the window's status line shows it:
// "Prices: aws as of 2026-11-20 (212 machines), gcp unchanged (…), lambda failed (…)."
func (r Report) Summary() string {
	if len(r.Clouds) == 0 {
		return "Prices: no cloud was read."
	}
	return "Prices: " + strings.Join(r.Lines(), ", ") + "."
}

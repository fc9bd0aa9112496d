package prices_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/app/prices"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// fixtureCatalogs is a SkyPilot catalog in the real v7 layout (catalogs/v7/<cloud>/vms.csv),
// five clouds with a handful of real instance types each, each cloud in its own column order.
var fixtureCatalogs = filepath.Join("testdata", "skypilot-catalog", "catalogs", "v7")

func openCache(t *testing.T) *db.DB {
	t.Helper()
	d, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func machineMap(t *testing.T, ms []hw.Machine) map[string]hw.Machine {
	t.Helper()
	out := map[string]hw.Machine{}
	for _, m := range ms {
		out[m.ID] = m
	}
	return out
}

func TestImportPricesFromTheV7Layout(t *testing.T) {
	ctx := context.Background()
	d := openCache(t)
	before, err := app.Machines(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := prices.Import(ctx, d, fixtureCatalogs, prices.ImportOptions{Date: "2026-11-20"})
	if err != nil {
		t.Fatal(err)
	}
	var clouds []string
	for _, c := range rep.Clouds {
		clouds = append(clouds, c.Cloud)
		if c.Status != "imported" || c.Date != "2026-11-20" || c.Machines == 0 {
			t.Errorf("import of %s: %+v; want imported, dated 2026-11-20, with machines", c.Cloud, c)
		}
	}
	if want := []string{"aws", "azure", "gcp", "lambda", "runpod"}; !reflect.DeepEqual(clouds, want) {
		t.Errorf("imported clouds %v, want %v", clouds, want)
	}
	after, err := app.Machines(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	ms := machineMap(t, after)
	// New machines: the imported instance types the shipped catalog lacks and whose GPU
	// cnntime predicts: RunPod's A100 PCIe, H100 NVL and two RTX 4090 ones.
	added := len(after) - len(before)
	if added != 4 {
		t.Errorf("the import added %d machines, want 4", added)
	}
	tests := []struct {
		id             string
		gpu            string
		count          int
		region         string
		price, spot    float64
		regions        int
		vcpus          int
		memoryGiB      float64
		accelerator    string
		sourceContains string
	}{
		// shipped ids keep working, now with every region's prices
		{"aws/p3.2xlarge", "v100-sxm2-16gb", 1, "us-east-1", 3.06, 0.918, 3, 8, 61, "V100", "aws/vms.csv"},
		{"gcp/n1-standard-4-1x-nvidia-tesla-v100", "v100-sxm2-16gb", 1, "us-central1", 2.67, 1.032, 2, 4, 15, "V100", "gcp/vms.csv"},
		{"gcp/a2-highgpu-1g", "a100-sxm4-40gb", 1, "us-central1", 3.68231, 1.10469, 1, 12, 85, "A100", "gcp/vms.csv"},
		{"azure/Standard_NC40ads_H100_v5", "h100-nvl", 1, "eastus", 6.98, 2.792, 2, 40, 320, "H100", "azure/vms.csv"},
		{"lambda/gpu_1x_gh200", "gh200", 1, "us-east-3", 1.49, 0, 2, 64, 432, "GH200", "lambda/vms.csv"},
		// new ones, sized from the catalog
		{"runpod/1x_H100-NVL_SECURE", "h100-nvl", 1, "US", 2.59, 1.4, 1, 16, 94, "H100-NVL", "runpod/vms.csv"},
		{"runpod/2x_RTX4090_SECURE", "rtx-4090", 2, "CA", 1.38, 0.68, 1, 10, 58, "RTX4090", "runpod/vms.csv"},
		{"lambda/gpu_8x_h100_sxm5", "h100-sxm", 8, "us-east-1", 23.92, 0, 1, 208, 1800, "H100", "lambda/vms.csv"},
	}
	for _, tc := range tests {
		m, ok := ms[tc.id]
		if !ok {
			t.Errorf("%s is not a machine after the import", tc.id)
			continue
		}
		if m.GPUID != tc.gpu || m.GPUCount != tc.count || m.Region != tc.region || m.PriceUSDPerHour != tc.price ||
			m.SpotPriceUSDPerHour != tc.spot || len(m.Regions) != tc.regions || m.VCPUs != tc.vcpus || m.MemoryGiB != tc.memoryGiB ||
			m.Accelerator != tc.accelerator || m.PriceDate != "2026-11-20" || !strings.Contains(m.PriceSource, tc.sourceContains) ||
			m.PriceKind != hw.OnDemand || m.Listing != hw.ListingCurrent || m.PriceAgeDays == nil {
			t.Errorf("%s = %d × %s in %s at $%g (spot $%g), %d regions, %d vCPUs, %g GiB, %q, %s, %q, %s, %s, age %v;\n"+
				"want %d × %s in %s at $%g (spot $%g), %d regions, %d vCPUs, %g GiB, %q, 2026-11-20 from %s, on-demand, current, aged",
				tc.id, m.GPUCount, m.GPUID, m.Region, m.PriceUSDPerHour, m.SpotPriceUSDPerHour, len(m.Regions), m.VCPUs, m.MemoryGiB,
				m.Accelerator, m.PriceDate, m.PriceSource, m.PriceKind, m.Listing, m.PriceAgeDays,
				tc.count, tc.gpu, tc.region, tc.price, tc.spot, tc.regions, tc.vcpus, tc.memoryGiB, tc.accelerator, tc.sourceContains)
		}
	}
	// Shipped machines of instance types the import does not list keep their shipped price.
	if m := ms["aws/p2.xlarge"]; m.PriceUSDPerHour != 0.9 || m.PriceDate != "2026-01-21" || len(m.Regions) != 0 {
		t.Errorf("aws/p2.xlarge = $%g of %s with %d regions; want the shipped $0.9 of 2026-01-21", m.PriceUSDPerHour, m.PriceDate, len(m.Regions))
	}
	st, err := prices.Current(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var unknown []string
	for _, u := range st.NoPerformanceData {
		unknown = append(unknown, u.Cloud+"/"+u.Instance)
	}
	want := []string{"aws/g6f.large", "aws/inf2.xlarge", "azure/Standard_NV6ads_A10_v5", "gcp/tpu-v3-8", "lambda/gpu_1x_a100", "runpod/1x_MI300X_SECURE"}
	if !reflect.DeepEqual(unknown, want) {
		t.Errorf("no performance data for %v, want %v", unknown, want)
	}
}

func TestImportPricesRefusesBadInputAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name, "vms.csv")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := os.ReadFile(filepath.Join(fixtureCatalogs, "aws", "vms.csv"))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(good), "\n")
	future := write("mtime/aws", string(good))
	if err := os.Chtimes(future, time.Now(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var million strings.Builder
	million.WriteString(header + "\n")
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(&million, "x%d,A100,8,96,1152,,30.5,10.1,r%d,z%d\n", i%100, i%3, i%5)
	}
	hostile := write("million/aws", million.String())
	tests := []struct {
		name    string
		path    string
		opts    prices.ImportOptions
		wantErr string
	}{
		{"not a catalog", write("html/aws", "<!DOCTYPE html><html><body>404</body></html>\n"), prices.ImportOptions{}, "not a SkyPilot catalog"},
		{"price abc", write("abc/aws", header+"\np3.2xlarge,V100,1.0,8.0,61.0,,abc,0.9,us-east-1,use1-az4\n"), prices.ImportOptions{}, `field Price: "abc" is not a number`},
		{"negative price", write("neg/aws", header+"\np3.2xlarge,V100,1.0,8.0,61.0,,-3.06,0.9,us-east-1,use1-az4\n"), prices.ImportOptions{}, "-3.06 is negative"},
		{"half-downloaded", write("half/aws", string(good[:len(good)/2])), prices.ImportOptions{}, "cut short"},
		{"larger than the limit", write("big/aws", string(good)), prices.ImportOptions{MaxBytes: 1024}, "larger than the limit"},
		{"no catalog in the directory", t.TempDir(), prices.ImportOptions{}, "no SkyPilot catalog in"},
		{"file of an unnamed cloud", write("Not A Cloud", string(good)), prices.ImportOptions{}, "say which cloud"},
		{"bad date", write("date/aws", string(good)), prices.ImportOptions{Date: "yesterday"}, "not a day such as"},
		{"a date in the future", write("future/aws", string(good)), prices.ImportOptions{Date: "2999-01-01"}, "the date given, 2999-01-01, is after today"},
		{"a file modified in the future", future, prices.ImportOptions{}, "its modification day, 2200-01-01, is after today"},
		{"hexadecimal price", write("hex/aws", header+"\np3.2xlarge,V100,1.0,8.0,61.0,,0x1p4,0.9,us-east-1,use1-az4\n"), prices.ImportOptions{}, `field Price: "0x1p4" is not a number`},
		{"a billion GPUs", write("gpus/aws", header+"\np3.2xlarge,V100,1e9,8.0,61.0,,3.06,0.9,us-east-1,use1-az4\n"), prices.ImportOptions{}, "field AcceleratorCount: 1e+09 is more than any instance has"},
		{"a million rows", hostile, prices.ImportOptions{}, "line 250002, field row: the catalog holds more than 250000 rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openCache(t)
			if _, err := prices.Import(ctx, d, fixtureCatalogs, prices.ImportOptions{Date: "2026-11-20"}); err != nil {
				t.Fatal(err)
			}
			offersBefore, _ := d.CloudOffers(ctx)
			catsBefore, _ := d.PriceCatalogs(ctx)
			_, err := prices.Import(ctx, d, tc.path, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("prices.Import(%s) = %v, want an error with %q", tc.path, err, tc.wantErr)
			}
			offersAfter, _ := d.CloudOffers(ctx)
			catsAfter, _ := d.PriceCatalogs(ctx)
			if !reflect.DeepEqual(offersBefore, offersAfter) || !reflect.DeepEqual(catsBefore, catsAfter) {
				t.Errorf("a refused import changed the cache's prices")
			}
		})
	}
}

// catalogServer serves the fixture catalog like a static file host (ETag,
// Last-Modified, 304 to a matching If-None-Match), and lets a test break one cloud.
type catalogServer struct {
	*httptest.Server
	mu     sync.Mutex
	broken map[string]string // cloud → how its file fails: "500", "html", "truncated", "slow", "huge", "half"
	hits   map[string]int    // cloud → full downloads served
}

func newCatalogServer(t *testing.T) *catalogServer {
	t.Helper()
	cs := &catalogServer{broken: map[string]string{}, hits: map[string]int{}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cloud := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/moved"), "/catalogs/v7/"), "/vms.csv")
		data, err := os.ReadFile(filepath.Join(fixtureCatalogs, cloud, "vms.csv"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		cs.mu.Lock()
		how := cs.broken[cloud]
		cs.mu.Unlock()
		etag := fmt.Sprintf(`"%s-%d"`, cloud, len(data))
		switch how {
		case "500":
			http.Error(w, "<html><body>Internal Server Error</body></html>", http.StatusInternalServerError)
			return
		case "html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintln(w, "<!DOCTYPE html><html><body>Rate limit exceeded</body></html>")
			return
		case "truncated": // the connection drops before the promised length
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.Write(data[:len(data)/2])
			return
		case "half": // no length promised: the body just stops mid-row
			w.Write(data[:len(data)/2])
			return
		case "slow":
			select {
			case <-time.After(10 * time.Second):
			case <-r.Context().Done():
			}
			return
		case "huge": // a gigabyte announced
			w.Header().Set("Content-Length", fmt.Sprint(int64(1)<<30))
			w.Write(data)
			return
		case "future", "older": // a new file dated in year 9999, or before the cache's copy
			w.Header().Set("ETag", `"`+how+`"`)
			w.Header().Set("Last-Modified", map[string]string{"future": "Fri, 31 Dec 9999 23:59:59 GMT", "older": "Thu, 01 Oct 2026 08:00:00 GMT"}[how])
			w.Write(data)
			return
		case "elsewhere": // to another host, plain http
			http.Redirect(w, r, strings.Replace(cs.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusFound)
			return
		case "moved": // within this host
			if !strings.HasPrefix(r.URL.Path, "/moved/") {
				http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusMovedPermanently)
				return
			}
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		cs.mu.Lock()
		cs.hits[cloud]++
		cs.mu.Unlock()
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Fri, 20 Nov 2026 08:00:00 GMT")
		w.Write(data)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *catalogServer) breakCloud(cloud, how string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.broken[cloud] = how
}

// pricesOf is a cloud's offers and catalog record in the cache.
func pricesOf(t *testing.T, d *db.DB, cloud string) ([]hw.CloudOffer, db.PriceCatalog) {
	t.Helper()
	ctx := context.Background()
	all, err := d.CloudOffers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var offers []hw.CloudOffer
	for _, o := range all {
		if o.Cloud == cloud {
			offers = append(offers, o)
		}
	}
	c, err := d.PriceCatalog(ctx, cloud)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		t.Fatal(err)
	}
	c.CheckedAt = time.Time{} // a 304 moves only this
	return offers, c
}

func TestUpdatePrices(t *testing.T) {
	ctx := context.Background()
	cs := newCatalogServer(t)
	d := openCache(t)
	opts := prices.UpdateOptions{BaseURL: cs.URL + "/catalogs/v7", Clouds: []string{"aws", "gcp", "lambda", "runpod"}, Timeout: 2 * time.Second}

	// Success: every cloud downloaded and stored, dated by the server's Last-Modified.
	rep, err := prices.Update(ctx, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Clouds {
		if c.Status != "imported" || c.Date != "2026-11-20" || c.Offers == 0 {
			t.Errorf("first update of %s: %+v; want imported, 2026-11-20", c.Cloud, c)
		}
	}
	awsOffers, awsCat := pricesOf(t, d, "aws")
	if len(awsOffers) != 10 || awsCat.ETag == "" || !strings.HasSuffix(awsCat.Source, "/catalogs/v7/aws/vms.csv") {
		t.Fatalf("aws after the update: %d offers, %+v; want 10 offers with the server's ETag", len(awsOffers), awsCat)
	}

	// 304: a conditional request finds every file unchanged; nothing is downloaded again.
	rep, err = prices.Update(ctx, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Clouds {
		if c.Status != "unchanged" || c.Date != "2026-11-20" {
			t.Errorf("second update of %s: %+v; want unchanged", c.Cloud, c)
		}
	}
	if cs.hits["aws"] != 1 {
		t.Errorf("aws was downloaded %d times, want once (the second time 304)", cs.hits["aws"])
	}
	if o, c := pricesOf(t, d, "aws"); !reflect.DeepEqual(o, awsOffers) || !reflect.DeepEqual(c, awsCat) {
		t.Errorf("a 304 changed aws's prices")
	}

	// Every failure leaves the failing cloud's prices as they were, updates the others,
	// and keeps the cache sound.
	failures := []struct {
		how, wantErr string
	}{
		{"500", "the server answered 500 Internal Server Error"},
		{"html", "not a SkyPilot catalog"},
		{"truncated", "cut short"},
		{"half", "cut short"},
		{"slow", "timed out"},
		{"huge", "more than the limit of"},
	}
	for _, f := range failures {
		t.Run(f.how, func(t *testing.T) {
			d := openCache(t)
			if _, err := prices.Update(ctx, d, opts); err != nil {
				t.Fatal(err)
			}
			before, beforeCat := pricesOf(t, d, "aws")
			cs.breakCloud("aws", f.how)
			defer cs.breakCloud("aws", "")
			short := opts
			short.Timeout = 300 * time.Millisecond
			// A fresh, unconditional download of every cloud: the others succeed.
			if err := d.ReplacePrices(ctx, nil); err != nil {
				t.Fatal(err)
			}
			short.Clouds = []string{"aws", "runpod"}
			rep, err := prices.Update(ctx, d, short)
			if err == nil || !strings.Contains(err.Error(), f.wantErr) || !strings.Contains(err.Error(), "aws") ||
				!strings.Contains(err.Error(), "the other clouds' prices were updated") {
				t.Fatalf("update with aws %s = %v; want an error naming aws with %q", f.how, err, f.wantErr)
			}
			if len(rep.Failed()) != 1 || rep.Failed()[0].Cloud != "aws" {
				t.Errorf("failed clouds %+v, want aws alone", rep.Failed())
			}
			if after, afterCat := pricesOf(t, d, "aws"); !reflect.DeepEqual(after, before) || !reflect.DeepEqual(afterCat, beforeCat) {
				t.Errorf("a failed download changed aws's prices")
			}
			if problems, err := d.Check(ctx); err != nil || len(problems) != 0 {
				t.Errorf("the cache after a failed update: %v, %v", problems, err)
			}
		})
	}
}

// The price feed keeps what it stores true (issue 30): no file dated in the future or
// older than the cache's prices, no redirect to plain http, the source where the file
// came from, and never the credentials of an address.
func TestUpdatePricesRefusesBadDatesRedirectsAndKeepsCredentialsOut(t *testing.T) {
	ctx := context.Background()
	defer app.SetClock(app.FixedClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)))()
	cs := newCatalogServer(t)
	withCreds := strings.Replace(cs.URL, "http://", "http://u:secret@", 1) + "/catalogs/v7"
	opts := prices.UpdateOptions{BaseURL: withCreds, Clouds: []string{"aws"}, Timeout: 2 * time.Second}
	d := openCache(t)
	rep, err := prices.Update(ctx, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, cat := pricesOf(t, d, "aws")
	st, err := prices.Current(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := cs.URL + "/catalogs/v7/aws/vms.csv"; cat.Source != want || rep.Clouds[0].Source != want || st.Imported[0].Source != want {
		t.Errorf("the source is stored as %q, reported as %q and shown as %q; want %q, without the credentials", cat.Source, rep.Clouds[0].Source, st.Imported[0].Source, want)
	}
	for _, tc := range []struct{ how, wantErr string }{
		{"future", "the server dates the file 9999-12-31 (Last-Modified), after today (2026-11-27)"},
		{"older", "the file is of 2026-10-01, older than the aws prices the cache holds (of 2026-11-20"},
		{"elsewhere", "the server redirected to " + strings.Replace(cs.URL, "127.0.0.1", "localhost", 1) + "/catalogs/v7/aws/vms.csv: prices are downloaded over HTTPS only"},
	} {
		cs.breakCloud("aws", tc.how)
		rep, err := prices.Update(ctx, d, opts)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
			t.Errorf("update with aws %s = %v; want an error with %q and no password", tc.how, err, tc.wantErr)
		}
		if len(rep.Failed()) != 1 || strings.Contains(rep.Failed()[0].Source, "secret") {
			t.Errorf("update with aws %s reported %+v", tc.how, rep.Clouds)
		}
		if _, after := pricesOf(t, d, "aws"); !reflect.DeepEqual(after, cat) {
			t.Errorf("update with aws %s changed the prices' record to %+v", tc.how, after)
		}
	}
	// A redirect within the mirror is followed, and the source is where the file came from.
	cs.breakCloud("aws", "moved")
	if _, err := prices.Update(ctx, openCache(t), opts); err != nil {
		t.Fatal(err)
	}
	d2 := openCache(t)
	if _, err := prices.Update(ctx, d2, opts); err != nil {
		t.Fatal(err)
	}
	if _, moved := pricesOf(t, d2, "aws"); moved.Source != cs.URL+"/moved/catalogs/v7/aws/vms.csv" {
		t.Errorf("after a redirect the source is %q, want the final address", moved.Source)
	}
	cs.breakCloud("aws", "")
}

func TestUpdatePricesOffline(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/catalogs/v7"
	l.Close() // nothing answers there
	d := openCache(t)
	_, err = prices.Update(ctx, d, prices.UpdateOptions{BaseURL: base, Clouds: []string{"aws", "gcp"}})
	var off *prices.OfflineError
	if !errors.As(err, &off) || !strings.Contains(err.Error(), "seems to be offline") ||
		!strings.Contains(err.Error(), "keeps using the prices shipped with cnntime") {
		t.Errorf("update with no server = %v; want an offline error saying the shipped prices stay", err)
	}
	if cats, _ := d.PriceCatalogs(ctx); len(cats) != 0 {
		t.Errorf("an offline update stored %v", cats)
	}
}

func TestEnginePricesRegionAndSpot(t *testing.T) {
	ctx := context.Background()
	d := openCache(t)
	if _, err := prices.Import(ctx, d, fixtureCatalogs, prices.ImportOptions{Date: "2026-11-20"}); err != nil {
		t.Fatal(err)
	}
	eng, err := app.NewEngine(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	p3, err := eng.MachineTarget("aws/p3.2xlarge")
	if err != nil {
		t.Fatal(err)
	}
	gh, err := eng.MachineTarget("lambda/gpu_1x_gh200")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		choice    hw.PriceChoice
		p3Price   float64
		p3Region  string
		ghKnown   bool
		ghNoteHas string
	}{
		{hw.PriceChoice{}, 3.06, "us-east-1", true, ""},
		{hw.PriceChoice{Region: "eu-west-1"}, 3.305, "eu-west-1", false, "not offered in region eu-west-1"},
		{hw.PriceChoice{Spot: true}, 0.918, "us-east-1", false, "no spot price in any region"},
		{hw.PriceChoice{Region: "us-west-2", Spot: true}, 0.9374, "us-west-2", false, "not offered in region us-west-2"},
	}
	for _, tc := range tests {
		q := app.Query{Models: []string{"resnet18"}, Targets: []app.Target{p3, gh}, Batches: []int{64}, Precision: measure.FP32, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: 1000}, Price: tc.choice}
		curves, err := eng.Curves(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		c, g := curves[0], curves[1]
		if c.PriceUSDPerHour != tc.p3Price || c.Price.Region != tc.p3Region || c.Price.Kind != tc.choice.Kind() || c.Price.Date != "2026-11-20" || c.Price.AgeDays == nil {
			t.Errorf("%v: aws/p3.2xlarge priced $%g, %+v; want $%g %s in %s, dated", tc.choice, c.PriceUSDPerHour, c.Price, tc.p3Price, tc.choice.Kind(), tc.p3Region)
		}
		if g.CostKnown != tc.ghKnown || !strings.Contains(g.Price.Note, tc.ghNoteHas) {
			t.Errorf("%v: lambda/gpu_1x_gh200 cost known %v, note %q; want %v, %q", tc.choice, g.CostKnown, g.Price.Note, tc.ghKnown, tc.ghNoteHas)
		}
	}
	if err := eng.CheckPriceChoice(hw.PriceChoice{Region: "us-eats-1"}); err == nil || !strings.Contains(err.Error(), `did you mean "us-east-1"`) {
		t.Errorf("CheckPriceChoice of a misspelt region = %v, want a suggestion", err)
	}
}

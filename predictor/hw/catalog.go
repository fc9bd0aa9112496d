package hw

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The catalog's file names, as errors name them.
const (
	GPUsFile     = "gpus.csv"
	MachinesFile = "machines.csv"
)

// The columns of the catalog files, in the order the embedded files have them.
var (
	gpuColumns = []string{"id", "name", "architecture", "compute_capability", "sm_count", "boost_clock_mhz",
		"fp32_tflops", "tf32_tensor_tflops", "fp16_tensor_tflops", "fp8_tensor_tflops", "memory_gb", "memory_type",
		"memory_bandwidth_gbps", "l2_cache_mb", "pcie_gen", "pcie_lanes", "interconnect", "interconnect_gbps",
		"interconnect_source", "tdp_w", "source", "notes"}
	machineColumns = []string{"id", "provider", "instance", "gpu", "gpu_count", "vcpus", "memory_gib", "region",
		"price_usd_per_hour", "price_date", "price_source", "listing", "notes"}
)

// UserProvider is the provider of every machine the user defines; catalog machines
// may not use it, so user ids ("user/NAME") never clash with the catalog's.
const UserProvider = "user"

var (
	gpuIDPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	providerPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	machineIDPattern = regexp.MustCompile(`^[a-z0-9-]+/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	ccPattern        = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	datePattern      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}(-[0-9]{2})?$`)
)

// Catalog is the validated set of GPUs and cloud machines. It is read-only once
// parsed, so one catalog may be shared.
type Catalog struct {
	gpus      []GPU
	machines  []Machine
	gpuIndex  map[string]int // lower-case id → index
	machIndex map[string]int // lower-case id → index
}

// ParseCatalog reads and validates the GPU and machine catalog files. Every machine's
// GPU must be in the GPU file. The first mistake found is returned as a *RowError
// naming the file, line and field.
func ParseCatalog(gpusCSV, machinesCSV []byte) (*Catalog, error) {
	c := &Catalog{gpuIndex: map[string]int{}, machIndex: map[string]int{}}
	gt, err := readTable(GPUsFile, gpusCSV, gpuColumns)
	if err != nil {
		return nil, err
	}
	for _, r := range gt.rows {
		g, err := parseGPU(r)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(g.ID)
		if _, dup := c.gpuIndex[key]; dup {
			return nil, r.errorf("id", "GPU %q is listed twice", g.ID)
		}
		c.gpuIndex[key] = len(c.gpus)
		c.gpus = append(c.gpus, g)
	}
	if len(c.gpus) == 0 {
		return nil, &RowError{File: GPUsFile, Line: 2, Field: "id", Msg: "the file lists no GPUs"}
	}
	mt, err := readTable(MachinesFile, machinesCSV, machineColumns)
	if err != nil {
		return nil, err
	}
	for _, r := range mt.rows {
		m, err := c.parseMachine(r)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(m.ID)
		if _, dup := c.machIndex[key]; dup {
			return nil, r.errorf("id", "machine %q is listed twice", m.ID)
		}
		c.machIndex[key] = len(c.machines)
		c.machines = append(c.machines, m)
	}
	return c, nil
}

func parseGPU(r record) (GPU, error) {
	var g GPU
	var err error
	if g.ID, err = r.required("id"); err != nil {
		return g, err
	}
	if !gpuIDPattern.MatchString(g.ID) {
		return g, r.errorf("id", "%q is not a GPU id: use lower-case letters, digits, '.' and '-', e.g. v100-sxm2-16gb", g.ID)
	}
	if g.Name, err = r.required("name"); err != nil {
		return g, err
	}
	g.Architecture = r.text("architecture")
	g.ComputeCapability = r.text("compute_capability")
	if g.ComputeCapability != "" && !ccPattern.MatchString(g.ComputeCapability) {
		return g, r.errorf("compute_capability", "%q is not a compute capability such as 7.0", g.ComputeCapability)
	}
	g.MemoryType = r.text("memory_type")
	g.Interconnect = r.text("interconnect")
	switch g.Interconnect {
	case "", "NVLink", "PCIe":
	default:
		return g, r.errorf("interconnect", "%q is neither NVLink nor PCIe", g.Interconnect)
	}
	g.InterconnectSource = r.text("interconnect_source")
	g.Notes = r.text("notes")
	if g.Source, err = r.required("source"); err != nil {
		return g, err
	}
	for _, f := range []struct {
		field string
		dst   *float64
	}{
		{"boost_clock_mhz", &g.BoostClockMHz}, {"fp32_tflops", &g.FP32TFLOPS}, {"tf32_tensor_tflops", &g.TF32TFLOPS},
		{"fp16_tensor_tflops", &g.FP16TFLOPS}, {"fp8_tensor_tflops", &g.FP8TFLOPS}, {"memory_gb", &g.MemoryGB}, {"memory_bandwidth_gbps", &g.MemoryBandwidthGBs},
		{"l2_cache_mb", &g.L2MB}, {"interconnect_gbps", &g.InterconnectGBs}, {"tdp_w", &g.TDPW},
	} {
		if *f.dst, err = r.number(f.field); err != nil {
			return g, err
		}
	}
	for _, f := range []struct {
		field string
		dst   *int
	}{{"sm_count", &g.SMs}, {"pcie_gen", &g.PCIeGen}, {"pcie_lanes", &g.PCIeLanes}} {
		if *f.dst, err = r.count(f.field); err != nil {
			return g, err
		}
	}
	if g.InterconnectGBs > 0 && (g.Interconnect == "" || g.InterconnectSource == "") {
		field := "interconnect"
		if g.Interconnect != "" {
			field = "interconnect_source"
		}
		return g, r.errorf(field, "is empty but interconnect_gbps is %g: say which link it is and where the figure comes from", g.InterconnectGBs)
	}
	return g, nil
}

func (c *Catalog) parseMachine(r record) (Machine, error) {
	var m Machine
	var err error
	if m.ID, err = r.required("id"); err != nil {
		return m, err
	}
	if m.Provider, err = r.required("provider"); err != nil {
		return m, err
	}
	if !providerPattern.MatchString(m.Provider) {
		return m, r.errorf("provider", "%q is not a provider: use lower-case letters and digits, e.g. aws", m.Provider)
	}
	if m.Provider == UserProvider || m.Provider == LocalProvider {
		return m, r.errorf("provider", "%q is reserved for the user's own and measured machines", m.Provider)
	}
	if !machineIDPattern.MatchString(m.ID) || !strings.HasPrefix(m.ID, m.Provider+"/") {
		return m, r.errorf("id", "%q is not %s/INSTANCE (letters, digits, '.', '_' and '-' after the slash)", m.ID, m.Provider)
	}
	if m.Instance, err = r.required("instance"); err != nil {
		return m, err
	}
	if m.GPUID, err = r.required("gpu"); err != nil {
		return m, err
	}
	if _, err := c.GPU(m.GPUID); err != nil {
		return m, r.errorf("gpu", "%v (the GPU must be in %s)", err, GPUsFile)
	}
	if m.GPUCount, err = r.count("gpu_count"); err != nil {
		return m, err
	}
	if m.GPUCount < 1 {
		return m, r.errorf("gpu_count", "must be at least 1")
	}
	if m.VCPUs, err = r.count("vcpus"); err != nil {
		return m, err
	}
	if m.MemoryGiB, err = r.number("memory_gib"); err != nil {
		return m, err
	}
	m.Region = r.text("region")
	if m.PriceUSDPerHour, err = r.number("price_usd_per_hour"); err != nil {
		return m, err
	}
	m.PriceDate = r.text("price_date")
	if m.PriceDate != "" && !datePattern.MatchString(m.PriceDate) {
		return m, r.errorf("price_date", "%q is not a date such as 2026-01-21 or 2025-01", m.PriceDate)
	}
	if m.PriceSource, err = r.required("price_source"); err != nil {
		return m, err
	}
	m.Listing = Listing(r.text("listing"))
	if !m.Listing.valid() || m.Listing == ListingUser || m.Listing == ListingLocal {
		return m, r.errorf("listing", "%q is not one of current, historical, unpriced, component", m.Listing)
	}
	if (m.PriceUSDPerHour == 0) != (m.Listing == ListingUnpriced) {
		return m, r.errorf("price_usd_per_hour", "a machine without a price must be listed as unpriced, and an unpriced one has no price (price %q, listing %q)",
			r.text("price_usd_per_hour"), m.Listing)
	}
	m.Notes = r.text("notes")
	return m, nil
}

// GPUs returns every GPU in catalog order.
func (c *Catalog) GPUs() []GPU { return append([]GPU(nil), c.gpus...) }

// Machines returns every catalog machine in catalog order, without user machines or
// price overrides (see Merge).
func (c *Catalog) Machines() []Machine { return append([]Machine(nil), c.machines...) }

// GPUIDs returns the GPU ids in catalog order.
func (c *Catalog) GPUIDs() []string {
	ids := make([]string, len(c.gpus))
	for i, g := range c.gpus {
		ids[i] = g.ID
	}
	return ids
}

// MachineIDs returns the catalog machine ids in catalog order.
func (c *Catalog) MachineIDs() []string {
	ids := make([]string, len(c.machines))
	for i, m := range c.machines {
		ids[i] = m.ID
	}
	return ids
}

// Providers returns the catalog's providers, sorted.
func (c *Catalog) Providers() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range c.machines {
		if !seen[m.Provider] {
			seen[m.Provider] = true
			out = append(out, m.Provider)
		}
	}
	sort.Strings(out)
	return out
}

// GPU looks a GPU up by id (case-insensitive). An unknown id is an *UnknownIDError
// that suggests the closest ids.
func (c *Catalog) GPU(id string) (GPU, error) {
	if i, ok := c.gpuIndex[strings.ToLower(strings.TrimSpace(id))]; ok {
		return c.gpus[i], nil
	}
	return GPU{}, &UnknownIDError{Kind: "GPU", ID: id, Suggestions: Closest(id, c.GPUIDs(), 3)}
}

// Machine looks a catalog machine up by id (case-insensitive). An unknown id is an
// *UnknownIDError that suggests the closest ids.
func (c *Catalog) Machine(id string) (Machine, error) {
	if i, ok := c.machIndex[strings.ToLower(strings.TrimSpace(id))]; ok {
		return c.machines[i], nil
	}
	return Machine{}, &UnknownIDError{Kind: "machine", ID: id, Suggestions: Closest(id, c.MachineIDs(), 3)}
}

// UnknownIDError is a GPU or machine id that the catalog does not have.
type UnknownIDError struct {
	Kind        string // "GPU" or "machine"
	ID          string
	Suggestions []string // the closest known ids, best first; may be empty
}

func (e *UnknownIDError) Error() string {
	msg := fmt.Sprintf("unknown %s %q", e.Kind, e.ID)
	if len(e.Suggestions) > 0 {
		quoted := make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			quoted[i] = fmt.Sprintf("%q", s)
		}
		msg += " (did you mean " + strings.Join(quoted, " or ") + "?)"
	}
	return msg
}

// Closest returns up to n candidates that resemble name, best first: those that
// contain it or that it contains, then those within a small edit distance.
func Closest(name string, candidates []string, n int) []string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return nil
	}
	type scored struct {
		id    string
		score int
	}
	var hits []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		switch d := editDistance(name, lc); {
		case strings.Contains(lc, name) || strings.Contains(name, lc):
			hits = append(hits, scored{c, abs(len(lc) - len(name))}) // contained: the less extra, the better
		case d <= max(2, len(name)/3):
			hits = append(hits, scored{c, 100 + d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score < hits[j].score })
	out := []string{}
	for i := 0; i < len(hits) && i < n; i++ {
		out = append(out, hits[i].id)
	}
	return out
}

// EditDistance is the Levenshtein distance between a and b (bytes): how many one-byte
// insertions, deletions and changes turn one into the other.
func EditDistance(a, b string) int { return editDistance(a, b) }

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

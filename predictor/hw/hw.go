package hw

import "cnntime/predictor/host"

// GPU is one GPU model's published specifications, each with its source.
type GPU struct {
	ID                string  `json:"id"` // stable id, e.g. "v100-sxm2-16gb"
	Name              string  `json:"name"`
	Architecture      string  `json:"architecture"`       // e.g. "Volta"; "CPU" for a host processor
	ComputeCapability string  `json:"compute_capability"` // e.g. "7.0"
	SMs               int     `json:"sm_count"`
	BoostClockMHz     float64 `json:"boost_clock_mhz"`
	FP32TFLOPS        float64 `json:"fp32_tflops"`
	TF32TFLOPS        float64 `json:"tf32_tensor_tflops"` // dense; 0 where the GPU has no TF32
	FP16TFLOPS        float64 `json:"fp16_tensor_tflops"` // dense, FP32 accumulate; 0 where it has no tensor cores
	// FP8TFLOPS is the dense FP8 tensor rate (Hopper, Ada, Blackwell); 0 where the GPU
	// has none or no source gives it. Predictions do not use it: cnntime trains in
	// FP32, TF32, FP16 and BF16.
	FP8TFLOPS          float64 `json:"fp8_tensor_tflops,omitempty"`
	MemoryGB           float64 `json:"memory_gb"`
	MemoryType         string  `json:"memory_type"`
	MemoryBandwidthGBs float64 `json:"memory_bandwidth_gbps"`
	L2MB               float64 `json:"l2_cache_mb"`
	PCIeGen            int     `json:"pcie_gen"`
	PCIeLanes          int     `json:"pcie_lanes"`
	InterconnectGBs    float64 `json:"interconnect_gbps"` // GPU-to-GPU bandwidth per direction (NVLink, else PCIe)
	Interconnect       string  `json:"interconnect"`      // "NVLink", "PCIe"
	// InterconnectSource is the basis of the interconnect figure: an architecture
	// fact (NVLink generation, PCIe generation × lanes), never in the GPU's row.
	InterconnectSource string  `json:"interconnect_source"`
	TDPW               float64 `json:"tdp_w"`
	Source             string  `json:"source"`
	Notes              string  `json:"notes"`
}

// Machine is something one can train on: a cloud instance or a user's own machine.
type Machine struct {
	ID              string  `json:"id"` // "provider/instance", e.g. "aws/p3.2xlarge"; "user/NAME" for the user's own
	Provider        string  `json:"provider"`
	Instance        string  `json:"instance"`
	GPUID           string  `json:"gpu"`
	GPUCount        int     `json:"gpu_count"`
	VCPUs           int     `json:"vcpus"`
	MemoryGiB       float64 `json:"memory_gib"`
	Region          string  `json:"region"`
	PriceUSDPerHour float64 `json:"price_usd_per_hour"`
	PriceSource     string  `json:"price_source"` // date or source of the price
	PriceDate       string  `json:"price_date"`   // "2026-01-21" or "2025-01" where the source dates the price; "" when it does not
	Listing         Listing `json:"listing"`
	PriceOverridden bool    `json:"price_overridden"`
	CatalogPrice    float64 `json:"catalog_price_usd_per_hour,omitempty"` // the catalog's price, where overridden
	User            bool    `json:"user"`                                 // defined by the user, not from the catalog
	Notes           string  `json:"notes"`
	// CPU is the machine's host processor (catalog/cpus.csv); nil where the catalog
	// does not name it (predictor/host.Resolve says what then stands in).
	CPU *host.CPU `json:"cpu,omitempty"`

	// PriceKind says which price PriceUSDPerHour is (on-demand, spot or the user's
	// own); SpotPriceUSDPerHour is the spot price in Region (0: none there).
	PriceKind           PriceKind `json:"price_kind,omitempty"`
	SpotPriceUSDPerHour float64   `json:"spot_price_usd_per_hour,omitempty"`
	// PriceAgeDays is how old the price is in days (null when its source gives no date);
	// PriceStale is true beyond StalePriceDays. PriceNote says why a machine has no price
	// for the asked region or kind.
	PriceAgeDays *int   `json:"price_age_days"`
	PriceStale   bool   `json:"price_stale,omitempty"`
	PriceNote    string `json:"price_note,omitempty"`
	// Regions are the machine's prices in every region of an imported SkyPilot catalog,
	// by region; Accelerator is the catalog's name for its GPU. Both are empty for a
	// machine priced by cnntime's shipped catalog only.
	Regions     []RegionPrice `json:"regions,omitempty"`
	Accelerator string        `json:"accelerator,omitempty"`
	// ShippedSpot is the catalog's dated snapshot of the machine's spot prices
	// (catalog/spot_prices.csv), used for spot costs while no imported catalog prices it.
	ShippedSpot *SpotSnapshot `json:"-"`
}

// Listing says how far a catalog machine's row can be trusted for comparison.
type Listing string

// The listings. Only ListingCurrent machines are complete, currently priced offers;
// the others are kept for reference and flagged as such wherever they are shown.
const (
	ListingCurrent    Listing = "current"    // an on-demand instance with a dated current price
	ListingHistorical Listing = "historical" // an old or low-confidence price
	ListingUnpriced   Listing = "unpriced"   // no on-demand price found: cost unknown
	ListingComponent  Listing = "component"  // a GPU add-on whose price excludes the VM it attaches to
	ListingUser       Listing = "user"       // defined by the user
	ListingLocal      Listing = "local"      // measured in the cache, priced by the user
)

func (l Listing) valid() bool {
	switch l {
	case ListingCurrent, ListingHistorical, ListingUnpriced, ListingComponent, ListingUser, ListingLocal:
		return true
	}
	return false
}

// Comparable reports whether the machine is a complete offer whose cost can be
// compared with others: a current catalog price, a user's own machine, or a measured
// local machine the user priced.
func (m Machine) Comparable() bool {
	return m.Listing == ListingCurrent || m.Listing == ListingUser || m.Listing == ListingLocal
}

// UnknownFields names the specification figures the public sources did not give
// (stored as zero or empty), in the JSON field names; a caller shows them as unknown.
func (g GPU) UnknownFields() []string {
	var out []string
	add := func(name string, unknown bool) {
		if unknown {
			out = append(out, name)
		}
	}
	add("compute_capability", g.ComputeCapability == "")
	add("sm_count", g.SMs == 0)
	add("boost_clock_mhz", g.BoostClockMHz == 0)
	add("fp32_tflops", g.FP32TFLOPS == 0)
	add("memory_gb", g.MemoryGB == 0)
	add("memory_type", g.MemoryType == "")
	add("memory_bandwidth_gbps", g.MemoryBandwidthGBs == 0)
	add("l2_cache_mb", g.L2MB == 0)
	add("pcie_gen", g.PCIeGen == 0)
	add("interconnect_gbps", g.InterconnectGBs == 0)
	add("tdp_w", g.TDPW == 0)
	return out
}

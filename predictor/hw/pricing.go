package hw

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// PriceKind says which price a machine's costs use.
type PriceKind string

// The kinds of price.
const (
	OnDemand  PriceKind = "on-demand"
	Spot      PriceKind = "spot"       // preemptible: cheaper, and the cloud may take the machine back
	UserPrice PriceKind = "your-price" // the user's own machine, or a price the user set
)

// BareGPUProvider is the provider of a bare GPU asked for by its id (gpu/<id>): a
// one-GPU machine with no price.
const BareGPUProvider = "gpu"

// StalePriceDays is the age beyond which a price is flagged as old.
const StalePriceDays = 90

// RegionPrice is a machine's prices in one region, in US dollars per hour (0: none).
type RegionPrice struct {
	Region   string  `json:"region"`
	PriceUSD float64 `json:"price_usd_per_hour,omitempty"`
	SpotUSD  float64 `json:"spot_usd_per_hour,omitempty"`
	SpotZone string  `json:"spot_zone,omitempty"` // the zone of the cheapest spot price
}

func (r RegionPrice) price(spot bool) float64 {
	if spot {
		return r.SpotUSD
	}
	return r.PriceUSD
}

// PriceChoice says which of a machine's prices its costs use: in Region ("" the
// cheapest region of each machine), on-demand or Spot.
type PriceChoice struct {
	Region string
	Spot   bool
}

// Kind is the kind of price the choice asks for.
func (c PriceChoice) Kind() PriceKind {
	if c.Spot {
		return Spot
	}
	return OnDemand
}

func (c PriceChoice) String() string {
	where := "the cheapest region"
	if c.Region != "" {
		where = c.Region
	}
	return fmt.Sprintf("%s prices in %s", c.Kind(), where)
}

// PriceBasis says which price a cost was computed with: its kind, region and date,
// how many days old it is (nil when the source gives no date), whether that is older
// than StalePriceDays, and, when there is no price for the choice, why.
type PriceBasis struct {
	Kind    PriceKind `json:"kind,omitempty"`
	Region  string    `json:"region,omitempty"`
	Date    string    `json:"date,omitempty"`
	AgeDays *int      `json:"age_days"`
	Stale   bool      `json:"stale,omitempty"`
	Note    string    `json:"note,omitempty"`
}

// Basis is the price basis of m as it is priced now.
func (m Machine) Basis() PriceBasis {
	return PriceBasis{Kind: m.PriceKind, Region: m.Region, Date: m.PriceDate, AgeDays: m.PriceAgeDays, Stale: m.PriceStale, Note: m.PriceNote}
}

// HasSpot reports whether m has a spot price in any region.
func (m Machine) HasSpot() bool {
	for _, r := range m.Regions {
		if r.SpotUSD > 0 {
			return true
		}
	}
	return len(m.Regions) == 0 && m.ShippedSpot != nil && len(m.ShippedSpot.Regions) > 0
}

// Priced returns m with the price the choice asks for: the user's own price for their
// machines and for a price they set (never replaced); for a machine with regional
// prices, the cheapest region's (or c.Region's) on-demand or spot price; for a catalog
// machine with one on-demand price, that price when it fits the choice. When none fits,
// the machine comes back unpriced (its cost unknown, never 0) with PriceNote saying why.
func (m Machine) Priced(c PriceChoice) Machine {
	switch {
	case m.User || m.Listing == ListingUser || m.Listing == ListingLocal || m.PriceOverridden ||
		m.Provider == UserProvider || m.Provider == LocalProvider:
		m.PriceKind = UserPrice
		return m
	case m.Provider == BareGPUProvider:
		return m // a bare GPU has no price of any kind
	}
	m.PriceKind, m.PriceNote = c.Kind(), ""
	if len(m.Regions) == 0 {
		if m.ShippedSpot != nil && !c.Spot {
			m = m.ShippedSpot.restore(m) // priced at its spot snapshot before
		}
		switch {
		case c.Spot && m.ShippedSpot != nil:
			return m.pricedFromSnapshot(c.Region)
		case c.Spot:
			return m.unpriced("no spot price: the shipped spot snapshot does not list it; import SkyPilot's catalog for spot prices (cnntime prices update)")
		case c.Region != "" && !strings.EqualFold(c.Region, m.Region):
			return m.unpriced(fmt.Sprintf("no price in region %s: its only price is for %s", c.Region, orUnknown(m.Region)))
		}
		return m
	}
	best, bestPrice := -1, 0.0
	offered := false
	for i, r := range m.Regions {
		if c.Region != "" && !strings.EqualFold(c.Region, r.Region) {
			continue
		}
		offered = true
		if p := r.price(c.Spot); p > 0 && (best < 0 || p < bestPrice) {
			best, bestPrice = i, p
		}
	}
	if best < 0 {
		switch {
		case !offered:
			return m.unpriced(fmt.Sprintf("not offered in region %s (its regions: %s)", c.Region, m.regionList()))
		case c.Region != "":
			return m.unpriced(fmt.Sprintf("no %s price in region %s", c.Kind(), c.Region))
		}
		return m.unpriced(fmt.Sprintf("no %s price in any region", c.Kind()))
	}
	r := m.Regions[best]
	m.Region, m.PriceUSDPerHour, m.SpotPriceUSDPerHour = r.Region, bestPrice, r.SpotUSD
	if m.Listing == ListingUnpriced {
		m.Listing = ListingCurrent
	}
	return m
}

func (m Machine) unpriced(why string) Machine {
	m.PriceUSDPerHour, m.SpotPriceUSDPerHour, m.Listing, m.PriceNote = 0, 0, ListingUnpriced, why
	return m
}

func (m Machine) regionList() string {
	names := make([]string, len(m.Regions))
	for i, r := range m.Regions {
		names[i] = r.Region
	}
	if len(names) > 6 {
		return strings.Join(names[:6], ", ") + fmt.Sprintf(" and %d more", len(names)-6)
	}
	return strings.Join(names, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed region"
	}
	return s
}

// Aged returns m with PriceAgeDays (nil when the price has no date) and PriceStale set
// from its PriceDate as of today. A date of a month ("2025-01") counts from its first day.
func (m Machine) Aged(today time.Time) Machine {
	m.PriceAgeDays, m.PriceStale = nil, false
	days, ok := PriceAgeDays(m.PriceDate, today)
	if ok && m.PriceKind != UserPrice {
		m.PriceAgeDays, m.PriceStale = &days, days > StalePriceDays
	}
	return m
}

// PriceAgeDays is how many whole days before today a price dated date ("2026-01-21" or
// "2025-01") is; ok is false for an empty or malformed date. A future date is 0 days old.
func PriceAgeDays(date string, today time.Time) (int, bool) {
	var t time.Time
	var err error
	switch len(date) {
	case len("2006-01-02"):
		t, err = time.Parse(time.DateOnly, date)
	case len("2006-01"):
		t, err = time.Parse("2006-01", date)
	default:
		return 0, false
	}
	if err != nil {
		return 0, false
	}
	y, mo, d := today.Date()
	days := int(math.Floor(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Sub(t).Hours() / 24))
	return max(days, 0), true
}

// PriceSource is where and when a cloud's imported prices come from.
type PriceSource struct {
	Cloud  string `json:"cloud"`
	Source string `json:"source"` // the file or address
	Date   string `json:"date"`   // YYYY-MM-DD: the day the prices are as of
}

// UnpredictableOffer is an instance type of an imported catalog that cnntime cannot
// predict: its accelerator has no performance data (or is a fraction of a GPU).
type UnpredictableOffer struct {
	Cloud            string  `json:"cloud"`
	Instance         string  `json:"instance"`
	Accelerator      string  `json:"accelerator"`
	AcceleratorCount float64 `json:"accelerator_count"`
	Why              string  `json:"why"`
}

// WithOffers returns the catalog's machines joined with imported cloud offers: a
// catalog machine whose id an offer's instance has (aws/p3.2xlarge) takes the offer's
// regional prices, date and source, keeping its own GPU and, where it has them, vCPUs
// and memory; every other offer whose accelerator maps onto a catalog GPU
// (GPUForOffer) becomes a machine of its own, with the catalog's vCPUs and memory.
// Each comes priced at its cheapest on-demand region (see Priced). Offers cnntime
// cannot predict are returned apart, one per instance type, never guessed into a GPU.
func (c *Catalog) WithOffers(offers []CloudOffer, sources map[string]PriceSource) ([]Machine, []UnpredictableOffer) {
	type group struct {
		first   CloudOffer
		regions []RegionPrice
	}
	groups := map[string]*group{}
	var ids []string
	for _, o := range offers {
		id := OfferMachineID(o.Cloud, o.Instance)
		key := strings.ToLower(id)
		g := groups[key]
		if g == nil {
			g = &group{first: o}
			groups[key] = g
			ids = append(ids, key)
		}
		g.regions = append(g.regions, RegionPrice{Region: o.Region, PriceUSD: o.PriceUSD, SpotUSD: o.SpotUSD, SpotZone: o.SpotZone})
	}
	for _, g := range groups {
		sort.Slice(g.regions, func(i, j int) bool { return g.regions[i].Region < g.regions[j].Region })
	}
	apply := func(m *Machine, g *group) {
		src := sources[g.first.Cloud]
		m.Regions, m.Accelerator = g.regions, g.first.Accelerator
		m.PriceDate, m.PriceSource = src.Date, "SkyPilot catalog "+src.Source
		if m.Listing != ListingCurrent {
			m.Listing = ListingCurrent // Priced marks it unpriced when no region has a price
		}
		if m.VCPUs == 0 {
			m.VCPUs = int(math.Round(g.first.VCPUs))
		}
		if m.MemoryGiB == 0 {
			m.MemoryGiB = g.first.MemoryGiB
		}
		*m = m.Priced(PriceChoice{})
	}
	out := make([]Machine, 0, len(c.machines)+len(groups))
	used := map[string]bool{}
	for _, m := range c.machines {
		key := strings.ToLower(m.ID)
		if g := groups[key]; g != nil && m.Listing != ListingComponent {
			apply(&m, g)
			used[key] = true
		}
		out = append(out, m)
	}
	sort.Strings(ids)
	var unknown []UnpredictableOffer
	for _, key := range ids {
		if used[key] {
			continue
		}
		g := groups[key]
		o := g.first
		gpu, n, why, ok := GPUForOffer(o)
		if ok {
			if _, err := c.GPU(gpu); err != nil {
				ok, why = false, fmt.Sprintf("no performance data: the rule's GPU %q is not in the catalog", gpu)
			}
		}
		if !ok {
			unknown = append(unknown, UnpredictableOffer{Cloud: o.Cloud, Instance: o.Instance, Accelerator: o.Accelerator, AcceleratorCount: o.AcceleratorCount, Why: why})
			continue
		}
		m := Machine{ID: OfferMachineID(o.Cloud, o.Instance), Provider: o.Cloud, Instance: o.Instance, GPUID: gpu, GPUCount: n,
			Notes: fmt.Sprintf("from SkyPilot's %s catalog: %d × %s", o.Cloud, n, o.Accelerator)}
		apply(&m, g)
		out = append(out, m)
	}
	return out, unknown
}

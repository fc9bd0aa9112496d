package hw

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// SpotPricesFile is the catalog file of shipped spot prices: a dated snapshot, per
// machine and region, of a public price catalog's spot prices, so that spot costs are
// known offline until `cnntime prices update` imports today's.
const SpotPricesFile = "spot_prices.csv"

var spotColumns = []string{"machine_id", "region", "spot_usd_per_hour", "spot_zone", "price_date", "source"}

// SpotSnapshot is a catalog machine's shipped spot prices: one per region (the
// cheapest zone's), with the day the snapshot is of and where it comes from.
type SpotSnapshot struct {
	Regions []RegionPrice
	Date    string // YYYY-MM-DD
	Source  string
	// onDemand is the machine's own catalog price, put back when it is priced
	// on-demand again after a spot price.
	onDemand catalogPrice
}

// catalogPrice is a catalog machine's on-demand price as machines.csv gives it.
type catalogPrice struct {
	region, date, source string
	price                float64
	listing              Listing
}

// restore is m with its catalog on-demand price back.
func (s *SpotSnapshot) restore(m Machine) Machine {
	p := s.onDemand
	m.Region, m.PriceUSDPerHour, m.SpotPriceUSDPerHour = p.region, p.price, 0
	m.PriceDate, m.PriceSource, m.Listing = p.date, p.source, p.listing
	return m
}

// ParseSpotPrices reads the shipped spot prices into c's machines. A row naming a
// machine the catalog lacks, a region twice, a price that is not a positive number or a
// date that is not a day is an error naming the line.
func ParseSpotPrices(data []byte, c *Catalog) error {
	t, err := readTable(SpotPricesFile, data, spotColumns)
	if err != nil {
		return err
	}
	type key struct{ machine, region string }
	seen := map[key]bool{}
	for _, r := range t.rows {
		id, err := r.required("machine_id")
		if err != nil {
			return err
		}
		region, err := r.required("region")
		if err != nil {
			return err
		}
		k := key{strings.ToLower(id), strings.ToLower(region)}
		if seen[k] {
			return r.errorf("region", "%s in %s is listed twice", id, region)
		}
		seen[k] = true
		price, err := r.number("spot_usd_per_hour")
		if err != nil {
			return err
		}
		if !(price > 0) {
			return r.errorf("spot_usd_per_hour", "%g: a spot price is a positive number of US dollars per hour", price)
		}
		date, err := r.required("price_date")
		if err != nil {
			return err
		}
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			return r.errorf("price_date", "%q is not a day such as 2026-12-07", date)
		}
		source, err := r.required("source")
		if err != nil {
			return err
		}
		i, ok := c.machIndex[strings.ToLower(id)]
		if !ok {
			return r.errorf("machine_id", "%q is not in %s", id, MachinesFile)
		}
		m := &c.machines[i]
		if m.ShippedSpot == nil {
			m.ShippedSpot = &SpotSnapshot{Date: date, Source: source,
				onDemand: catalogPrice{region: m.Region, date: m.PriceDate, source: m.PriceSource, price: m.PriceUSDPerHour, listing: m.Listing}}
		} else if m.ShippedSpot.Date != date || m.ShippedSpot.Source != source {
			return r.errorf("price_date", "%s: every region of a machine comes from one snapshot (%s, %s)", id, m.ShippedSpot.Date, m.ShippedSpot.Source)
		}
		m.ShippedSpot.Regions = append(m.ShippedSpot.Regions, RegionPrice{Region: region, SpotUSD: price, SpotZone: r.text("spot_zone")})
	}
	for i := range c.machines {
		if s := c.machines[i].ShippedSpot; s != nil {
			sort.Slice(s.Regions, func(a, b int) bool { return s.Regions[a].Region < s.Regions[b].Region })
		}
	}
	return nil
}

// pricedFromSnapshot is m priced at its shipped spot snapshot: the cheapest region's
// spot price, or region's when one is asked for, dated by the snapshot.
func (m Machine) pricedFromSnapshot(region string) Machine {
	s := m.ShippedSpot
	m = s.restore(m)
	best := -1
	for i, r := range s.Regions {
		if region != "" && !strings.EqualFold(region, r.Region) {
			continue
		}
		if best < 0 || r.SpotUSD < s.Regions[best].SpotUSD {
			best = i
		}
	}
	if best < 0 {
		names := make([]string, len(s.Regions))
		for i, r := range s.Regions {
			names[i] = r.Region
		}
		list := strings.Join(names, ", ")
		if len(names) > 6 {
			list = strings.Join(names[:6], ", ") + fmt.Sprintf(" and %d more", len(names)-6)
		}
		return m.unpriced(fmt.Sprintf("no spot price in region %s: the shipped snapshot of %s has its spot prices in %s; cnntime prices update fetches today's", region, s.Date, list))
	}
	r := s.Regions[best]
	m.Region, m.PriceUSDPerHour, m.SpotPriceUSDPerHour = r.Region, r.SpotUSD, r.SpotUSD
	m.PriceDate, m.PriceSource = s.Date, "spot snapshot "+s.Source
	m.PriceAgeDays, m.PriceStale = nil, false // of the on-demand price's date: Aged sets them again
	if m.Listing == ListingUnpriced {
		m.Listing = ListingCurrent
	}
	return m
}

// KnownRegions are the regions m has any price in: its catalog region, its imported
// regional prices and its shipped spot snapshot's.
func (m Machine) KnownRegions() []string {
	out := []string{}
	if m.Region != "" {
		out = append(out, m.Region)
	}
	for _, r := range m.Regions {
		out = append(out, r.Region)
	}
	if m.ShippedSpot != nil {
		for _, r := range m.ShippedSpot.Regions {
			out = append(out, r.Region)
		}
	}
	return out
}

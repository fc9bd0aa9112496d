package views

import (
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/hw"
)

// PriceControls are the Run tab's price settings: on-demand or spot prices, and the
// region every machine is priced in (or each machine's cheapest).
type PriceControls struct {
	Kind   *widget.Select
	Region *widget.Select
}

// MachineFilters narrow the machine list beside the GPU filter: a provider, spot
// prices available, a price ceiling (US dollars per hour, at the Run tab's prices).
type MachineFilters struct {
	Provider *widget.Select
	SpotOnly *widget.Check
	MaxPrice *widget.Entry
}

const (
	allProviders    = "All providers"
	cheapestRegion  = "Cheapest region of each"
	onDemandChoice  = "On-demand prices"
	spotPriceChoice = "Spot prices"
)

// priceItems builds the Run tab's price fields.
func (p *SelectionPanel) priceItems() []*widget.FormItem {
	s := p.session
	c := &p.Prices
	c.Kind = widget.NewSelect([]string{onDemandChoice, spotPriceChoice}, nil)
	if s.Settings().Price.Spot {
		c.Kind.SetSelected(spotPriceChoice)
	} else {
		c.Kind.SetSelected(onDemandChoice)
	}
	c.Kind.OnChanged = func(v string) {
		p.report(s.Update(func(st *app.SessionSettings) { st.Price.Spot = v == spotPriceChoice }))
		p.machines.applyFilter() // the price ceiling reads the chosen kind
	}
	c.Region = widget.NewSelect([]string{cheapestRegion}, nil)
	p.setRegions()
	c.Region.OnChanged = func(v string) {
		if v == cheapestRegion {
			v = ""
		}
		p.report(s.Update(func(st *app.SessionSettings) { st.Price.Region = v }))
		p.machines.applyFilter()
	}
	return []*widget.FormItem{
		widget.NewFormItem("Prices", c.Kind),
		widget.NewFormItem("Region", c.Region),
	}
}

// newMachineFilters builds the machine list's provider, spot and price filters.
func (p *SelectionPanel) newMachineFilters() {
	f := &p.Filters
	f.Provider = widget.NewSelect([]string{allProviders}, func(string) { p.machines.applyFilter() })
	f.Provider.SetSelected(allProviders)
	f.SpotOnly = widget.NewCheck("Spot available", func(bool) { p.machines.applyFilter() })
	f.MaxPrice = widget.NewEntry()
	f.MaxPrice.SetPlaceHolder("max $/h")
	f.MaxPrice.Validator = func(s string) error {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		_, err := hw.ParsePrice(s)
		return err
	}
	f.MaxPrice.OnChanged = func(string) { p.machines.applyFilter() }
}

// passesFilters reports whether a machine passes the provider, spot and price filters.
func (p *SelectionPanel) passesFilters(m hw.Machine) bool {
	f := p.Filters
	if f.Provider != nil && f.Provider.Selected != "" && f.Provider.Selected != allProviders && providerTitle(m.Provider) != f.Provider.Selected {
		return false
	}
	if f.SpotOnly != nil && f.SpotOnly.Checked && !m.HasSpot() {
		return false
	}
	if f.MaxPrice != nil && strings.TrimSpace(f.MaxPrice.Text) != "" {
		limit, err := hw.ParsePrice(f.MaxPrice.Text)
		if err == nil {
			price := app.PriceMachine(m, p.session.Settings().Price).PriceUSDPerHour
			return price > 0 && price <= limit
		}
	}
	return true
}

// setProviders offers the listed machines' providers in the provider filter.
func (p *SelectionPanel) setProviders() {
	if p.Filters.Provider == nil {
		return
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range p.list {
		if t := providerTitle(m.Provider); !seen[t] {
			seen[t] = true
			names = append(names, t)
		}
	}
	sort.Strings(names)
	p.Filters.Provider.Options = append([]string{allProviders}, names...)
	p.Filters.Provider.Refresh()
}

// setRegions offers every region a listed machine has a price in, keeping the choice.
func (p *SelectionPanel) setRegions() {
	if p.Prices.Region == nil {
		return
	}
	seen := map[string]bool{}
	var regions []string
	add := func(r string) {
		if r != "" && !seen[r] {
			seen[r] = true
			regions = append(regions, r)
		}
	}
	for _, m := range p.list {
		add(m.Region)
		for _, r := range m.Regions {
			add(r.Region)
		}
	}
	sort.Strings(regions)
	chosen := p.session.Settings().Price.Region
	add(chosen) // a remembered region stays choosable
	p.Prices.Region.Options = append([]string{cheapestRegion}, regions...)
	cb := p.Prices.Region.OnChanged
	p.Prices.Region.OnChanged = nil
	if chosen == "" {
		p.Prices.Region.SetSelected(cheapestRegion)
	} else {
		p.Prices.Region.SetSelected(chosen)
	}
	p.Prices.Region.OnChanged = cb
}

// priceLines are a machine tooltip's price lines: the price the Run tab's choice gives
// (kind, region, date, age, OLD beyond hw.StalePriceDays) or why there is none, and
// its spot price and regions when imported.
func priceLines(m hw.Machine, choice hw.PriceChoice) []string {
	pm := app.PriceMachine(m, choice)
	var lines []string
	if pm.PriceUSDPerHour > 0 {
		line := "$" + dollars(pm.PriceUSDPerHour) + " per hour"
		if pm.PriceKind != "" {
			line += ", " + string(pm.PriceKind)
		}
		if pm.Region != "" {
			line += ", " + pm.Region
		}
		if pm.PriceDate != "" {
			line += " (" + pm.PriceDate
			if pm.PriceAgeDays != nil {
				line += ", " + strconv.Itoa(*pm.PriceAgeDays) + " days old"
			}
			line += ")"
		}
		if pm.PriceStale {
			line += " — OLD: older than " + strconv.Itoa(hw.StalePriceDays) + " days"
		}
		lines = append(lines, line)
	} else if pm.PriceNote != "" {
		lines = append(lines, "no price: "+pm.PriceNote)
	} else {
		lines = append(lines, "price unknown")
	}
	if len(m.Regions) > 0 {
		spot := "no spot price"
		if m.HasSpot() {
			spot = "spot prices"
		}
		lines = append(lines, strconv.Itoa(len(m.Regions))+" regions, "+spot+" (SkyPilot's catalog)")
	} else if s := m.ShippedSpot; s != nil {
		lines = append(lines, "spot prices in "+strconv.Itoa(len(s.Regions))+" regions (shipped snapshot of "+s.Date+"; cnntime prices update fetches today's)")
	}
	return lines
}

package prices

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"cnntime/app/shipped"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// Gaps says, for the curves whose machine has no price for the choice (so no
// cost and no place on a cost axis), why and what fixes it: a sentence per reason,
// naming the machines. It is empty when every curve has a price.
func Gaps(curves []predictor.Curve, choice hw.PriceChoice) []string {
	var spot, region, own, bare, other []string
	seen := map[string]bool{}
	for i := range curves {
		c := &curves[i]
		if c.CostKnown || c.Unavailable != "" || seen[c.Machine] {
			continue
		}
		seen[c.Machine] = true
		provider, _, _ := strings.Cut(c.Machine, "/")
		switch {
		case provider == hw.BareGPUProvider:
			bare = append(bare, c.Machine)
		case c.Price.Kind == hw.UserPrice || provider == hw.UserProvider || provider == hw.LocalProvider:
			own = append(own, c.Machine)
		case choice.Region != "" && strings.Contains(c.Price.Note, "region"):
			region = append(region, c.Machine)
		case choice.Spot:
			spot = append(spot, c.Machine)
		default:
			other = append(other, c.Machine)
		}
	}
	var out []string
	if len(spot) > 0 {
		out = append(out, fmt.Sprintf("No spot price for %s (cnntime ships %s): File → Update prices from SkyPilot… fetches today's, or pick on-demand prices in the Run tab.",
			names(spot), shippedSpotText()))
	}
	if len(region) > 0 {
		out = append(out, fmt.Sprintf("No %s price in region %s for %s: pick \"cheapest region\" or another region in the Run tab.",
			choice.Kind(), choice.Region, names(region)))
	}
	if len(own) > 0 {
		out = append(out, fmt.Sprintf("No price for %s: give your machine its price with cnntime machine set-price %s DOLLARS_PER_HOUR.", names(own), own[0]))
	}
	if len(bare) > 0 {
		out = append(out, fmt.Sprintf("No price for %s: a bare GPU is not a machine one rents; pick a machine with that GPU.", names(bare)))
	}
	if len(other) > 0 {
		out = append(out, fmt.Sprintf("No public %s price for %s: give one with cnntime machine set-price.", choice.Kind(), names(other)))
	}
	return out
}

func names(ids []string) string {
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

// shippedSpotText says which spot prices cnntime ships: "AWS's spot prices of
// 2026-12-07", from the catalog's snapshot.
func shippedSpotText() string {
	c, err := shipped.Catalog()
	if err != nil {
		return "no spot prices"
	}
	dates, providers := map[string]bool{}, map[string]bool{}
	for _, m := range c.Machines() {
		if m.ShippedSpot != nil && m.ShippedSpot.Date != "" && m.Provider != "" {
			dates[m.ShippedSpot.Date] = true
			providers[strings.ToUpper(m.Provider)] = true
		}
	}
	if len(dates) == 0 {
		return "no spot prices"
	}
	return strings.Join(slices.Sorted(maps.Keys(providers)), " and ") + "'s spot prices of " + strings.Join(slices.Sorted(maps.Keys(dates)), ", ")
}

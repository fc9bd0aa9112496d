package hw

import (
	"fmt"
	"math"
	"strconv"
)

// What a price catalog may hold, so that no file (downloaded, imported, or brought by
// another cache) can make the commands that read prices slow. SkyPilot's real catalogs
// (skypilot-catalog, catalogs/v7 and v8, 2025–2026) are far below every bound: AWS's
// vms.csv, the largest, has about 40,000 rows (every instance type in every zone; 3.1
// MB), of which a few hundred instance types and about 2,000 instance types × regions
// carry an accelerator; GCP's has about 35,000 rows, Azure's about 6,000 (0.35 MB),
// Lambda's, RunPod's and the smaller clouds' a few hundred. The bounds leave a margin of
// about six to ten times. A file beyond them is refused whole, naming the line where it
// went over; nothing is trimmed silently.
const (
	// MaxCatalogRows bounds the data rows of one vms.csv.
	MaxCatalogRows = 250_000
	// MaxCloudInstanceTypes bounds one cloud's instance types with an accelerator, and
	// MaxCloudOffers its instance types × regions with an accelerator.
	MaxCloudInstanceTypes = 2_000
	MaxCloudOffers        = 20_000
	// MaxStoredOffers bounds the instance types × regions of every cloud the cache
	// holds together, and MaxPriceClouds the clouds.
	MaxStoredOffers = 50_000
	MaxPriceClouds  = 64
)

// The largest figures one offer may have; beyond them a figure is a mistake, not an
// instance. The largest real instances: 16 GPUs (AWS p2.16xlarge, GCP a2-megagpu-16g),
// 896 vCPUs and 32 TiB of memory (AWS u7in-32tb.224xlarge).
const (
	MaxOfferVCPUs     = 4096
	MaxOfferMemoryGiB = 1 << 17
)

// ParseDecimal reads a number as people and catalogs write it: digits with an optional
// sign, fraction and exponent ("1.25", "0", ".5", "2e-3"). Go's other float forms are
// refused: hexadecimal ("0x1p4" is 16), digits separated by underscores ("1_0.5"),
// "Inf" and "NaN", as is a number too large for a float64. ok is false for anything
// else.
func ParseDecimal(s string) (v float64, ok bool) {
	if !decimal.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// CheckOffer refuses an offer whose figures no instance has: a price or spot price
// that is not a finite number from 0 to MaxPriceUSDPerHour, an accelerator count above
// MaxMachineGPUs, vCPUs above MaxOfferVCPUs or memory above MaxOfferMemoryGiB (and any
// of them negative or not finite). The error names the figure and the bound.
func CheckOffer(o CloudOffer) error {
	for _, f := range []struct {
		name  string
		value float64
		max   float64
		unit  string
	}{
		{"Price", o.PriceUSD, MaxPriceUSDPerHour, "US dollars an hour"},
		{"SpotPrice", o.SpotUSD, MaxPriceUSDPerHour, "US dollars an hour"},
		{"AcceleratorCount", o.AcceleratorCount, MaxMachineGPUs, "GPUs (more train as several nodes)"},
		{"vCPUs", o.VCPUs, MaxOfferVCPUs, "vCPUs"},
		{"MemoryGiB", o.MemoryGiB, MaxOfferMemoryGiB, "GiB"},
	} {
		switch {
		case math.IsNaN(f.value) || math.IsInf(f.value, 0):
			return &OfferError{Field: f.name, Msg: fmt.Sprintf("%v is not a number", f.value)}
		case f.value < 0:
			return &OfferError{Field: f.name, Msg: fmt.Sprintf("%g is negative", f.value)}
		case f.value > f.max:
			return &OfferError{Field: f.name, Msg: fmt.Sprintf("%g is more than any instance has (at most %g %s)", f.value, f.max, f.unit)}
		}
	}
	return nil
}

// OfferError is an offer figure CheckOffer refuses: the catalog column and what is wrong.
type OfferError struct {
	Field string
	Msg   string
}

func (e *OfferError) Error() string { return e.Field + " " + e.Msg }

// tooLarge says that a catalog holds more of what than cnntime keeps (limit), and how
// many a real one has.
func tooLarge(what string, limit int, real string) string {
	return fmt.Sprintf("the catalog holds more than %d %s, more than any cloud's catalog (SkyPilot's largest, AWS's, has %s): "+
		"it is not a SkyPilot catalog cnntime keeps; import the cloud's own vms.csv", limit, what, real)
}

package cli

import (
	"strconv"
	"strings"

	"cnntime/app/numfmt"
)

// The tables' and lines' numbers, written as the window writes them (numfmt): batches
// with thousands separators, times per iteration to three significant digits,
// durations in the unit that suits them, dollars to the cent and below.

// countText is a batch or another whole number: "2,816".
func countText(n int) string { return numfmt.Count(int64(n)) }

// countsText is whole numbers for a table, "512 1,024 2,048", "-" for none (the CSV's
// cells keep intsText's digits alone).
func countsText(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = countText(x)
	}
	return strings.Join(parts, " ")
}

// iterText is a time per iteration with its band: "110 ±17%".
func iterText(ms, errorPct float64) string { return string(appendIter(nil, ms, errorPct)) }

// appendIter appends iterText(ms, errorPct).
func appendIter(b []byte, ms, errorPct float64) []byte {
	b = numfmt.AppendMSNumber(b, ms)
	b = append(b, " ±"...)
	b = strconv.AppendFloat(b, errorPct, 'f', 0, 64)
	return append(b, '%')
}

// duration is a time in seconds as people read it: "9.9 s", "4.8 min", "5.2 h".
func duration(s float64) string { return numfmt.Seconds(s) }

// usdText is a cost, "unknown" without a price: "$0.0042", "$12.34".
func usdText(usd *float64) string {
	if usd == nil {
		return "unknown"
	}
	return numfmt.USD(*usd)
}

// kwhText is an energy, "unknown" without the GPU's power: "0.012 kWh".
func kwhText(kwh *float64) string {
	if kwh == nil {
		return "unknown"
	}
	return numfmt.KWh(*kwh)
}

// msText is a time in milliseconds for a column whose header names the unit: "84.2",
// "<0.001".
func msText(ms float64) string { return string(numfmt.AppendMSNumber(nil, ms)) }

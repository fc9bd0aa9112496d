package numfmt

import (
	"math"
	"strconv"
)

// Count writes an integer with thousands separators: "1,281,167", "-1,024".
func Count(n int64) string { return string(AppendCount(nil, n)) }

// AppendCount appends Count(n).
func AppendCount(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		if n == math.MinInt64 {
			return append(b, "9,223,372,036,854,775,808"...)
		}
		n = -n
	}
	if n < 1000 {
		return strconv.AppendInt(b, n, 10)
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	return b
}

// Decimal writes v with the given number of decimals and thousands separators in its
// whole part: Decimal(1234.56, 1) is "1,234.6".
func Decimal(v float64, decimals int) string { return string(AppendDecimal(nil, v, decimals)) }

// AppendDecimal appends Decimal(v, decimals).
func AppendDecimal(b []byte, v float64, decimals int) []byte {
	if bad(v) {
		return append(b, "–"...)
	}
	if math.Abs(v) < 1000 {
		return strconv.AppendFloat(b, v, 'f', decimals, 64)
	}
	var buf [64]byte
	s := strconv.AppendFloat(buf[:0], v, 'f', decimals, 64)
	if s[0] == '-' {
		b, s = append(b, '-'), s[1:]
	}
	whole := len(s)
	for i, c := range s {
		if c == '.' {
			whole = i
			break
		}
	}
	if whole > 18 { // past int64's digits: the float's own text, no separators
		return append(b, s...)
	}
	for i, c := range s[:whole] {
		if i > 0 && (whole-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	return append(b, s[whole:]...)
}

// Sig writes v to digits significant digits, with thousands separators in the whole
// part: Sig(84.23, 3) "84.2", Sig(0.17, 3) "0.170", Sig(3, 3) "3.00", Sig(1234.6, 3)
// "1,235" (a whole part is never rounded away).
func Sig(v float64, digits int) string { return string(AppendSig(nil, v, digits)) }

// AppendSig appends Sig(v, digits).
func AppendSig(b []byte, v float64, digits int) []byte {
	if bad(v) {
		return append(b, "–"...)
	}
	if v == 0 {
		return append(b, '0')
	}
	decimals := max(digits-1-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	return AppendDecimal(b, v, decimals)
}

// MS writes a time in milliseconds to three significant digits: "0.840 ms", "84.2 ms",
// "1,234 ms", and a time under a microsecond "<0.001 ms", never a row of zeros.
func MS(ms float64) string { return string(AppendMS(nil, ms)) }

// AppendMS appends MS(ms).
func AppendMS(b []byte, ms float64) []byte {
	if bad(ms) || ms < 0 {
		return append(b, "–"...)
	}
	return append(AppendMSNumber(b, ms), " ms"...)
}

// AppendMSNumber appends MS(ms) without its unit, for a column whose header names it.
func AppendMSNumber(b []byte, ms float64) []byte {
	switch {
	case bad(ms) || ms < 0:
		return append(b, "–"...)
	case ms > 0 && ms < 0.0005:
		return append(b, "<0.001"...)
	}
	return AppendSig(b, ms, 3)
}

// Seconds writes a duration in the unit that suits it, to a tenth: "850 ms", "12.3 s",
// "14.5 min", "5.2 h" (under two days), "3.1 days", "1,234.5 days".
func Seconds(s float64) string { return string(AppendSeconds(nil, s)) }

// AppendSeconds appends Seconds(s).
func AppendSeconds(b []byte, s float64) []byte {
	switch {
	case bad(s) || s < 0:
		return append(b, "–"...)
	case s < 1:
		return AppendMS(b, s*1000)
	case s < 59.95:
		return append(strconv.AppendFloat(b, s, 'f', 1, 64), " s"...)
	case s < 3600-3:
		return append(strconv.AppendFloat(b, s/60, 'f', 1, 64), " min"...)
	case s < 48*3600-180:
		return append(strconv.AppendFloat(b, s/3600, 'f', 1, 64), " h"...)
	}
	return append(AppendDecimal(b, s/86400, 1), " days"...)
}

// USD writes an amount of US dollars: "$0.42", "$12.34", "$1,234", and an amount under a
// cent to two significant digits, "$0.0042", never "$0.00"; "-$0.42" below zero.
func USD(usd float64) string { return string(AppendUSD(nil, usd)) }

// AppendUSD appends USD(usd).
func AppendUSD(b []byte, usd float64) []byte {
	switch {
	case bad(usd):
		return append(b, "–"...)
	case usd < 0:
		return AppendUSD(append(b, '-'), -usd)
	case usd > 0 && usd < 0.00995:
		return AppendSig(append(b, '$'), usd, 2)
	case usd < 999.995:
		return strconv.AppendFloat(append(b, '$'), usd, 'f', 2, 64)
	}
	return AppendDecimal(append(b, '$'), math.Round(usd), 0)
}

// USDPerHour writes a price per hour to four significant digits: "$0.526/h",
// "$21.96/h", "$1,234/h".
func USDPerHour(usd float64) string {
	if bad(usd) || usd < 0 {
		return "–"
	}
	return "$" + rounded(usd, 4) + "/h"
}

// KWh writes an energy in kilowatt-hours: "6.7 kWh", and under 1 kWh to two significant
// digits, "0.012 kWh", never "0.0 kWh".
func KWh(kwh float64) string { return string(AppendKWh(nil, kwh)) }

// AppendKWh appends KWh(kwh).
func AppendKWh(b []byte, kwh float64) []byte {
	switch {
	case bad(kwh) || kwh < 0:
		return append(b, "–"...)
	case kwh > 0 && kwh < 0.995:
		return append(AppendSig(b, kwh, 2), " kWh"...)
	}
	return append(AppendDecimal(b, kwh, 1), " kWh"...)
}

// Rate writes images per second: whole images from 100 up, with thousands separators
// ("1,875", "454,273"), and three significant digits below ("15.7", "0.170"), never "0"
// for a rate that is not.
func Rate(v float64) string { return string(AppendRate(nil, v)) }

// AppendRate appends Rate(v).
func AppendRate(b []byte, v float64) []byte {
	switch {
	case bad(v) || v < 0:
		return append(b, "–"...)
	case v < 99.95:
		return AppendSig(b, v, 3)
	}
	return AppendCount(b, int64(math.Round(v)))
}

// Share writes part of whole as a percentage with one decimal, "42.3%": "<0.1%" for a
// part that is not zero but rounds to it, "–" when there is no whole.
func Share(part, whole float64) string {
	if !(whole > 0) || bad(part) {
		return "–"
	}
	f := 100 * part / whole
	if f > 0 && f < 0.05 {
		return "<0.1%"
	}
	if f < 0 && f > -0.05 {
		f = 0 // a rounding error's "-0.0%"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + "%"
}

// Tick writes an axis tick's value as a plain decimal with thousands separators, as
// few digits as it needs: "0.005", "2.5", "100,000", "1,000,000".
func Tick(v float64) string {
	if bad(v) {
		return ""
	}
	if a := math.Abs(v); a >= 1e15 || (a > 0 && a < 1e-9) {
		return strconv.FormatFloat(v, 'g', 3, 64) // beyond any axis cnntime draws
	}
	// 12 significant digits remove floating-point noise (0.30000000000000004).
	return rounded(v, 12)
}

// rounded writes v rounded to digits significant digits, with no more decimals than it
// then needs and thousands separators: rounded(0.52604, 4) "0.526", rounded(1234.6, 4)
// "1,235".
func rounded(v float64, digits int) string {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	b := strconv.AppendFloat(nil, f, 'f', -1, 64)
	decimals := 0
	for i, c := range b {
		if c == '.' {
			decimals = len(b) - i - 1
			break
		}
	}
	return Decimal(f, decimals)
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

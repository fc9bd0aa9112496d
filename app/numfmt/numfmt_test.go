package numfmt

import (
	"math"
	"testing"
)

// TestNumbersAsPeopleReadThem pins the one way cnntime writes a number, with the
// figures issue 43 found printed badly: a CPU's host phase of 9.95e-14 ms written as
// "0.0000000000000995 ms", CIFAR's costs as "$0.00", a CPU's 0.17 images/s as "0",
// "2816" beside "1,664", and axis ticks mixing "1e+06" with "100000".
func TestNumbersAsPeopleReadThem(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"count", Count(1281167), "1,281,167"},
		{"count under a thousand", Count(999), "999"},
		{"batch beside a range", Count(2816), "2,816"},
		{"negative count", Count(-1024), "-1,024"},
		{"smallest int64", Count(math.MinInt64), "-9,223,372,036,854,775,808"},
		{"decimal", Decimal(1234.56, 1), "1,234.6"},
		{"negative decimal", Decimal(-1234567.5, 0), "-1,234,568"},
		{"sig", Sig(84.23, 3), "84.2"},
		{"sig keeps its digits", Sig(0.17, 3), "0.170"},
		{"sig keeps the whole part", Sig(1234.6, 3), "1,235"},
		{"sig of zero", Sig(0, 3), "0"},
		{"ms", MS(84.23), "84.2 ms"},
		{"ms over a thousand", MS(1234.4), "1,234 ms"},
		{"ms under a microsecond", MS(9.95e-14), "<0.001 ms"},
		{"ms of nothing", MS(0), "0 ms"},
		{"ms unknown", MS(math.NaN()), "–"},
		{"seconds under one", Seconds(0.85), "850 ms"},
		{"seconds", Seconds(12.34), "12.3 s"},
		{"seconds that round to a minute", Seconds(59.97), "1.0 min"},
		{"minutes", Seconds(870), "14.5 min"},
		{"hours", Seconds(5.2 * 3600), "5.2 h"},
		{"days", Seconds(3.1 * 86400), "3.1 days"},
		{"many days", Seconds(1234.5 * 86400), "1,234.5 days"},
		{"no duration", Seconds(-1), "–"},
		{"usd under a cent", USD(0.0042), "$0.0042"},
		{"usd cents", USD(0.02), "$0.02"},
		{"usd just under a cent rounds to one", USD(0.00996), "$0.01"},
		{"usd", USD(12.345), "$12.35"},
		{"usd thousands", USD(1234.4), "$1,234"},
		{"usd zero", USD(0), "$0.00"},
		{"usd negative", USD(-0.42), "-$0.42"},
		{"price per hour", USDPerHour(0.526), "$0.526/h"},
		{"price per hour over a thousand", USDPerHour(1234.6), "$1,235/h"},
		{"kwh", KWh(6.72), "6.7 kWh"},
		{"kwh small", KWh(0.0123), "0.012 kWh"},
		{"rate", Rate(454273.4), "454,273"},
		{"rate small", Rate(0.17), "0.170"},
		{"rate tens", Rate(15.72), "15.7"},
		{"rate just under a hundred", Rate(99.96), "100"},
		{"share", Share(1, 3), "33.3%"},
		{"share tiny", Share(1e-13, 1), "<0.1%"},
		{"tick million", Tick(1e6), "1,000,000"},
		{"tick hundred thousand", Tick(100000), "100,000"},
		{"tick small", Tick(0.005), "0.005"},
		{"tick noise", Tick(0.1 + 0.2), "0.3"},
		{"tick fraction", Tick(2.5), "2.5"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestAppendFormsAppend checks the Append forms add to what the buffer holds.
func TestAppendFormsAppend(t *testing.T) {
	b := []byte("x=")
	b = AppendSeconds(b, 90)
	b = append(b, ' ')
	b = AppendUSD(b, 0.004)
	if got := string(b); got != "x=1.5 min $0.0040" {
		t.Errorf("%q", got)
	}
}

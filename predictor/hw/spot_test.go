package hw

import (
	"strings"
	"testing"
)

const spotHeader = "machine_id,region,spot_usd_per_hour,spot_zone,price_date,source\n"

func TestParseSpotPrices(t *testing.T) {
	tests := []struct {
		name, rows string
		err        string // "" for none
	}{
		{"two regions", "aws/p3.2xlarge,us-east-1,0.48,use1-az2,2026-12-07,snap\naws/p3.2xlarge,eu-central-1,0.39,euc1-az3,2026-12-07,snap\n", ""},
		{"unknown machine", "aws/p9.xlarge,us-east-1,0.48,,2026-12-07,snap\n", `line 2, field machine_id: "aws/p9.xlarge" is not in machines.csv`},
		{"region twice", "aws/p3.2xlarge,us-east-1,0.48,,2026-12-07,snap\naws/p3.2xlarge,US-EAST-1,0.5,,2026-12-07,snap\n", "line 3, field region: aws/p3.2xlarge in US-EAST-1 is listed twice"},
		{"zero price", "aws/p3.2xlarge,us-east-1,0,,2026-12-07,snap\n", "a spot price is a positive number"},
		{"not a day", "aws/p3.2xlarge,us-east-1,0.48,,2026-12,snap\n", `"2026-12" is not a day`},
		{"two snapshots", "aws/p3.2xlarge,us-east-1,0.48,,2026-12-07,snap\naws/p3.2xlarge,us-west-2,0.5,,2026-12-08,snap\n", "every region of a machine comes from one snapshot"},
	}
	for _, tc := range tests {
		c, err := ParseCatalog([]byte(gpuHeader+gpuV100+gpuT4), []byte(machineHeader+machineP3+machineG4))
		if err != nil {
			t.Fatal(err)
		}
		err = ParseSpotPrices([]byte(spotHeader+tc.rows), c)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.err)
		case tc.err == "":
			m, _ := c.Machine("aws/p3.2xlarge")
			s := m.ShippedSpot
			if s == nil || len(s.Regions) != 2 || s.Regions[0].Region != "eu-central-1" || s.Regions[0].SpotUSD != 0.39 || s.Date != "2026-12-07" {
				t.Errorf("%s: snapshot %+v; want two regions by name, eu-central-1 at $0.39, of 2026-12-07", tc.name, s)
			}
			if p := m.Priced(PriceChoice{Spot: true}); p.PriceUSDPerHour != 0.39 || p.Region != "eu-central-1" || p.PriceDate != "2026-12-07" || !m.HasSpot() {
				t.Errorf("%s: spot price $%g in %s of %s; want $0.39 in eu-central-1 of 2026-12-07", tc.name, p.PriceUSDPerHour, p.Region, p.PriceDate)
			}
			if g, _ := c.Machine("aws/g4dn.xlarge"); g.HasSpot() || g.ShippedSpot != nil {
				t.Errorf("%s: a machine the snapshot does not list has spot prices", tc.name)
			}
		}
	}
}

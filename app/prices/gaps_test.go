package prices_test

import (
	"strings"
	"testing"

	"cnntime/app/prices"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

func TestPriceGaps(t *testing.T) {
	curve := func(machine string, known bool, kind hw.PriceKind, note string) predictor.Curve {
		return predictor.Curve{Model: "resnet50", Machine: machine, CostKnown: known, Price: hw.PriceBasis{Kind: kind, Note: note}}
	}
	tests := []struct {
		name   string
		curves []predictor.Curve
		choice hw.PriceChoice
		want   []string
	}{
		{"every machine priced", []predictor.Curve{curve("aws/g6.xlarge", true, hw.Spot, "")}, hw.PriceChoice{Spot: true}, nil},
		{"spot missing", []predictor.Curve{curve("lambda/gpu_1x_h100_sxm5", false, hw.Spot, "no spot price"), curve("gcp/a2-highgpu-1g", false, hw.Spot, "no spot price"),
			curve("aws/g6.xlarge", true, hw.Spot, "")}, hw.PriceChoice{Spot: true},
			[]string{"No spot price for gcp/a2-highgpu-1g, lambda/gpu_1x_h100_sxm5 (cnntime ships AWS's spot prices of 2026-12-07): File → Update prices from SkyPilot… fetches today's, or pick on-demand prices in the Run tab."}},
		{"a region", []predictor.Curve{curve("aws/p3.2xlarge", false, hw.OnDemand, "no price in region eu-west-9: its only price is for us-east-1")}, hw.PriceChoice{Region: "eu-west-9"},
			[]string{`No on-demand price in region eu-west-9 for aws/p3.2xlarge: pick "cheapest region" or another region in the Run tab.`}},
		{"own machine, once for two models", []predictor.Curve{curve("local/cpu", false, hw.UserPrice, ""), curve("local/cpu", false, hw.UserPrice, "")}, hw.PriceChoice{},
			[]string{"No price for local/cpu: give your machine its price with cnntime machine set-price local/cpu DOLLARS_PER_HOUR."}},
		{"unpriced listing", []predictor.Curve{curve("azure/Standard_ND128isr_NDR_GB200_v6", false, hw.OnDemand, "")}, hw.PriceChoice{},
			[]string{"No public on-demand price for azure/Standard_ND128isr_NDR_GB200_v6: give one with cnntime machine set-price."}},
	}
	for _, tc := range tests {
		got := prices.Gaps(tc.curves, tc.choice)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

package validate

import "testing"

func TestPublicGPUNames(t *testing.T) {
	tests := []struct{ name, want string }{
		{"1080 Ti", "gtx-1080-ti"},
		{"GTX 1080 Ti", "gtx-1080-ti"},
		{"2080 Ti (CUDA 10.0.130, CuDNN 7.4.2.24)", "rtx-2080-ti"},
		{"V100 (Amazon p3, CUDA 9.0.176, CuDNN 7.0.0.3)", "v100-sxm2-16gb"},
		{"Tesla K80", "k80"},
		{"GTX 1080", ""}, // not in the catalog
		{"Maxwell Titan X", ""},
	}
	for _, tc := range tests {
		if got := publicGPU(tc.name); got != tc.want {
			t.Errorf("publicGPU(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBySource(t *testing.T) {
	rows := []PublicComparison{
		{Source: "b", ErrorPct: 10}, {Source: "a", ErrorPct: -20}, {Source: "b", ErrorPct: -30},
		{Source: tuningSource, ErrorPct: 5},
	}
	got := BySource(rows)
	want := []PublicSourceAccuracy{
		{Source: "a", Rows: 1, MAPEPct: 20, BiasPct: -20, Set: "held out"},
		{Source: "b", Rows: 2, MAPEPct: 20, BiasPct: -10, Set: "held out"},
		{Source: tuningSource, Rows: 1, MAPEPct: 5, BiasPct: 5, Set: "tuning", Caveats: publicCaveats[tuningSource]},
	}
	if len(got) != len(want) {
		t.Fatalf("BySource gave %d sources, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("source %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

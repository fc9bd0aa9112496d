package hw

import "testing"

func TestParseComputeCapability(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{{"8.6", 86}, {"7.0", 70}, {" 9.0 ", 90}, {"3.7", 37}, {"", 0}, {"x.y", 0}, {"8", 80}, {"10.0", 100}, {"12.1", 121},
		{"8.x", 80}, {"8.", 80}, {".6", 0}, {"1a.0", 0}, {"10.", 100}, {"100.0", 1000}, {"8.10", 80}, {"8:6", 0}, {"-1.0", 0}}
	for _, tc := range tests {
		if got := ParseComputeCapability(tc.in); got != tc.want {
			t.Errorf("ParseComputeCapability(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestFamilyOf(t *testing.T) {
	tests := []struct {
		cc   string
		want Family
	}{
		{"7.0", FamilyVolta}, {"7.5", FamilyTuring}, {"8.0", FamilyGA100}, {"8.6", FamilyGA10x},
		{"8.9", FamilyAda}, {"9.0", FamilyHopper}, {"10.0", FamilyBlackwell}, {"10.3", FamilyBlackwell},
		{"12.0", FamilyGB20x}, {"12.1", FamilyGB20x}, {"11.0", FamilyUnknown}, {"6.1", FamilyUnknown}, {"", FamilyUnknown},
	}
	for _, tc := range tests {
		if got := FamilyOf(GPU{ComputeCapability: tc.cc}); got != tc.want {
			t.Errorf("FamilyOf(cc %q) = %v, want %v", tc.cc, got, tc.want)
		}
	}
}

func TestFamilyNames(t *testing.T) {
	names := FamilyNames()
	if len(names) != int(NumFamilies)-1 || names[0] != "volta" || names[len(names)-1] != "gb20x" {
		t.Errorf("FamilyNames() = %v", names)
	}
	names[0] = "changed"
	if FamilyVolta.String() != "volta" {
		t.Error("FamilyNames returned the package's own array")
	}
}

package hw

import "testing"

func TestLaunchMonth(t *testing.T) {
	tests := []struct {
		cc   string
		want string
		ok   bool
	}{
		{"3.7", "2012-11", true}, {"6.0", "2016-05", true}, {"7.0", "2017-06", true}, {"7.5", "2018-09", true},
		{"8.0", "2020-05", true}, {"8.6", "2020-09", true}, {"8.9", "2022-10", true}, {"9.0", "2022-10", true},
		{"10.0", "2024-12", true}, {"10.3", "2024-12", true}, {"12.0", "2025-01", true},
		{"2.1", "", false}, {"", "", false}, {"7.3", "", false},
	}
	for _, tc := range tests {
		m, ok := LaunchMonth(GPU{ComputeCapability: tc.cc})
		if ok != tc.ok || (ok && m.String() != tc.want) {
			t.Errorf("LaunchMonth(%q) = %s, %t; want %s, %t", tc.cc, m, ok, tc.want, tc.ok)
		}
	}
	if m := MonthOf(2024, 1); m.Year() != 2024 || m.MonthOfYear() != 1 || m-MonthOf(2023, 12) != 1 {
		t.Errorf("MonthOf(2024, 1) = %d: year %d, month %d", m, m.Year(), m.MonthOfYear())
	}
}

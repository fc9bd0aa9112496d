package cli

import (
	"testing"
)

func TestValidateRejectsBadCPUFlags(t *testing.T) {
	for _, args := range [][]string{
		{"validate", "--rounds", "0"},
		{"validate", "--repeats", "-1"},
		{"validate", "--rounds", "x"},
	} {
		code, _, errOut := runPredictCLI(t, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d with %q; want exit 2 and a message", args, code, errOut)
		}
	}
}

package cli

import (
	"flag"
	"strings"
	"testing"
)

// Every numeric flag of every command reads one syntax, the one a person writes: decimal
// digits with an optional sign (and, for a number that may have a fraction, a point and an
// exponent). Go's own syntax — 0x10, 0b11, 0o17, 010 as octal, 1_0, 0x1p4, NaN, Inf — is
// refused with the same sentence on integer and float flags, and 010 is ten.
func TestEveryNumericFlagTakesDecimalOnly(t *testing.T) {
	refused := []string{"0x10", "0X10", "0b11", "0o17", "1_0", "1_000", "0x1p4", "NaN", "Inf", "-Inf", "1e", " 7", "7 ", "", "+"}
	ints, floats := 0, 0
	for _, c := range Commands() {
		for _, s := range commandFlagSets(c) {
			s.fs.VisitAll(func(f *flag.Flag) {
				// A number takes "7" and refuses a word; strings, choices, durations and
				// switches do not.
				if isBoolFlag(f) || f.Value.Set("7") != nil || f.Value.Set("seven") == nil {
					return
				}
				name := s.name + " --" + f.Name
				whole := f.Value.Set("2.5") != nil
				if whole {
					ints++
				} else {
					floats++
				}
				for _, in := range refused {
					err := f.Value.Set(in)
					if err == nil {
						t.Errorf("%s %q: taken (as %s); want it refused as not a decimal number", name, in, f.Value.String())
						continue
					}
					if !strings.Contains(err.Error(), "is not a decimal number") {
						t.Errorf("%s %q: %v; want the float flags' sentence, \"is not a decimal number\"", name, in, err)
					}
				}
				if err := f.Value.Set("010"); err != nil || f.Value.String() != "10" {
					t.Errorf("%s 010: %v, read as %s; want ten, as a person reads it", name, err, f.Value.String())
				}
				if err := f.Value.Set("+12"); err != nil || f.Value.String() != "12" {
					t.Errorf("%s +12: %v, read as %s; want 12", name, err, f.Value.String())
				}
				if whole {
					if err := f.Value.Set("2.5"); err == nil || !strings.Contains(err.Error(), `"2.5" is not a whole number`) {
						t.Errorf("%s 2.5: %v; want it refused as not a whole number", name, err)
					}
				}
			})
		}
	}
	// The probe found the numeric flags: predict's --batch and --epochs, export's --width,
	// sweep's --repeats, … and the float flags (--network-gbps, --price, --budget, …).
	if ints < 25 || floats < 10 {
		t.Errorf("found %d integer and %d float flags; the probe missed some", ints, floats)
	}
}

// On the command line: a flag in Go's syntax is a usage error (exit 2) naming it, and
// 010 is ten epochs.
func TestIntegerFlagsRefuseGoSyntax(t *testing.T) {
	base := []string{"predict", "--model", "resnet18", "--machine", "aws/p3.2xlarge", "--batch", "32", "--json"}
	for _, tc := range []struct {
		flag, value string
	}{
		{"--epochs", "0x10"}, {"--epochs", "1_0"}, {"--images", "0b101"}, {"--workers", "0o7"}, {"--batch", "0x20"},
	} {
		args := append(append([]string{}, base...), tc.flag, tc.value)
		code, stdout, stderr := runExportCLI(t, args...)
		want := `invalid value "` + tc.value + `" for flag -` + strings.TrimPrefix(tc.flag, "--") + `: "` + tc.value + `" is not a decimal number`
		if code != 2 || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.flag, tc.value, code, stdout, stderr, want)
		}
	}
	_, ten, _ := runExportCLI(t, append(append([]string{}, base...), "--epochs", "010")...)
	_, want, _ := runExportCLI(t, append(append([]string{}, base...), "--epochs", "10")...)
	if ten == "" || ten != want {
		t.Errorf("--epochs 010 printed %q; want what --epochs 10 prints, %q", ten, want)
	}
}

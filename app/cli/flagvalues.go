package cli

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"

	"cnntime/app"
)

// decimalNumber is a number as a person writes it: digits with an optional sign,
// fraction and exponent. Go's flag package reads more ("0x1p4" is 16, "NaN", "Inf"),
// which no one means: a NaN budget silently dropped the budget.
var decimalNumber = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// decimalValue is a float64 flag that takes decimal numbers only (decimalNumber).
type decimalValue float64

func (d *decimalValue) Set(s string) error {
	if !decimalNumber.MatchString(s) {
		return fmt.Errorf("%q is not a decimal number (e.g. 2.5)", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is out of range", s)
	}
	*d = decimalValue(v)
	return nil
}

func (d *decimalValue) String() string { return strconv.FormatFloat(float64(*d), 'g', -1, 64) }

// decimalVar defines a float64 flag that takes decimal numbers only.
func decimalVar(fs *flag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	fs.Var((*decimalValue)(p), name, usage)
}

// decimalFlag is decimalVar returning the variable, as fs.Float64 does.
func decimalFlag(fs *flag.FlagSet, name string, value float64, usage string) *float64 {
	p := new(float64)
	decimalVar(fs, p, name, value, usage)
	return p
}

// wholeNumber is a whole number as a person writes it: decimal digits with an optional
// sign. Go's flag package reads more ("0x10" is 16, "010" is 8, "1_0" is 10), which
// no one means on a command line and which the float flags refuse.
var wholeNumber = regexp.MustCompile(`^[+-]?[0-9]+$`)

// wholeValue is an int flag that takes decimal whole numbers only (wholeNumber):
// "010" is ten, as a person reads it.
type wholeValue int

func (w *wholeValue) Set(s string) error {
	if !wholeNumber.MatchString(s) {
		if decimalNumber.MatchString(s) {
			return fmt.Errorf("%q is not a whole number (e.g. 64)", s)
		}
		return fmt.Errorf("%q is not a decimal number (e.g. 64)", s)
	}
	v, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return fmt.Errorf("%q is out of range", s)
	}
	*w = wholeValue(v)
	return nil
}

func (w *wholeValue) String() string { return strconv.Itoa(int(*w)) }

// wholeVar defines an int flag that takes decimal whole numbers only.
func wholeVar(fs *flag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fs.Var((*wholeValue)(p), name, usage)
}

// wholeFlag is wholeVar returning the variable, as fs.Int does.
func wholeFlag(fs *flag.FlagSet, name string, value int, usage string) *int {
	p := new(int)
	wholeVar(fs, p, name, value, usage)
	return p
}

// Ranges of the counts several commands take: far beyond what anyone asks for, and
// short of what runs out of memory (--repeats 99999999999 did) or overflows a job
// file's fields.
const (
	maxRepeats  = app.MaxSweepRepeats // timed runs of one kernel or step
	maxCPUs     = 4096                // CPUs of one task
	maxParallel = 10000               // pods at once
)

// inRange is a usage error naming the flag when v is outside lo..hi; a flag whose 0
// means its default passes 0 with zeroIsDefault.
func inRange(flag string, v, lo, hi int, zeroIsDefault bool, what string) error {
	if (v == 0 && zeroIsDefault) || (v >= lo && v <= hi) {
		return nil
	}
	dflt := ""
	if zeroIsDefault {
		dflt = "; leave it out for the default"
	}
	return Usagef("--%s %d: give %s, %d to %d%s", flag, v, what, lo, hi, dflt)
}

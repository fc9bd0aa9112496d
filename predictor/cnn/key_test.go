package cnn

import (
	"strings"
	"testing"
)

// Every configuration of the zoo (at its default input and at 32×32) reads back from
// its key into the same Config, so measurements known by key alone have theirs.
func TestParseKeyInvertsKey(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range Names() {
		for _, res := range []int{0, 32} {
			net, err := Build(name, Options{Resolution: res})
			if err != nil {
				continue // too small for this model
			}
			for _, l := range net.Layers {
				key := l.Config.Key()
				if seen[key] {
					continue
				}
				seen[key] = true
				c, err := ParseKey(key)
				if err != nil {
					t.Errorf("%s %s: %v", name, l.Name, err)
					continue
				}
				if c != l.Config {
					t.Errorf("%s %s: key %s reads as %+v, want %+v", name, l.Name, key, c, l.Config)
				}
			}
		}
	}
	if len(seen) < 1000 {
		t.Errorf("only %d distinct configurations in the zoo", len(seen))
	}
}

func TestParseKeyRefusesBadKeys(t *testing.T) {
	for key, want := range map[string]string{
		"":                                  "no known op",
		"conv3d:in=1x1x1,out=1x1x1":         "no known op",
		"relu:in=4x4x4":                     "in= and out= are required",
		"relu:in=4x4,out=4x4x4":             "not CxHxW",
		"relu:in=4x4x4,out=4x4x4,k=3x3":     "not in canonical form",
		"linear:in=4x1x1,out=2x1x1,bias=ja": "invalid syntax",
		"relu:in=4x4x4,out=4x4x4,zoom=2":    "unknown field",
		"relu:in=4x4x4,in=4x4x4,out=4x4x4":  "given twice",
	} {
		if _, err := ParseKey(key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKey(%q) = %v, want an error containing %q", key, err, want)
		}
	}
}

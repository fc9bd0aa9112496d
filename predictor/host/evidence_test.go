package host

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// decodeRow is a row of assets/validation/cpu_decode.csv.
type decodeRow struct {
	cpu, family, decoder, set string
	turboGHz, imagesPerS      float64
}

func readDecodeRows(t *testing.T) []decodeRow {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "assets", "validation", "cpu_decode.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var rows []decodeRow
	for _, r := range recs[1:] {
		num := func(c string) float64 {
			if r[col[c]] == "" {
				return 0
			}
			v, err := strconv.ParseFloat(r[col[c]], 64)
			if err != nil {
				t.Fatalf("cpu_decode.csv %s: %v", c, err)
			}
			return v
		}
		rows = append(rows, decodeRow{cpu: r[col["cpu"]], family: r[col["family"]], decoder: r[col["decoder"]], set: r[col["set"]],
			turboGHz: num("turbo_ghz"), imagesPerS: num("images_per_s")})
	}
	return rows
}

// The families' decode rates and the bridge are the evidence file's tuning rows, and
// every row's CPU is the family the file says.
func TestFamilyRatesAreTheEvidenceTuningRows(t *testing.T) {
	rows := readDecodeRows(t)
	bridged := false
	for _, r := range rows {
		if f, ok := FamilyOf(r.cpu); !ok || f.ID != r.family {
			t.Errorf("%s: FamilyOf says %q, the evidence %q", r.cpu, f.ID, r.family)
		}
		if r.set != "tuning" || r.decoder != "pillow" {
			continue
		}
		if r.family == "zen2" {
			bridged = r.imagesPerS == BridgeDecodeImagesPerS && r.turboGHz == BridgeTurboGHz
			continue
		}
		f, _ := familyByID(r.family)
		if f.DecodeImagesPerS != r.imagesPerS || f.MeasuredOn != r.cpu {
			t.Errorf("family %s: %g images/s on %q, the evidence %g on %q", f.ID, f.DecodeImagesPerS, f.MeasuredOn, r.imagesPerS, r.cpu)
		}
	}
	if !bridged {
		t.Errorf("the bridge (%g images/s at %g GHz) is not the evidence's zen2 tuning row", BridgeDecodeImagesPerS, BridgeTurboGHz)
	}
}

// Held out, two checks with their errors as docs/accuracy.md reports them: the clock
// rule that scales the fitted families' cores (Zen 2 and Zen 3 parts at other clocks
// than the bridge's), and that the measured families' ratios are the cores' and not
// Pillow's (the same CPUs decoding with torchvision and simplejpeg, each family
// against the Emerald Rapids core under the same decoder).
func TestHeldOutDecodeRowsKeepWithinTenPercent(t *testing.T) {
	rows := readDecodeRows(t)
	perGHz := BridgeDecodeImagesPerS / BridgeTurboGHz
	pillow := map[string]float64{}
	for _, r := range rows {
		if r.decoder == "pillow" && r.set == "tuning" {
			pillow[r.family] = r.imagesPerS
		}
	}
	byDecoder := map[string]map[string]float64{}
	for _, r := range rows {
		if r.set != "held out" {
			continue
		}
		if r.decoder == "pillow" {
			errPct := 100 * (perGHz*r.turboGHz/r.imagesPerS - 1)
			t.Logf("clock rule, %s at %g GHz: predicted %.0f, measured %.0f images/s (%+.1f%%)", r.cpu, r.turboGHz, perGHz*r.turboGHz, r.imagesPerS, errPct)
			if math.Abs(errPct) > 10 {
				t.Errorf("clock rule off by %+.1f%% on %s", errPct, r.cpu)
			}
			continue
		}
		if byDecoder[r.decoder] == nil {
			byDecoder[r.decoder] = map[string]float64{}
		}
		byDecoder[r.decoder][r.family] = r.imagesPerS
	}
	for decoder, rates := range byDecoder {
		for family, rate := range rates {
			if family == "emerald-rapids" {
				continue
			}
			errPct := 100 * ((pillow[family]/pillow["emerald-rapids"])/(rate/rates["emerald-rapids"]) - 1)
			t.Logf("%s against emerald-rapids, %s: %+.1f%%", family, decoder, errPct)
			if math.Abs(errPct) > 10 {
				t.Errorf("%s's core against Emerald Rapids' is %+.1f%% off under %s", family, errPct, decoder)
			}
		}
	}
	if len(byDecoder) != 2 {
		t.Errorf("held-out decoders %v, want torchvision and simplejpeg", byDecoder)
	}
}

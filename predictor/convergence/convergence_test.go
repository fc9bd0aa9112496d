package convergence

import (
	"math"
	"strings"
	"testing"
)

// TestEpochsNeverFall checks the model's shape on every preset: the epochs never fall
// as the batch grows, grow by less than 2× up to the critical batch and by at least
// the batch's ratio beyond it (E(2B)/E(B) → 2).
func TestEpochsNeverFall(t *testing.T) {
	for _, name := range PresetNames() {
		m, _ := Preset(name)
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		prev := 0.0
		for b := 1; b <= 1<<20; b = b*9/8 + 1 {
			e := m.Epochs(b)
			if e < prev {
				t.Fatalf("%s: %.3f epochs at batch %d after %.3f at a smaller batch", name, e, b, prev)
			}
			prev = e
		}
		bn := int(m.NoiseBatch)
		if r := m.Epochs(bn) / m.Epochs(1); r > 2 || r < 1.99 {
			t.Errorf("%s: E(B_noise)/E(1) = %.3f, want 2", name, r)
		}
		if r := m.Epochs(64*bn) / m.Epochs(32*bn); r < 1.95 || r > 2 {
			t.Errorf("%s: far past the critical batch doubling the batch multiplies the epochs by %.3f, want nearly 2", name, r)
		}
	}
}

func TestPresetRegimes(t *testing.T) {
	in, ok := Preset("imagenet-1k")
	if !ok {
		t.Fatal("no imagenet-1k preset")
	}
	for _, tc := range []struct {
		batch int
		want  string
	}{{256, "sgd"}, {8192, "sgd"}, {8193, "lars"}, {32768, "lars"}, {67840, "lars"}, {67841, "extrapolated"}} {
		if g := in.RegimeAt(tc.batch).Name; g != tc.want {
			t.Errorf("imagenet-1k regime at %d = %s, want %s", tc.batch, g, tc.want)
		}
	}
	if in.KnownUpTo() != 8192 {
		t.Errorf("imagenet-1k known up to %d, want 8192 (Goyal et al.)", in.KnownUpTo())
	}
	c, _ := Preset("cifar-10")
	if g := c.RegimeAt(50000).Name; g != "extrapolated" {
		t.Errorf("cifar-10 at 50,000: %s, want extrapolated", g)
	}
	if _, ok := Preset("cifar-100"); ok {
		t.Error("a cifar-100 preset exists but no CIFAR-100 figures are embedded")
	}
	// The caller gets a copy: changing it leaves the preset alone.
	in.Regimes[0].UpTo = 1
	if again, _ := Preset("imagenet-1k"); again.Regimes[0].UpTo != 8192 {
		t.Error("changing a returned preset changed the preset")
	}
}

func TestCustom(t *testing.T) {
	in, _ := Preset("imagenet-1k")
	for _, tc := range []struct {
		name    string
		c       Custom
		wantErr string
		at      int
		want    float64
		regime  string
	}{
		{name: "critical batch", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: 4096}, at: 4096, want: 90 * 2 / (1 + 256.0/4096), regime: "custom"},
		{name: "at its own batch", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: 4096}, at: 256, want: 90, regime: "custom"},
		{name: "like imagenet", c: Custom{Epochs: 90, Batch: 1024, Like: "ImageNet"}, at: 16384, want: 90 * (1 + 16384/in.NoiseBatch) / (1 + 1024/in.NoiseBatch), regime: "lars"},
		{name: "like cifar", c: Custom{Epochs: 200, Batch: 128, Like: "cifar"}, at: 128, want: 200, regime: "sgd"},
		{name: "reference batch 0", c: Custom{Epochs: 90, Batch: 0, CriticalBatch: 4096}, wantErr: "reference batch 0"},
		{name: "critical batch below 1", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: 0.5}, wantErr: "critical batch 0.5"},
		{name: "negative critical batch", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: -3}, wantErr: "critical batch -3"},
		{name: "infinite critical batch", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: math.Inf(1)}, wantErr: "critical batch +Inf"},
		{name: "NaN epochs", c: Custom{Epochs: math.NaN(), Batch: 256, CriticalBatch: 4096}, wantErr: "NaN is not a number of epochs"},
		{name: "infinite epochs", c: Custom{Epochs: math.Inf(1), Batch: 256, CriticalBatch: 4096}, wantErr: "+Inf is not a number of epochs"},
		{name: "zero epochs", c: Custom{Epochs: 0, Batch: 256, CriticalBatch: 4096}, wantErr: "0 is not a number of epochs"},
		{name: "neither", c: Custom{Epochs: 90, Batch: 256}, wantErr: "give the critical batch"},
		{name: "both", c: Custom{Epochs: 90, Batch: 256, CriticalBatch: 10, Like: "cifar-10"}, wantErr: "not both"},
		{name: "unknown preset", c: Custom{Epochs: 90, Batch: 256, Like: "mnist"}, wantErr: `like "mnist": no such preset`},
	} {
		m, err := tc.c.Model()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g := m.Epochs(tc.at); math.Abs(g-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: %.6f epochs at %d, want %.6f", tc.name, g, tc.at, tc.want)
		}
		if g := m.RegimeAt(tc.at).Name; g != tc.regime {
			t.Errorf("%s: regime %s, want %s", tc.name, g, tc.regime)
		}
		if m.Name != "custom" {
			t.Errorf("%s: source %q, want custom", tc.name, m.Name)
		}
	}
}

// TestFitRecovers fits figures made by a known law, with per-source recipes 1.5×
// apart: the critical batch and the first source's E_min come back.
func TestFitRecovers(t *testing.T) {
	var figs []Figure
	for i, src := range []struct {
		name  string
		scale float64
	}{{"a", 1}, {"b", 1.5}, {"c", 1}} {
		for _, b := range []int{256 << i, 2048 << i, 16384 << i} {
			figs = append(figs, Figure{Source: src.name, Dataset: "x", Batch: b, Epochs: 30 * src.scale * (1 + float64(b)/20000), Set: "tuning"})
		}
	}
	emin, bn, err := Fit(figs)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bn-20000)/20000 > 1e-4 {
		t.Errorf("B_noise = %.2f, want 20000", bn)
	}
	if want := 30 * math.Pow(1.5, 1.0/3); math.Abs(emin-want)/want > 1e-4 {
		t.Errorf("E_min = %.4f, want %.4f (the geometric mean of the recipes)", emin, want)
	}
	if _, _, err := Fit([]Figure{{Source: "a", Batch: 256, Epochs: 30}, {Source: "b", Batch: 512, Epochs: 31}}); err == nil || !strings.Contains(err.Error(), "two batch sizes") {
		t.Errorf("a fit with no source of two batches: %v", err)
	}
}

func TestEvaluateAnchors(t *testing.T) {
	m := Model{Name: "x", EpochsMin: 10, NoiseBatch: 1000, Regimes: []Regime{{Name: "sgd"}}}
	rows := Evaluate(m, []Figure{
		{Source: "s", Batch: 2000, Epochs: 33},
		{Source: "s", Batch: 1000, Epochs: 20},
		{Source: "t", Batch: 500, Epochs: 15},
	})
	if !rows[1].Anchor || rows[0].Anchor || !rows[2].Anchor {
		t.Fatalf("anchors: %+v", rows)
	}
	if math.Abs(rows[0].Anchored-30) > 1e-9 || math.Abs(rows[0].AnchoredErrorPct-100*(30-33)/33.0) > 1e-9 {
		t.Errorf("anchored %v (%v%%), want 30", rows[0].Anchored, rows[0].AnchoredErrorPct)
	}
	if math.Abs(rows[2].Predicted-15) > 1e-9 || rows[2].ErrorPct != 0 {
		t.Errorf("predicted %v, want 15", rows[2].Predicted)
	}
	preset, anchored := MAPE(rows)
	if want := 100 * (3.0 / 33) / 3; math.Abs(preset-want) > 1e-9 || math.Abs(anchored-100*3.0/33) > 1e-9 {
		t.Errorf("MAPE %v, anchored %v", preset, anchored)
	}
}

func TestParseFigures(t *testing.T) {
	head := "source,where,dataset,model,optimizer,target,batch,epochs,set,notes\n"
	good := head + "a,p,cifar-10,m,sgd,94%,512,24,tuning,n\na,p,cifar-10,m,sgd,94%,1024,26.5,tuning,n\n"
	figs, err := ParseFigures([]byte(good))
	if err != nil || len(figs) != 2 || figs[1].Epochs != 26.5 || figs[1].Batch != 1024 {
		t.Fatalf("ParseFigures = %+v, %v", figs, err)
	}
	for _, tc := range []struct{ data, want string }{
		{"source,batch\n", `lacks column "where"`},
		{head + "a,p,cifar-10,m,sgd,94%,0,24,tuning,n\n", "line 2, batch"},
		{head + "a,p,cifar-10,m,sgd,94%,512,NaN,tuning,n\n", "line 2, epochs"},
		{head + "a,p,cifar-10,m,sgd,94%,512,-3,tuning,n\n", "line 2, epochs"},
		{head + "a,p,cifar-10,m,sgd,94%,512,24,maybe,n\n", "neither tuning nor held out"},
		{head + "a,p,cifar-10,m,sgd,94%,512,24,tuning,n\na,p,cifar-10,m,sgd,94%,1024,24,held out,n\n", "hold out whole sources"},
	} {
		if _, err := ParseFigures([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFigures(%q) error %v, want %q", tc.data, err, tc.want)
		}
	}
}

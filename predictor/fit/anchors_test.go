package fit

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

const anchorHeader = "source,url_or_path,gpu,model,framework,software,precision,batch_per_gpu,gpus,metric,value,memory_format,set,notes\n"

func TestParseAnchors(t *testing.T) {
	good := anchorHeader +
		"lambda,repo:path.csv,v100,resnet50,PyTorch,ngc-22.10,fp32,128,1,images_per_s,369,nchw,tuning,\n" +
		"dle,repo:README.md,a100,resnet50,PyTorch,2021-03,amp,256,1,images_per_s,2470.5,nhwc,held out,\"a, note\"\n"
	as, err := ParseAnchors([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("%d anchors, want 2", len(as))
	}
	if a := as[0]; a.GPU != "v100" || a.Precision != measure.FP32 || a.Batch != 128 || a.ImagesPerS != 369 || a.ChannelsLast || a.Held || a.Set() != "tuning" ||
		a.Software.Name != "ngc-22.10" || a.Software.Month != hw.MonthOf(2022, 10) {
		t.Errorf("anchor 0 = %+v", a)
	}
	if a := as[1]; a.Precision != measure.AMP || a.ImagesPerS != 2470.5 || !a.ChannelsLast || !a.Held || a.Set() != "held out" || a.Notes != "a, note" || a.Line != 3 {
		t.Errorf("anchor 1 = %+v", a)
	}
	row := func(fields string) string { return anchorHeader + fields + "\n" }
	bad := []struct{ name, csv, want string }{
		{"empty", "", "header"},
		{"missing column", strings.Replace(anchorHeader, ",set", "", 1), `lacks the column "set"`},
		{"no rows", anchorHeader, "no rows"},
		{"precision", row("s,u,g,m,f,current,fp8,1,1,images_per_s,1,nchw,tuning,"), "line 2: unknown training precision"},
		{"batch", row("s,u,g,m,f,current,fp32,0,1,images_per_s,1,nchw,tuning,"), "batch_per_gpu"},
		{"gpus", row("s,u,g,m,f,current,fp32,8,x,images_per_s,1,nchw,tuning,"), "gpus"},
		{"metric", row("s,u,g,m,f,current,fp32,8,1,ms,1,nchw,tuning,"), "only images_per_s"},
		{"value", row("s,u,g,m,f,current,fp32,8,1,images_per_s,-3,nchw,tuning,"), "value"},
		{"format", row("s,u,g,m,f,current,fp32,8,1,images_per_s,3,chw,tuning,"), "memory_format"},
		{"set", row("s,u,g,m,f,current,fp32,8,1,images_per_s,3,nchw,train,"), "set"},
		{"no model", row("s,u,g,,f,current,fp32,8,1,images_per_s,3,nchw,tuning,"), "must be given"},
		{"no software", row("s,u,g,m,f,,fp32,8,1,images_per_s,3,nchw,tuning,"), "line 2: software is empty"},
		{"bad software", row("s,u,g,m,f,pytorch-0.1,fp32,8,1,images_per_s,3,nchw,tuning,"), "line 2: unknown software"},
	}
	for _, tc := range bad {
		_, err := ParseAnchors([]byte(tc.csv))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

var testV100 = hw.GPU{ID: "v100", ComputeCapability: "7.0", SMs: 80, BoostClockMHz: 1530, FP32TFLOPS: 15.7,
	FP16TFLOPS: 125, MemoryGB: 16, MemoryType: "HBM2", MemoryBandwidthGBs: 900}

func TestResolveNamesTheLine(t *testing.T) {
	as := []Anchor{{Line: 7, GPU: "v100", Model: "resnet18"}, {Line: 8, GPU: "v100", Model: "resnet18"}}
	nets := map[string]*cnn.Network{}
	cases, err := Resolve(as, []hw.GPU{testV100}, nets)
	if err != nil || len(cases) != 2 || cases[0].Net != cases[1].Net || len(nets) != 1 {
		t.Fatalf("Resolve: %v, %d cases, %d networks built (want 2 cases sharing 1)", err, len(cases), len(nets))
	}
	if _, err := Resolve([]Anchor{{Line: 9, GPU: "x100", Model: "resnet18"}}, []hw.GPU{testV100}, nets); err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("unknown GPU: %v", err)
	}
	if _, err := Resolve([]Anchor{{Line: 4, GPU: "v100", Model: "resnet9000"}}, []hw.GPU{testV100}, nets); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("unknown model: %v", err)
	}
}

// FitNetworks must move the tuning rows towards their figures and never read the
// held-out ones.
func TestFitNetworksUsesOnlyTuningRows(t *testing.T) {
	nets := map[string]*cnn.Network{}
	// Two tuning rows (MinScaleRows), each 50% faster than the prior predicts, and a
	// held-out row whose absurd figure must not move the fit.
	mk := func(held bool, ips [2]float64) []Case {
		cs, err := Resolve([]Anchor{
			{Line: 2, GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 16, GPUs: 1, ImagesPerS: ips[0]},
			{Line: 3, GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 64, GPUs: 1, ImagesPerS: ips[1]},
			{Line: 4, GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 32, GPUs: 1, ImagesPerS: 1e6, Held: held},
		}, []hw.GPU{testV100}, nets)
		if err != nil {
			t.Fatal(err)
		}
		return cs[:2+boolInt(held)]
	}
	cal := kernels.PriorCalibration()
	base, err := Predict(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, mk(false, [2]float64{1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	target := [2]float64{1.5 * base[0].ImagesPerS, 1.5 * base[1].ImagesPerS}
	nf, err := FitNetworks(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, mk(true, target), Options{MaxEvaluations: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if nf.TuningRows != 2 || math.Abs(nf.BeforeMAPE-100.0/3) > 0.5 || nf.AfterMAPE > 10 {
		t.Errorf("tuning rows %d, MAPE %.1f%% → %.1f%%: want 2 rows, 33.3%% → under 10%%", nf.TuningRows, nf.BeforeMAPE, nf.AfterMAPE)
	}
	if len(nf.Scales) != 1 || nf.Scales[0] != "volta/fp16" || !(nf.Calibration.FamilyScale["volta/fp16"] > 1) {
		t.Errorf("scales %v = %v: want volta/fp16 raised", nf.Scales, nf.Calibration.FamilyScale)
	}
	// One published figure alone fits no family scale.
	one, err := FitNetworks(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, mk(false, target)[:1], Options{MaxEvaluations: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Scales) != 0 || len(one.Families) != 0 || len(one.Calibration.FamilyScale) != 0 {
		t.Errorf("one tuning row fitted scales %v %v: want none", one.Scales, one.Families)
	}
	if _, err := FitNetworks(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, mk(true, target)[2:], Options{}); err == nil {
		t.Errorf("a fit with only held-out rows should fail")
	}
	if cal.FamilyScale != nil || cal.MemoryEfficiency != kernels.PriorCalibration().MemoryEfficiency {
		t.Errorf("FitNetworks changed its input calibration")
	}
}

// A family's factor multiplies every arithmetic's scale, and the arithmetic factor is
// shared: an A100 whose rows are all TF32 and a V100 whose rows are all FP16 still get
// both arithmetics' scales, as products of one family and one arithmetic factor; a
// family whose rows come from one source is fitted under the stronger prior.
func TestFamilyTimesArithmeticFactors(t *testing.T) {
	nets := map[string]*cnn.Network{}
	a100 := hw.GPU{ID: "a100", ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312,
		MemoryGB: 80, MemoryBandwidthGBs: 2039, TDPW: 400}
	cs, err := Resolve([]Anchor{
		{Line: 2, Source: "a", GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 64, GPUs: 1, ImagesPerS: 3000},
		{Line: 3, Source: "b", GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 128, GPUs: 1, ImagesPerS: 3200},
		{Line: 4, Source: "a", GPU: "a100", Model: "resnet18", Precision: measure.FP32, Batch: 64, GPUs: 1, ImagesPerS: 2500},
		{Line: 5, Source: "a", GPU: "a100", Model: "resnet18", Precision: measure.FP32, Batch: 128, GPUs: 1, ImagesPerS: 2700},
	}, []hw.GPU{testV100, a100}, nets)
	if err != nil {
		t.Fatal(err)
	}
	nf, err := FitNetworks(kernels.PriorCalibration(), predictor.DefaultOverheads, predictor.DefaultMemoryModel, cs, Options{MaxEvaluations: 2000})
	if err != nil {
		t.Fatal(err)
	}
	fs := nf.Calibration.FamilyScale
	for _, k := range []string{"volta/fp16", "volta/tf32", "ga100/fp16", "ga100/tf32"} {
		if !(fs[k] > 0) {
			t.Fatalf("scale %s missing from %v", k, fs)
		}
	}
	if r1, r2 := fs["volta/tf32"]/fs["volta/fp16"], fs["ga100/tf32"]/fs["ga100/fp16"]; math.Abs(r1-r2) > 1e-9*r1 {
		t.Errorf("tf32/fp16 is %.4f on Volta and %.4f on GA100: want one arithmetic factor", r1, r2)
	}
	if len(nf.SingleSource) != 1 || nf.SingleSource[0] != "ga100" || nf.Families["volta"].Rows != 2 || len(nf.Families["volta"].Sources) != 2 {
		t.Errorf("single-source families %v, evidence %v: want ga100 alone under the stronger prior, volta on 2 rows from 2 sources", nf.SingleSource, nf.Families)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The error bands come from the rows' residuals: a family and arithmetic's band is
// its tuning rows' mean error mixed with the held-out error, a family without rows gets
// twice the held-out error, and an estimate's band then follows the family.
func TestFitNetworkBands(t *testing.T) {
	cal := kernels.PriorCalibration()
	nets := map[string]*cnn.Network{}
	base, err := Resolve([]Anchor{{Line: 2, GPU: "v100", Model: "resnet18", Precision: measure.AMP, Batch: 16, GPUs: 1, ImagesPerS: 1}},
		[]hw.GPU{testV100}, nets)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, base)
	if err != nil {
		t.Fatal(err)
	}
	ips := p[0].ImagesPerS
	// Tuning row predicted 10% fast (measured ips/1.1), held-out row 30% slow (ips/0.7),
	// both volta/fp16.
	tuning, held := base[0], base[0]
	tuning.ImagesPerS = ips / 1.1
	held.ImagesPerS, held.Held = ips/0.7, true
	b, err := FitNetworkBands(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, []Case{tuning, held})
	if err != nil {
		t.Fatal(err)
	}
	wantHeld := 0.3
	// The held-out row is not one of volta/fp16's rows: it enters only as the prior.
	wantKey := (0.1 + BandPriorRows*wantHeld) / (1 + BandPriorRows)
	if math.Abs(b.HeldOut-wantHeld) > 1e-9 || math.Abs(b.PerKey["volta/fp16"]-wantKey) > 1e-9 || b.Rows["volta/fp16"] != 1 ||
		math.Abs(b.Other-BandOtherFactor*wantHeld) > 1e-9 || b.Transfer != b.HeldOut || len(b.PerKey) != 1 {
		t.Fatalf("bands %+v: want held out %.3f, volta/fp16 %.4f from 1 tuning row, other %.2f", b, wantHeld, wantKey, BandOtherFactor*wantHeld)
	}
	// A family whose only row is held out has no band of its own: it gets the band of
	// a family without rows, not one its held-out row drew.
	onlyHeld, err := FitNetworkBands(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, []Case{held})
	if err != nil {
		t.Fatal(err)
	}
	if len(onlyHeld.PerKey) != 0 || math.Abs(onlyHeld.Other-BandOtherFactor*wantHeld) > 1e-9 {
		t.Errorf("bands from a held-out row alone %+v: want no per-family band and other %.2f", onlyHeld, BandOtherFactor*wantHeld)
	}
	if err := b.Apply(cal); err != nil {
		t.Fatal(err)
	}
	if got := cal.EstimateRelErrOf(hw.FamilyVolta, kernels.ArithFP16); math.Abs(got-wantKey) > 1e-9 {
		t.Errorf("volta/fp16 estimate band %v, want %v", got, wantKey)
	}
	if got := cal.EstimateRelErrOf(hw.FamilyTuring, kernels.ArithFP16); math.Abs(got-BandOtherFactor*wantHeld) > 1e-9 {
		t.Errorf("turing/fp16 (no rows) band %v, want %v", got, BandOtherFactor*wantHeld)
	}
	cal.EstimateRelErr["fp32"] = 0.9 // a per-layer band wider than the one for families without rows
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := cal.EstimateRelErrOf(hw.FamilyUnknown, kernels.ArithFP32); got != 0.9 {
		t.Errorf("pre-Volta fp32 band %v, want the wider per-layer 0.9", got)
	}
	if _, err := FitNetworkBands(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, nil); err == nil {
		t.Errorf("bands from no rows should fail")
	}
}

// The maturity term is found from rows of one GPU that ran libraries of different ages:
// rows 25% slower at the architecture's launch (and MaturityLaunchUS more per
// convolution), recovering with a time constant of MaturityMonths, give back about that
// deficit at that time, and with the time left to the pairs (MaturityMonths 0) rows
// recovering over 8 months give back about 0.25 over 8 months; the cost per
// convolution is kept, and the tuning rows' ages are counted.
func TestFitNetworksFindsTheMaturity(t *testing.T) {
	shipped := MaturityMonths
	defer func() { MaturityMonths = shipped }()
	for _, tc := range []struct {
		name                 string
		fixed, truth         float64 // MaturityMonths, the rows' time constant
		minMonths, maxMonths float64
	}{
		{"time fixed", shipped, shipped, shipped, shipped},
		{"time fitted", 0, 8, 4, 16},
	} {
		MaturityMonths = tc.fixed
		nf := fitSyntheticMaturity(t, 0.25, tc.truth)
		if d, m := nf.Calibration.MaturityDeficit, nf.Calibration.MaturityMonths; math.Abs(d-0.25) > 0.05 || m < tc.minMonths || m > tc.maxMonths || nf.AfterMAPE > 2 {
			t.Errorf("%s: fitted deficit %.3f over %.1f months (tuning MAPE %.2f%%): want about 0.25 over %v months", tc.name, d, m, nf.AfterMAPE, tc.truth)
		}
		if got := nf.Calibration.MaturityLaunchUS; got != MaturityLaunchUS || !(got > 0) {
			t.Errorf("%s: cost per convolution %v µs, want MaturityLaunchUS (%v µs, fitted on the batch series)", tc.name, got, MaturityLaunchUS)
		}
		if want := []int{4, 2, 2, 4}; !slicesEqual(nf.SoftwareAges, want) {
			t.Errorf("%s: tuning rows by software age %v, want %v (under 6, 6–12, 12–24, 24+ months)", tc.name, nf.SoftwareAges, want)
		}
	}
}

// fitSyntheticMaturity fits FitNetworks to two sources' A100 rows on six releases,
// their throughputs predicted with the maturity term deficit over months (and
// MaturityLaunchUS per convolution).
func fitSyntheticMaturity(t *testing.T, deficit, months float64) *NetworkFit {
	t.Helper()
	nets := map[string]*cnn.Network{}
	a100 := hw.GPU{ID: "a100", ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312,
		MemoryGB: 80, MemoryBandwidthGBs: 2039, TDPW: 400}
	var as []Anchor
	for i, month := range []string{"2020-05", "2020-09", "2021-03", "2021-09", "2022-10", "2024-01"} {
		sw, err := predictor.ParseSoftware(month)
		if err != nil {
			t.Fatal(err)
		}
		for j, src := range []string{"a", "b"} {
			as = append(as, Anchor{Line: 2 + 2*i + j, Source: src, GPU: "a100", Model: "resnet18", Precision: measure.AMP, Batch: 64 << j,
				GPUs: 1, ImagesPerS: 1, Software: sw})
		}
	}
	cs, err := Resolve(as, []hw.GPU{a100}, nets)
	if err != nil {
		t.Fatal(err)
	}
	cal := kernels.PriorCalibration()
	mature, err := Predict(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, cs)
	if err != nil {
		t.Fatal(err)
	}
	truth := *cal
	truth.MaturityDeficit, truth.MaturityMonths, truth.MaturityLaunchUS = deficit, months, MaturityLaunchUS
	if err := truth.Validate(); err != nil {
		t.Fatal(err)
	}
	aged, err := Predict(&truth, predictor.DefaultOverheads, predictor.DefaultMemoryModel, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		cs[i].ImagesPerS = aged[i].ImagesPerS
	}
	if !(aged[0].ImagesPerS < 0.95*mature[0].ImagesPerS) {
		t.Fatalf("at the launch %.0f images/s against %.0f mature: the term should slow it", aged[0].ImagesPerS, mature[0].ImagesPerS)
	}
	nf, err := FitNetworks(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, cs, Options{MaxEvaluations: 6000})
	if err != nil {
		t.Fatal(err)
	}
	return nf
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

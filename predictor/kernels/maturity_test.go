package kernels

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/hw"
)

func TestMaturity(t *testing.T) {
	cal := PriorCalibration()
	cal.MaturityDeficit, cal.MaturityMonths = 0.25, 10
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	a100 := hw.GPU{ComputeCapability: "8.0"}   // launched May 2020
	h100 := hw.GPU{ComputeCapability: "9.0"}   // October 2022
	pascal := hw.GPU{ComputeCapability: "6.1"} // May 2016
	tests := []struct {
		name  string
		g     hw.GPU
		month hw.Month
		want  float64
	}{
		{"at the launch", a100, hw.MonthOf(2020, 5), 0.75},
		{"ten months on", a100, hw.MonthOf(2021, 3), 1 - 0.25*math.Exp(-1)},
		{"older than the GPU", h100, hw.MonthOf(2020, 1), 0.75},
		{"five years on", pascal, hw.MonthOf(2021, 5), 1 - 0.25*math.Exp(-6)},
		{"mature (month 0)", h100, 0, 1},
		{"undated architecture", hw.GPU{ComputeCapability: "2.0"}, hw.MonthOf(2020, 1), 1},
	}
	for _, tc := range tests {
		if got := cal.Maturity(tc.g, tc.month); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: maturity %.6f, want %.6f", tc.name, got, tc.want)
		}
	}
	// An estimate's compute-bound time grows by exactly 1/maturity; a calibration
	// without the term leaves every month alike.
	c := conv(256, 256, 14, 3, 1)
	young := newEstimator(cal, c, "fwd", hw.GPU{ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5,
		TF32TFLOPS: 156, FP16TFLOPS: 312, MemoryBandwidthGBs: 1555}, "amp", hw.MonthOf(2020, 5))
	mature := newEstimator(cal, c, "fwd", hw.GPU{ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5,
		TF32TFLOPS: 156, FP16TFLOPS: 312, MemoryBandwidthGBs: 1555}, "amp", 0)
	y, m := young.at(1024)-young.launchMS, mature.at(1024)-mature.launchMS
	if math.Abs(y/m-1/0.75) > 1e-9 {
		t.Errorf("a compute-bound convolution at the A100's launch takes %.4f ms, mature %.4f ms: want 1/0.75 times", y, m)
	}
	none := PriorCalibration()
	if got := none.Maturity(a100, hw.MonthOf(2020, 5)); got != 1 {
		t.Errorf("a calibration without the term: maturity %v, want 1", got)
	}
}

// The maturity term's cost per convolution: the whole MaturityLaunchUS at the GPU's
// launch, falling by e every MaturityMonths, none for mature libraries or an undated
// architecture; it lands on a convolution's fixed time (so its time at batch 1 and at
// batch 1024 grow alike) and on no streaming kernel.
func TestMaturityLaunchCost(t *testing.T) {
	cal := PriorCalibration()
	cal.MaturityLaunchUS, cal.MaturityMonths = 40, 10
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	a100 := hw.GPU{ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312, MemoryBandwidthGBs: 1555}
	for _, tc := range []struct {
		name  string
		g     hw.GPU
		month hw.Month
		want  float64 // ms
	}{
		{"at the launch", a100, hw.MonthOf(2020, 5), 0.040},
		{"ten months on", a100, hw.MonthOf(2021, 3), 0.040 * math.Exp(-1)},
		{"older than the GPU", a100, hw.MonthOf(2019, 1), 0.040},
		{"mature (month 0)", a100, 0, 0},
		{"undated architecture", hw.GPU{ComputeCapability: "2.0"}, hw.MonthOf(2020, 1), 0},
	} {
		if got := cal.MaturityLaunchMS(tc.g, tc.month); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %.6f ms, want %.6f", tc.name, got, tc.want)
		}
	}
	if got := cal.Maturity(a100, hw.MonthOf(2020, 5)); got != 1 {
		t.Errorf("a cost per call without a deficit: maturity %v, want 1 (the efficiency untouched)", got)
	}
	c := conv(256, 256, 14, 3, 1)
	young := newEstimator(cal, c, "fwd", a100, "amp", hw.MonthOf(2020, 5))
	mature := newEstimator(cal, c, "fwd", a100, "amp", 0)
	for _, n := range []int{1, 1024} {
		if d := young.at(n) - mature.at(n); math.Abs(d-0.040) > 1e-9 {
			t.Errorf("batch %d: a convolution on the A100's launch libraries takes %.4f ms more than on mature ones, want 0.040", n, d)
		}
	}
	stream := newStreamEstimator(cal, 1e6, a100, "amp")
	if stream.launchMS != cal.LaunchUS/1000 {
		t.Errorf("a streaming kernel's fixed time %.4f ms, want the launch cost %.4f ms alone", stream.launchMS, cal.LaunchUS/1000)
	}
}

func TestMaturityBounds(t *testing.T) {
	for _, tc := range []struct {
		deficit, months, launchUS float64
		wantErr                   string
	}{
		{1, 12, 0, "maturity deficit"},
		{-0.1, 12, 0, "maturity deficit"},
		{0.2, 0, 0, "maturity time"},
		{0.2, 300, 0, "maturity time"},
		{0, 0, 20, "maturity time"},
		{0.2, 12, -1, "maturity launch cost"},
		{0.2, 12, 2000, "maturity launch cost"},
	} {
		cal := PriorCalibration()
		cal.MaturityDeficit, cal.MaturityMonths, cal.MaturityLaunchUS = tc.deficit, tc.months, tc.launchUS
		if err := cal.Validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("deficit %v and %v µs over %v months: %v, want an error about the %s", tc.deficit, tc.launchUS, tc.months, err, tc.wantErr)
		}
	}
}

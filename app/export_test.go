package app

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/recipe"
)

// csvNames are names a custom model, machine or GPU may carry, with the cell a
// spreadsheet-safe CSV holds for each.
var csvNames = []struct{ name, cell string }{
	{"=1+2", "'=1+2"},
	{"+x", "'+x"},
	{"-y", "'-y"},
	{"@z", "'@z"},
	{"normal", "normal"},
}

func readAllCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return recs
}

// The results CSV neutralises every text cell that would start a formula and keeps
// numbers (negative ones included) as numbers.
func TestSummariesCSVNeutralisesFormulas(t *testing.T) {
	for _, tc := range csvNames {
		t.Run(tc.name, func(t *testing.T) {
			row := Summary{CostKnown: true, EnergyKnown: true, Model: tc.name, Machine: tc.name, GPU: tc.name, GPUCount: 2, BestBatch: 64, IterMS: -1.5, EpochS: 12, TotalS: 1080,
				CostUSD: -0.25, EnergyKWh: 0.5, MaxBatch: 256, Source: predictor.Source(tc.name), Input: 224, Bound: tc.name, LoaderImagesPerS: 1500,
				PriceUSDPerHour: 1.5, Price: hw.PriceBasis{Kind: hw.PriceKind(tc.name), Region: tc.name, Date: "2026-11-20", AgeDays: &fiveDays},
				Epochs: 37.5, EpochsSource: tc.name, Script: predictor.Reference, ScriptMS: 0.33, Framework: predictor.PyTorch1, Software: tc.name,
				Host:      &host.Host{CPU: host.CPU{Model: tc.name, Assumed: true}, CPUAssumed: true},
				Precision: "amp", Policy: "fastest", Dataset: tc.name, Images: 50000, Loader: "dali", MemoryFormat: "nhwc", Nodes: 2,
				TrainMode: TrainToTarget, Target: tc.name, ImagesPerS: 42.5, RecommendedBatch: 32, NearMin: 16, NearMax: 64, Warnings: []string{tc.name}}
			var buf bytes.Buffer
			if err := WriteSummariesCSV(&buf, []Summary{row}); err != nil {
				t.Fatal(err)
			}
			recs := readAllCSV(t, buf.Bytes())
			want := [][]string{SummaryCSVHeader,
				{tc.cell, tc.cell, tc.cell, "2", "64", "-1.5", "12", "1080", "-0.25", "0.5", "256", tc.cell, "224", tc.cell, "1500",
					"1.5", tc.cell, tc.cell, "2026-11-20", "5", "37.5", tc.cell, "reference", "0.33", "pytorch1", tc.cell, tc.cell, "true",
					"amp", "fastest", tc.cell, "50000", "dali", "nhwc", "2", "to-target", tc.cell, "42.5", "32", "16", "64", tc.cell}}
			if !reflect.DeepEqual(recs, want) {
				t.Errorf("results CSV =\n%q\nwant\n%q", recs, want)
			}
		})
	}
}

var fiveDays = 5

func TestCurvesCSVNeutralisesFormulas(t *testing.T) {
	for _, tc := range csvNames {
		t.Run(tc.name, func(t *testing.T) {
			c := predictor.Curve{CostKnown: true, EnergyKnown: true, Model: tc.name, Machine: tc.name, GPU: tc.name, GPUCount: 1, Precision: "fp32", Best: 0, Input: 32, Workers: 4,
				PriceUSDPerHour: 0.9, Price: hw.PriceBasis{Kind: hw.Spot, Region: tc.name, Date: "2026-11-20", AgeDays: &fiveDays},
				EpochsSource: tc.name, Script: predictor.Lean, Framework: predictor.Graph, Software: predictor.Software{Name: tc.name}, Host: &host.Host{CPU: host.CPU{Model: tc.name}},
				Policy: "heuristic", Dataset: tc.name, Images: 1000, Recommended: 8, NearMin: 8, NearMax: 8,
				Points: []predictor.Point{
					{Batch: 8, IterMS: 2.5, ImagesPerS: 3200, EpochS: -7, TotalS: 70, CostUSD: 0.1, EnergyKWh: 0.01, MemoryGB: 1.25, Fits: true,
						Source: predictor.Source(tc.name), ErrorPct: -4, Bound: tc.name, Epochs: 40, EpochsErrorPct: 3, Regime: tc.name, ScriptMS: 0.5},
					{Batch: 9000, MemoryGB: 99, Source: "estimated"},
				}}
			var buf bytes.Buffer
			if err := WriteCurvesCSV(&buf, []predictor.Curve{c}); err != nil {
				t.Fatal(err)
			}
			recs := readAllCSV(t, buf.Bytes())
			want := [][]string{CurvesCSVHeader,
				{tc.cell, tc.cell, tc.cell, "1", "fp32", "8", "true", "2.5", "3200", "-7", "70", "0.1", "0.01", "1.25", tc.cell, "-4", "true",
					"32", "", "4", "", tc.cell, "", "0.9", "spot", tc.cell, "2026-11-20", "5", "40", tc.cell, "5", tc.cell, "lean", "0.5", "graph", tc.cell, tc.cell, "false",
					"heuristic", tc.cell, "1000", "1", "epochs", "", "true", "true"},
				{tc.cell, tc.cell, tc.cell, "1", "fp32", "9000", "false", "", "", "", "", "", "", "99", "estimated", "", "false",
					"32", "", "4", "", "", "", "0.9", "spot", tc.cell, "2026-11-20", "5", "", tc.cell, "", "", "lean", "", "graph", tc.cell, tc.cell, "false",
					"heuristic", tc.cell, "1000", "1", "epochs", "", "false", "false"},
			}
			if !reflect.DeepEqual(recs, want) {
				t.Errorf("curves CSV =\n%q\nwant\n%q", recs, want)
			}
		})
	}
}

// A machine without a price or a GPU without a published power has unknown cost or
// energy: the CSVs leave those cells empty instead of writing 0.
func TestCSVLeavesUnknownCostAndEnergyEmpty(t *testing.T) {
	var buf bytes.Buffer
	row := Summary{Model: "resnet50", Machine: "gpu/t4", GPUCount: 1, BestBatch: 64, IterMS: 10, EpochS: 12, TotalS: 1080, MaxBatch: 128}
	if err := WriteSummariesCSV(&buf, []Summary{row}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := recs[1][8] + "|" + recs[1][9] + "|" + recs[1][7]; got != "||1080" {
		t.Errorf("results CSV cost|energy|total = %q, want empty cost and energy", got)
	}
	buf.Reset()
	c := predictor.Curve{Model: "resnet50", Machine: "gpu/t4", GPUCount: 1, Best: 0,
		Points: []predictor.Point{{Batch: 64, Fits: true, IterMS: 10, TotalS: 1080, CostUSD: 0, EnergyKWh: 0}}}
	if err := WriteCurvesCSV(&buf, []predictor.Curve{c}); err != nil {
		t.Fatal(err)
	}
	if recs, err = csv.NewReader(&buf).ReadAll(); err != nil {
		t.Fatal(err)
	}
	if got := recs[1][11] + "|" + recs[1][12] + "|" + recs[1][10]; got != "||1080" {
		t.Errorf("curves CSV cost|energy|total = %q, want empty cost and energy", got)
	}
}

// An exported chart's title names the run it shows: the CNNs and machines, how the run
// is counted (the epochs, or to which target and on what epochs: EpochsBasis), the
// dataset and its images, the precision, framework, loader and the prices' date (or
// their range).
func TestChartTitle(t *testing.T) {
	s := DefaultSessionSettings()
	s.Models, s.Machines = []string{"resnet50", "vgg16"}, []string{"aws/p3.2xlarge"}
	priced := func(dates ...string) []predictor.Curve {
		var out []predictor.Curve
		for _, d := range dates {
			out = append(out, predictor.Curve{Best: 0, Points: []predictor.Point{{Batch: 64, Fits: true, Epochs: 90}}, Price: hw.PriceBasis{Date: d}})
		}
		return out
	}
	book, err := Recipes()
	if err != nil {
		t.Fatal(err)
	}
	plan := func(network string) *recipe.Plan {
		p, err := book.Plan("", network, "imagenet-1k", 0)
		if err != nil {
			t.Fatal(err)
		}
		return &p
	}
	for _, c := range []struct {
		name   string
		change func(*SessionSettings)
		curves []predictor.Curve
		want   string
	}{
		{"one price date", nil, priced("2026-01-21", "2026-01-21"),
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · 90 epochs · imagenet-1k (1,281,167 images) · fp32 · pytorch2 on pytorch-2.11 · pytorch loader · prices of 2026-01-21"},
		{"dates differ", func(s *SessionSettings) { s.Precision, s.Data.Framework, s.Data.Loader = "amp", "graph", "dali" },
			priced("2026-01-21", "", "2025-06"),
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · 90 epochs · imagenet-1k (1,281,167 images) · amp · graph on pytorch-2.11 · dali loader · prices of 2025-06 to 2026-01-21"},
		{"an older release, its own stack", func(s *SessionSettings) { s.Data.Framework, s.Data.Software = "", "pytorch-1.13" }, nil,
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · 90 epochs · imagenet-1k (1,281,167 images) · fp32 · pytorch1 on pytorch-1.13 · pytorch loader · prices undated"},
		{"no curves, six CNNs", func(s *SessionSettings) { s.Models, s.Epochs = []string{"a", "b", "c", "d", "e", "f"}, 1 }, nil,
			"Total time vs batch size — 6 CNNs × 1 machine: a, b, c, d and 2 more on aws/p3.2xlarge · 1 epoch · imagenet-1k (1,281,167 images) · fp32 · pytorch2 on pytorch-2.11 · pytorch loader · prices undated"},
		{"to target", func(s *SessionSettings) { s.Train.Mode = TrainToTarget },
			[]predictor.Curve{{Best: 0, Points: []predictor.Point{{Batch: 64, Fits: true, Epochs: 90}}, Recipe: plan("resnet50")},
				{Best: 0, Points: []predictor.Point{{Batch: 64, Fits: true, Epochs: 90}}, Recipe: plan("vgg16")}},
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · to 76.13% top-1 on imagenet-1k, recipe torchvision-v1/resnet50; to 71.59% top-1 on imagenet-1k, recipe torchvision-v1/vgg16 · imagenet-1k (1,281,167 images) · fp32 · pytorch2 on pytorch-2.11 · pytorch loader · prices undated"},
		{"to target, nothing predicted", func(s *SessionSettings) { s.Train.Mode = TrainToTarget }, nil,
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · to target: each CNN's own recipe · imagenet-1k (1,281,167 images) · fp32 · pytorch2 on pytorch-2.11 · pytorch loader · prices undated"},
		{"to target, a named recipe", func(s *SessionSettings) { s.Train.Mode, s.Train.Recipe = TrainToTarget, "torchvision-v2" }, nil,
			"Total time vs batch size — 2 CNNs × 1 machine: resnet50, vgg16 on aws/p3.2xlarge · to target: recipe torchvision-v2 · imagenet-1k (1,281,167 images) · fp32 · pytorch2 on pytorch-2.11 · pytorch loader · prices undated"},
	} {
		st := s.clone()
		if c.change != nil {
			c.change(&st)
		}
		if got := ChartTitle("Total time vs batch size", st, c.curves); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

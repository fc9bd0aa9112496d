package charts

import (
	"strings"
	"testing"

	"cnntime/predictor"
)

// A point scaled through measured whole steps says how many in the tooltips; the others
// say their source as it is.
func TestSourceTextSaysTheMeasuredSteps(t *testing.T) {
	anchored := predictor.Curve{Model: "resnet50", Machine: "gpu/a100", Anchors: []predictor.MeasuredStep{{PerGPUBatch: 64, StepMS: 60}, {PerGPUBatch: 256, StepMS: 250}}}
	for _, tc := range []struct {
		name  string
		curve predictor.Curve
		point predictor.Point
		want  string
	}{
		{"between measured batches", anchored, predictor.Point{Batch: 128, Fits: true, IterMS: 122, Source: predictor.Anchored}, "anchored to 2 measured steps"},
		{"at a measured batch", anchored, predictor.Point{Batch: 64, Fits: true, IterMS: 60, Source: predictor.Measured}, "measured"},
		{"no measured step", predictor.Curve{Model: "resnet50", Machine: "gpu/a100"}, predictor.Point{Batch: 64, Fits: true, IterMS: 67, Source: predictor.Estimated}, "estimated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SourceText(&tc.curve, tc.point); got != tc.want {
				t.Errorf("SourceText: %q, want %q", got, tc.want)
			}
			for _, tip := range []string{Tooltip(tc.curve, tc.point), ScatterTooltip(tc.curve, tc.point)} {
				if !strings.Contains(tip, "\nsource: "+tc.want) {
					t.Errorf("tooltip without %q:\n%s", "source: "+tc.want, tip)
				}
			}
		})
	}
}

package views

import (
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"cnntime/app"
	"cnntime/predictor/hw"
)

// pickMachines are two providers' machines, each with a cheap slow GPU and a dear fast
// one: Cheapest/h picks the slow ones, Fastest GPU the fast ones.
var pickMachines = []hw.Machine{
	{ID: "a/slow", Provider: "A", Instance: "slow", GPUID: "slow-gpu", GPUCount: 1, PriceUSDPerHour: 1, Listing: hw.ListingCurrent},
	{ID: "a/fast", Provider: "A", Instance: "fast", GPUID: "fast-gpu", GPUCount: 1, PriceUSDPerHour: 4, Listing: hw.ListingCurrent},
	{ID: "b/slow", Provider: "B", Instance: "slow", GPUID: "slow-gpu", GPUCount: 1, PriceUSDPerHour: 0.5, Listing: hw.ListingCurrent},
	{ID: "b/fast", Provider: "B", Instance: "fast", GPUID: "fast-gpu", GPUCount: 1, PriceUSDPerHour: 3, Listing: hw.ListingCurrent},
}

var pickGPUs = []hw.GPU{
	{ID: "slow-gpu", Architecture: "Ampere", FP16TFLOPS: 30},
	{ID: "fast-gpu", Architecture: "Hopper", FP16TFLOPS: 300},
}

// A quick pick adds its machines to what is selected and says what it added; a pick
// whose machines are all selected, or that finds none, says so and changes nothing;
// Clear empties the selection and names what it took out. The list's ticks and the
// chips follow the selection.
func TestQuickPickAddsAndClearEmpties(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selected []string
		act      func(p *SelectionPanel)
		want     []string
		said     string
	}{
		{"a pick on an empty selection selects its machines", nil, func(p *SelectionPanel) { p.QuickPick(app.PickCheapest) },
			[]string{"a/slow", "b/slow"}, "Cheapest/h: added 2 machines."},
		{"a pick adds to what is selected", []string{"b/fast"}, func(p *SelectionPanel) { p.QuickPick(app.PickCheapest) },
			[]string{"b/fast", "a/slow", "b/slow"}, "Cheapest/h: added 2 machines to the 1 selected (3 in all); Clear empties the selection for a pick alone."},
		{"a pick partly selected adds the rest", []string{"b/slow", "a/fast"}, func(p *SelectionPanel) { p.QuickPick(app.PickCheapest) },
			[]string{"b/slow", "a/fast", "a/slow"}, "Cheapest/h: added 1 machine to the 2 selected (3 in all); Clear empties the selection for a pick alone."},
		{"a pick already selected changes nothing", []string{"b/fast", "a/fast", "a/slow"}, func(p *SelectionPanel) { p.QuickPick(app.PickFastest) },
			[]string{"b/fast", "a/fast", "a/slow"}, "Fastest GPU: all 2 of its machines are already selected."},
		{"a pick that finds none changes nothing", []string{"a/fast"}, func(p *SelectionPanel) { p.QuickPick(app.PickWorkstation) },
			[]string{"a/fast"}, "No workstation yet: a sweep in the Benchmark tab adds this computer once it has measured a kernel; `cnntime machine add` adds another machine."},
		{"Clear empties the selection", []string{"a/fast", "b/slow"}, func(p *SelectionPanel) { test.Tap(p.Clear) },
			nil, "Cleared 2 machines: a/fast, b/slow."},
		{"Clear with nothing selected says so", nil, func(p *SelectionPanel) { test.Tap(p.Clear) },
			nil, "No machine is selected."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newTestApp(t)
			s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
			defer s.Close()
			var said []string
			uiThread.do(func() {
				p := NewSelectionPanel(s, pickMachines, pickGPUs, func(err error) { t.Errorf("error: %v", err) }, func(m string) { said = append(said, m) })
				p.ToggleModel("resnet50", true)
				for _, id := range tc.selected {
					p.ToggleMachine(id, true)
				}
				said = nil
				tc.act(p)
				if got := s.Settings().Machines; !slices.Equal(got, tc.want) {
					t.Errorf("selected %v, want %v", got, tc.want)
				}
				for _, m := range pickMachines {
					if ticked, want := p.machines.checked[m.ID], slices.Contains(tc.want, m.ID); ticked != want {
						t.Errorf("%s ticked %v in the list, selected %v", m.ID, ticked, want)
					}
				}
				if n := len(p.chips.Objects); n != len(tc.want)+1 {
					t.Errorf("%d chips for %d machines and 1 CNN", n, len(tc.want))
				}
			})
			if len(said) != 1 || said[0] != tc.said {
				t.Errorf("said %q, want %q", said, tc.said)
			}
		})
	}
}

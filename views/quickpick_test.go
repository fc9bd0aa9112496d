package views

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"cnntime/app"
	"cnntime/predictor/hw"
)

// lastNotice is the last notice the status line said, "" when none.
func lastNotice(mw *MainWindow) string {
	ms := mw.StatusHistory()
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Notice {
			return ms[i].Text
		}
	}
	return ""
}

// A quick pick adds its machines to the selection: what was selected stays, the status
// line says what was added; a pick whose machines are all selected changes nothing and
// says so; Clear empties the selection naming what it took out, and a pick then selects
// its own machines alone.
func TestQuickPicksAddToTheSelection(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	p := mw.Selection
	before := mw.Session.Settings().Machines // the first launch's example
	if len(before) == 0 {
		t.Fatal("the first launch selected no machine")
	}
	var pick []string
	onUI(mw, func() {
		pick = app.Pick(app.PickFastest, p.list, p.gpus)
		p.QuickPick(app.PickFastest)
	})
	settle(t, mw)
	after := mw.Session.Settings().Machines
	var added []string
	for _, id := range pick {
		if !slices.Contains(before, id) {
			added = append(added, id)
		}
	}
	if len(added) == 0 || !slices.Equal(after, append(slices.Clone(before), added...)) {
		t.Fatalf("Fastest GPU over %v (picking %v) selected %v; want the selection kept and the pick's new machines after it", before, pick, after)
	}
	want := fmt.Sprintf("Fastest GPU: added %d machines to the %d selected (%d in all)", len(added), len(before), len(after))
	if got := lastNotice(mw); !strings.HasPrefix(got, want) {
		t.Errorf("the status line says %q, want %q", got, want)
	}
	onUI(mw, func() {
		if chips := len(p.chips.Objects); chips != len(after)+len(mw.Session.Settings().Models) {
			t.Errorf("%d chips for %d machines and %d CNNs", chips, len(after), len(mw.Session.Settings().Models))
		}
		for _, id := range after {
			if !p.machines.checked[id] {
				t.Errorf("%s is selected but not ticked in the list", id)
			}
		}
		p.QuickPick(app.PickFastest) // again: nothing new
	})
	if got := mw.Session.Settings().Machines; !slices.Equal(got, after) {
		t.Errorf("the same pick again changed the selection to %v", got)
	}
	if got := lastNotice(mw); got != fmt.Sprintf("Fastest GPU: all %d of its machines are already selected.", len(pick)) {
		t.Errorf("the same pick again says %q", got)
	}

	onUI(mw, func() { test.Tap(p.Clear) })
	settle(t, mw)
	if got := mw.Session.Settings().Machines; len(got) != 0 {
		t.Errorf("Clear left %v selected", got)
	}
	if got, want := lastNotice(mw), fmt.Sprintf("Cleared %d machines: %s.", len(after), strings.Join(after, ", ")); got != want {
		t.Errorf("Clear says %q, want %q", got, want)
	}
	onUI(mw, func() { p.QuickPick(app.PickFastest) })
	settle(t, mw)
	if got := mw.Session.Settings().Machines; !slices.Equal(got, pick) {
		t.Errorf("Fastest GPU on an empty selection selected %v, want its own %v", got, pick)
	}
	if got, want := lastNotice(mw), fmt.Sprintf("Fastest GPU: added %d machines.", len(pick)); got != want {
		t.Errorf("the pick alone says %q, want %q", got, want)
	}
}

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

// The quick picks and Clear stay where they are when a click adds or removes chips:
// the next click lands on the button the pointer is over.
func TestQuickPicksStayUnderThePointer(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	p := mw.Selection
	var at []fyne.Position
	where := func() {
		onUI(mw, func() {
			p.Tabs.SelectIndex(1)
			// the desktop driver lays the window out again when a min size changed; the
			// test driver when the window's size does
			mw.Window.Resize(fyne.NewSize(1281, 800))
			mw.Window.Resize(fyne.NewSize(1280, 800))
			at = append(at, fyne.CurrentApp().Driver().AbsolutePositionForObject(p.Picks[app.PickFastest]))
		})
	}
	where()
	for _, click := range []func(){
		func() { test.Tap(p.Clear) },
		func() { test.Tap(p.Picks[app.PickFastest]) },
		func() { test.Tap(p.Picks[app.PickCheapest]) },
	} {
		onUI(mw, click)
		settle(t, mw)
		where()
	}
	for i, pos := range at[1:] {
		if pos != at[0] {
			t.Errorf("after click %d Fastest GPU is at %v, was at %v", i+1, pos, at[0])
		}
	}
}

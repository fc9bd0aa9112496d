package views

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor/measure"
)

// benchmarkTick is how often a running sweep's view refreshes its clock, however
// fast or slow the measurements come.
const benchmarkTick = 500 * time.Millisecond

// Benchmark is the Benchmark tab: start / pause / cancel and the progress on top, the
// sweep plan's form, a live log and what the cache holds per device. It displays an
// app.SweepRunner, which owns the sweep (plan, progress, pause, cancel, log) on the
// app's cache handle; a paused or cancelled sweep keeps what it measured, and Start
// resumes from the cache.
//
// The view never draws once per measurement: the runner's changes only schedule one
// refresh at a time on the UI goroutine (and a clock ticks twice a second while a
// sweep runs), so a sweep of fifty kernels a second cannot flood the window's event
// queue and leave it drawing minutes behind the sweep.
type Benchmark struct {
	Runner *app.SweepRunner

	Device                          *widget.Select
	DeviceNote                      *widget.Label // why only the CPU is listed, when it is
	Models, Batches, Repeats, Input *widget.Entry
	Precision, Policy               *widget.Select
	PlanLabel, ETA, Holdings        *widget.Label
	Progress                        *meter
	StartButton, PauseButton        *widget.Button
	CancelButton, PlanButton        *widget.Button
	CheckButton                     *widget.Button // runs the CUDA worker's self-test

	// OnProgress, when set, is called on the UI goroutine after each refresh that
	// shows a running sweep (the window mirrors it in its status bar).
	OnProgress func(app.SweepStatus)
	// OnFinished, when set, is called on the UI goroutine once a sweep has ended
	// (done, paused, cancelled or failed) and the view shows it.
	OnFinished func(app.SweepResult, error)
	// OnMeasured, when set, is called on the sweep's goroutine with every report, as
	// it comes (tests pause or cancel at an exact count with it).
	OnMeasured func(app.SweepProgress)

	log      *widget.List
	logLines []string
	logSeq   int
	devices  app.DeviceList
	content  fyne.CanvasObject

	// refreshMu serialises refresh: Fyne's driver runs it on its one UI goroutine
	// already; its test driver runs fyne.Do on the caller's goroutine.
	refreshMu sync.Mutex
	pending   atomic.Bool // a refresh is queued on the UI goroutine
	ticking   atomic.Bool // the clock runs
	lastEnd   *app.SweepResult
	shownErr  error

	checked   chan struct{} // closed when the running GPU check has been shown
	lastCheck app.GPUCheck
	planned   chan struct{} // closed when the last Plan's answer has been shown
	planGen   atomic.Int64  // counts Plans: an older one's answer is not shown

	holdings   []app.DeviceHoldings // what RefreshHoldings last read
	holdingsAt time.Time            // when, while a sweep runs
	wasRunning bool                 // the last refresh showed a sweep running
	wasPlanned bool                 // and its plan
}

// NewBenchmark builds the view of runner's sweeps and lists the devices.
func NewBenchmark(runner *app.SweepRunner) *Benchmark {
	b := &Benchmark{Runner: runner}
	req := app.DefaultSweepRequest()
	b.Device = widget.NewSelect([]string{"cpu"}, nil)
	b.Device.SetSelected("cpu")
	b.DeviceNote = widget.NewLabel("")
	b.DeviceNote.Wrapping = fyne.TextWrapWord
	b.DeviceNote.Importance = widget.LowImportance
	b.Models = widget.NewEntry()
	b.Models.SetPlaceHolder("models, e.g. resnet50,mobilenet_v2")
	b.Models.SetText("resnet18")
	b.Batches = widget.NewEntry()
	b.Batches.SetText("1-16,24,32")
	b.Repeats = widget.NewEntry()
	b.Repeats.SetText(strconv.Itoa(req.Repeats))
	b.Input = widget.NewEntry()
	b.Input.SetPlaceHolder("model default")
	b.Precision = widget.NewSelect([]string{string(measure.FP32), string(measure.TF32), string(measure.AMP)}, nil)
	b.Precision.SetSelected(string(req.Precision))
	b.Policy = widget.NewSelect([]string{string(measure.Heuristic), string(measure.Fastest)}, nil)
	b.Policy.SetSelected(string(req.Policy))
	b.PlanLabel = widget.NewLabel("Choose models and batch sizes, then Plan or Start.")
	b.PlanLabel.Wrapping = fyne.TextWrapWord
	b.ETA = widget.NewLabel("No sweep yet.")
	b.ETA.Truncation = fyne.TextTruncateEllipsis
	b.Holdings = widget.NewLabel("")
	b.Holdings.Wrapping = fyne.TextWrapWord
	b.Progress = newMeter()
	b.log = widget.NewList(func() int { return len(b.logLines) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < len(b.logLines) {
				o.(*widget.Label).SetText(b.logLines[id])
			}
		})
	b.PlanButton = widget.NewButton("Plan", b.showPlan)
	b.StartButton = widget.NewButton("Start", b.Start)
	// The buttons show the new phase before the next click is read: Start, pressed
	// right after Pause, finds itself enabled (as Resume) and is not lost.
	b.PauseButton = widget.NewButton("Pause", func() { runner.Pause(); b.refresh() })
	b.CancelButton = widget.NewButton("Cancel", func() { runner.Cancel(); b.refresh() })
	b.CheckButton = widget.NewButton("Check GPU", b.CheckGPU)

	deviceItem := widget.NewFormItem("Device", container.NewVBox(b.Device, b.DeviceNote))
	form := widget.NewForm(
		deviceItem,
		widget.NewFormItem("Models", b.Models),
		widget.NewFormItem("Batch sizes", b.Batches),
		widget.NewFormItem("Precision", b.Precision),
		widget.NewFormItem("Algorithm policy", b.Policy),
		widget.NewFormItem("Repeats", b.Repeats),
		widget.NewFormItem("Input pixels", b.Input),
	)
	// The buttons, the progress and the plan come first, where a short window still
	// shows them; the form scrolls under them.
	buttons := container.NewHBox(b.PlanButton, b.StartButton, b.PauseButton, b.CancelButton, b.CheckButton)
	top := container.NewVBox(container.NewBorder(nil, nil, buttons, nil, b.Progress), b.ETA, b.PlanLabel)
	formSide := container.NewVScroll(form)
	bold := fyne.TextStyle{Bold: true}
	logBox := container.NewBorder(widget.NewLabelWithStyle("Log", fyne.TextAlignLeading, bold), nil, nil, nil, b.log)
	cacheBox := container.NewBorder(widget.NewLabelWithStyle("Cache", fyne.TextAlignLeading, bold), nil, nil, nil,
		container.NewVScroll(b.Holdings))
	right := container.NewHSplit(logBox, cacheBox)
	right.Offset = 0.62
	body := container.NewHSplit(formSide, right)
	body.Offset = 0.4
	b.content = container.NewBorder(top, nil, nil, nil, body)

	runner.OnChange(b.poke)
	b.RefreshDevices()
	b.restoreLastRequest()
	b.RefreshHoldings()
	b.refresh()
	b.ETA.SetText(b.lastSweepText())
	return b
}

// restoreLastRequest fills the form with the cache's newest sweep (this computer's
// last, of any session): what "Start with the same models resumes it" asks for. A
// device this computer no longer lists keeps the form's.
func (b *Benchmark) restoreLastRequest() {
	req, ok, err := b.Runner.LastRequest(context.Background())
	if err != nil || !ok {
		return
	}
	b.Models.SetText(strings.Join(req.Models, ","))
	b.Batches.SetText(app.FormatBatches(req.Batches))
	if req.Repeats > 0 {
		b.Repeats.SetText(strconv.Itoa(req.Repeats))
	}
	b.Input.SetText("")
	if req.Input > 0 {
		b.Input.SetText(strconv.Itoa(req.Input))
	}
	if slices.Contains(b.Precision.Options, string(req.Precision)) {
		b.Precision.SetSelected(string(req.Precision))
	}
	if slices.Contains(b.Policy.Options, string(req.Policy)) {
		b.Policy.SetSelected(string(req.Policy))
	}
	if slices.Contains(b.Device.Options, req.Device) {
		b.Device.SetSelected(req.Device)
	}
}

// lastSweepText is what the progress line says before this window ran a sweep: how
// the cache's last sweep ended (a sweep of an earlier session, or another program's),
// or that there has been none.
func (b *Benchmark) lastSweepText() string {
	for _, h := range b.holdings {
		if h.LastSweep != "" {
			return fmt.Sprintf("The last sweep of %s was %s; Start with the same models resumes it from the cache.", h.Device.Name, app.SweepStateText(h.LastSweep))
		}
	}
	return "No sweep yet."
}

// Content is the view's root object, for the window's Benchmark tab.
func (b *Benchmark) Content() fyne.CanvasObject { return b.content }

// RefreshDevices lists the devices again (the CPU, and CUDA GPUs through the worker),
// and says under the list why it holds only the CPU when it does.
func (b *Benchmark) RefreshDevices() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.devices = app.ListSweepDevices(ctx)
	var ids []string
	for _, d := range b.devices.Devices {
		ids = append(ids, d.ID)
		b.Runner.Log(fmt.Sprintf("device %s: %s (%s)", d.ID, d.Device.Name, d.Device.Key))
	}
	if b.devices.CUDA != "" {
		b.Runner.Log("no CUDA devices: " + b.devices.CUDA)
		note := b.devices.CUDA
		if b.devices.NoNVIDIA {
			note = "this computer has no NVIDIA GPU (its PCI bus lists none); sweeps run on the CPU."
		}
		b.DeviceNote.SetText("Only the CPU: " + note)
		b.DeviceNote.Show()
	} else {
		b.DeviceNote.Hide()
	}
	b.Device.SetOptions(ids)
}

// RefreshHoldings shows what the cache holds per device.
func (b *Benchmark) RefreshHoldings() {
	hs, err := b.Runner.Holdings(context.Background())
	if err != nil {
		b.Holdings.SetText("cannot read the cache: " + err.Error())
		return
	}
	b.holdings = hs
	running := "" // the device a sweep runs on, from its start (its plan comes seconds later)
	if st := b.Runner.Status(); st.Running && st.Plan != nil {
		running = st.Plan.Device.Key
	} else if st.Running && st.Request != nil {
		for _, d := range b.devices.Devices {
			if d.ID == st.Request.Device {
				running = d.Device.Key
			}
		}
	}
	if len(hs) == 0 {
		b.Holdings.SetText("No measurements yet.")
		return
	}
	var sb strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&sb, "%s\n  %s (%d out of memory), %s", h.Device.Name, charts.Count(h.Kernels, "kernel", "kernels"), h.OutOfMemory, charts.Count(h.Steps, "step", "steps"))
		switch {
		case running != "" && h.Device.Key == running:
			sb.WriteString(", a sweep running now") // the cache's row says "running" or an older sweep's end
		case h.LastSweep != "":
			fmt.Fprintf(&sb, ", last sweep %s", app.SweepStateText(h.LastSweep))
		}
		sb.WriteString("\n")
	}
	b.Holdings.SetText(sb.String())
}

// request reads the form; a mistake is shown and returns ok=false.
func (b *Benchmark) request() (app.SweepRequest, bool) {
	req := app.DefaultSweepRequest()
	req.Device = b.Device.Selected
	req.Models = nil
	for _, m := range strings.Split(b.Models.Text, ",") {
		if m = strings.TrimSpace(m); m != "" {
			req.Models = append(req.Models, m)
		}
	}
	batches, err := app.ParseBatches(b.Batches.Text, app.MaxSweepBatch)
	if err != nil {
		b.PlanLabel.SetText("Batch sizes: " + err.Error())
		return req, false
	}
	req.Batches = batches
	if req.Repeats, err = strconv.Atoi(strings.TrimSpace(b.Repeats.Text)); err != nil || req.Repeats < 1 {
		b.PlanLabel.SetText(fmt.Sprintf("Repeats %q: give a whole number of at least 1.", b.Repeats.Text))
		return req, false
	}
	if in := strings.TrimSpace(b.Input.Text); in != "" {
		if req.Input, err = strconv.Atoi(in); err != nil || req.Input < 1 {
			b.PlanLabel.SetText(fmt.Sprintf("Input pixels %q: give a whole number, or leave it empty for each model's own.", in))
			return req, false
		}
	}
	req.Precision = measure.Precision(b.Precision.Selected)
	req.Policy = measure.Policy(b.Policy.Selected)
	return req, true
}

// showPlan plans the form's sweep in the background (where the cache has none of the
// device's measurements, the runner times a few kernels first: a second or two) and
// shows what it would measure and how long it should take.
func (b *Benchmark) showPlan() {
	req, ok := b.request()
	if !ok {
		return
	}
	gen := b.planGen.Add(1)
	done := make(chan struct{})
	b.planned = done
	b.PlanLabel.SetText("Planning (timing a few of the plan's kernels on the device where the cache has none of its own)…")
	go func() {
		defer close(done)
		p, err := b.Runner.Plan(context.Background(), req)
		text := "Cannot plan: "
		if err == nil {
			text = app.DescribePlan(p)
		} else {
			text += err.Error()
		}
		fyne.DoAndWait(func() {
			if b.planGen.Load() == gen {
				b.PlanLabel.SetText(text)
			}
		})
	}()
}

// WaitPlan waits until the last Plan's answer is shown (tests).
func (b *Benchmark) WaitPlan() {
	if b.planned != nil {
		<-b.planned
	}
}

// Start runs (or resumes) the sweep in the background; pressed while the sweep is
// pausing, it resumes as soon as the pause is done. The view follows the runner.
func (b *Benchmark) Start() {
	req, ok := b.request()
	if !ok {
		return
	}
	err := b.Runner.Start(req, app.SweepEvents{
		Planned: func(p app.SweepPlan) {
			text := app.DescribePlan(p)
			fyne.Do(func() { b.PlanLabel.SetText(text) })
		},
		Progress: func(p app.SweepProgress) {
			if b.OnMeasured != nil {
				b.OnMeasured(p)
			}
		},
	})
	if err != nil {
		b.PlanLabel.SetText(err.Error())
		return
	}
	b.refresh()
}

// poke schedules one refresh on the UI goroutine unless one is already waiting.
func (b *Benchmark) poke() {
	if b.pending.CompareAndSwap(false, true) {
		fyne.Do(func() {
			b.pending.Store(false)
			b.refresh()
		})
	}
}

// tick keeps the elapsed time and the ETA moving while a sweep runs.
func (b *Benchmark) tick() {
	if !b.ticking.CompareAndSwap(false, true) {
		return
	}
	go func() {
		t := time.NewTicker(benchmarkTick)
		defer t.Stop()
		for range t.C {
			if !b.Runner.Running() {
				b.ticking.Store(false)
				b.poke()
				return
			}
			b.poke()
		}
	}()
}

// refresh shows the runner's state: the buttons for its phase, the progress, the
// clock, the log, and how the last sweep ended. UI goroutine only.
func (b *Benchmark) refresh() {
	b.refreshMu.Lock()
	defer b.refreshMu.Unlock()
	st := b.Runner.Status()
	b.setPhase(st)
	if st.LogSeq != b.logSeq {
		b.logSeq, b.logLines = st.LogSeq, st.Log
		b.log.Refresh()
		b.log.ScrollToBottom()
	}
	if st.Running {
		b.tick()
		p := st.Progress
		if p.Total > 0 {
			// Of the whole request: what the cache had before (a resumed sweep's
			// earlier part) counts as done.
			b.Progress.SetValue(float64(p.Done+p.Cached) / float64(p.Total+p.Cached))
		}
		b.ETA.SetText(describeRun(st))
		// The cache panel follows the sweep: at its start, once it is planned, then
		// every few seconds.
		if !b.wasRunning || (st.Plan != nil) != b.wasPlanned || time.Since(b.holdingsAt) > holdingsEvery {
			b.wasRunning, b.wasPlanned, b.holdingsAt = true, st.Plan != nil, time.Now()
			b.RefreshHoldings()
		}
		if b.OnProgress != nil {
			b.OnProgress(st)
		}
		return
	}
	b.wasRunning = false
	if st.Result != nil && (st.Result != b.lastEnd || st.Err != b.shownErr) {
		b.lastEnd, b.shownErr = st.Result, st.Err
		b.finish(*st.Result, st.Err)
	}
}

// describeRun is the line under the progress bar while a sweep runs.
func describeRun(st app.SweepStatus) string {
	p := st.Progress
	what := "Running"
	switch st.Phase {
	case app.SweepPausing:
		what = "Pausing… (after the measurement in flight)"
		if st.Queued {
			what = "Pausing… Start pressed: resuming once paused"
		}
	case app.SweepCancelling:
		what = "Cancelling… (after the measurement in flight)"
	}
	if p.Total == 0 {
		return fmt.Sprintf("%s: planning, %s elapsed.", what, elapsedText(st.Elapsed))
	}
	eta := "estimating the time left"
	if st.ETA > 0 {
		eta = "about " + roundETA(st.ETA) + " left"
	}
	before := ""
	if p.Cached > 0 { // a resumed sweep counts on from what the cache had
		before = fmt.Sprintf(" (%s measured before)", charts.FormatCount(int64(p.Cached)))
	}
	return fmt.Sprintf("%s: %s of %s%s, %s elapsed, %s.", what, charts.FormatCount(int64(p.Done+p.Cached)), charts.FormatCount(int64(p.Total+p.Cached)),
		before, elapsedText(st.Elapsed), eta)
}

// elapsedText is a sweep's running time as its clock reads, in the units of the time
// left beside it: "10 s", "4 min 05 s", "2 h 05 min" (Go's "4m5s" read as code).
func elapsedText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// holdingsEvery is how often the cache panel reads the cache again while a sweep runs.
const holdingsEvery = 5 * time.Second

// roundETA rounds a time left the way people say it: "40 s", "24 min", "2 h 05 min".
func roundETA(d time.Duration) string {
	switch {
	case d < time.Minute-time.Second/2:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour-time.Minute/2:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// setPhase enables the buttons that mean something in the runner's phase: Start when
// idle or pausing (it then resumes after the pause), Pause while running, Cancel while
// running or pausing.
func (b *Benchmark) setPhase(st app.SweepStatus) {
	enable := func(w fyne.Disableable, on bool) {
		if on && w.Disabled() {
			w.Enable()
		} else if !on && !w.Disabled() {
			w.Disable()
		}
	}
	phase := st.Phase
	enable(b.StartButton, phase == app.SweepIdle || (phase == app.SweepPausing && !st.Queued))
	enable(b.PlanButton, phase == app.SweepIdle)
	enable(b.PauseButton, phase == app.SweepRunning)
	enable(b.CancelButton, phase == app.SweepRunning || phase == app.SweepPausing)
	if phase == app.SweepPausing {
		b.StartButton.SetText("Resume")
	} else if b.StartButton.Text != "Start" {
		b.StartButton.SetText("Start")
	}
}

// Wait blocks until the running sweep (if any, and one started while it paused) has
// ended and the view shows it; not on the UI goroutine.
func (b *Benchmark) Wait() {
	b.Runner.Wait()
	done := make(chan struct{})
	fyne.Do(func() {
		b.refresh()
		close(done)
	})
	<-done
}

// CheckGPU runs the CUDA worker's self-test (cnntime devices --check) on the selected
// GPU in the background and shows its table, or the sentences saying why there is
// none, in a dialog.
func (b *Benchmark) CheckGPU() {
	device := 0
	if id, ok := strings.CutPrefix(b.Device.Selected, "cuda:"); ok {
		device, _ = strconv.Atoi(id)
	}
	b.CheckButton.Disable()
	b.checked = make(chan struct{})
	done := b.checked
	b.Runner.Log(fmt.Sprintf("GPU check of cuda:%d started (about a minute on a GPU)", device))
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		res := app.CheckGPU(ctx, device)
		var text strings.Builder
		_ = res.Write(&text)
		switch {
		case res.Report == nil:
			b.Runner.Log("GPU check: " + res.Reason)
		case res.Trusted:
			b.Runner.Log("GPU check: this GPU's measurements can be trusted")
		default:
			b.Runner.Log("GPU check: " + res.Reason)
		}
		fyne.Do(func() {
			b.lastCheck = res
			b.CheckButton.Enable()
			b.refresh()
			b.showCheck(res, text.String())
			close(done)
		})
	}()
}

// WaitCheck blocks until the running GPU check (if any) has been shown.
func (b *Benchmark) WaitCheck() {
	if b.checked != nil {
		<-b.checked
	}
}

// LastCheck is the last GPU check's outcome.
func (b *Benchmark) LastCheck() app.GPUCheck { return b.lastCheck }

// showCheck shows the check in a dialog over the window holding the view: a report's
// table as it is (monospace, scrolled), a reason as wrapped sentences.
func (b *Benchmark) showCheck(res app.GPUCheck, text string) {
	c := fyne.CurrentApp().Driver().CanvasForObject(b.content)
	for _, w := range fyne.CurrentApp().Driver().AllWindows() {
		if c == nil || w.Canvas() != c {
			continue
		}
		var body fyne.CanvasObject
		if res.Report == nil {
			l := widget.NewLabel(strings.TrimSpace(text))
			l.Wrapping = fyne.TextWrapWord
			scroll := container.NewVScroll(l)
			scroll.SetMinSize(fyne.NewSize(520, 160))
			body = scroll
		} else {
			l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
			scroll := container.NewScroll(l)
			scroll.SetMinSize(fyne.NewSize(720, 360))
			body = scroll
		}
		d := dialog.NewCustom("GPU check", "Close", body, w)
		closeOnEscape(d, w)
		d.Show()
		return
	}
}

func (b *Benchmark) finish(res app.SweepResult, err error) {
	b.setPhase(b.Runner.Status())
	if err != nil {
		b.PlanLabel.SetText("Sweep failed: " + err.Error())
		b.ETA.SetText("Sweep failed; see the plan's line for why.")
	} else {
		if res.State == "done" {
			b.Progress.SetValue(1)
			b.ETA.SetText(fmt.Sprintf("Done: %s measured in %s.", charts.FormatCount(int64(res.Done)), res.Elapsed.Round(time.Second)))
		} else {
			b.ETA.SetText(fmt.Sprintf("Sweep %s after %d of %d; Start resumes it.", res.State, res.Done+res.Cached, res.Total+res.Cached))
		}
	}
	b.RefreshHoldings()
	if b.OnFinished != nil {
		b.OnFinished(res, err)
	}
}

// LogText is the log's current text.
func (b *Benchmark) LogText() string { return strings.Join(b.Runner.Status().Log, "\n") }

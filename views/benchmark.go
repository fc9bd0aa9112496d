package views

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/measure"
)

// logLines is how many lines the Benchmark view's log keeps.
const logLines = 200

// Benchmark is the Benchmark tab: the devices found, a sweep plan with its estimate,
// start / pause / cancel, a progress bar with ETA, a live log, and what the cache holds
// per device. It drives app.SweepInto on the cache file DBPath; a paused or cancelled
// sweep keeps what it measured, and Start resumes from the cache.
type Benchmark struct {
	DBPath string

	Device                          *widget.Select
	Models, Batches, Repeats, Input *widget.Entry
	Precision, Policy               *widget.Select
	PlanLabel, ETA, Holdings        *widget.Label
	Progress                        *widget.ProgressBar
	Log                             *widget.Label
	StartButton, PauseButton        *widget.Button
	CancelButton, PlanButton        *widget.Button
	CheckButton                     *widget.Button // runs the CUDA worker's self-test

	// OnProgress, when set, is called on the UI goroutine after each progress update is
	// shown (the window can mirror it in a status bar).
	OnProgress func(app.SweepProgress)
	// OnFinished, when set, is called on the UI goroutine when a sweep ends (done,
	// paused, cancelled or failed), after the view shows it.
	OnFinished func(app.SweepResult, error)

	mu      sync.Mutex
	stop    context.CancelCauseFunc // the running sweep's; nil when none runs
	done    chan struct{}           // closed when the running sweep ends
	lines   []string
	devices app.DeviceList
	content fyne.CanvasObject

	checked   chan struct{} // closed when the running GPU check has been shown
	lastCheck app.GPUCheck
}

// NewBenchmark builds the view for the cache at dbPath and lists the devices.
func NewBenchmark(dbPath string) *Benchmark {
	b := &Benchmark{DBPath: dbPath}
	req := app.DefaultSweepRequest()
	b.Device = widget.NewSelect([]string{"cpu"}, nil)
	b.Device.SetSelected("cpu")
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
	b.ETA = widget.NewLabel("")
	b.Holdings = widget.NewLabel("")
	b.Progress = widget.NewProgressBar()
	b.Log = widget.NewLabel("")
	b.Log.Wrapping = fyne.TextWrapWord
	b.PlanButton = widget.NewButton("Plan", b.showPlan)
	b.StartButton = widget.NewButton("Start", b.Start)
	b.PauseButton = widget.NewButton("Pause", func() { b.halt(app.ErrSweepPaused) })
	b.CancelButton = widget.NewButton("Cancel", func() { b.halt(context.Canceled) })
	b.CheckButton = widget.NewButton("Check GPU", b.CheckGPU)
	b.setRunning(false)

	form := widget.NewForm(
		widget.NewFormItem("Device", b.Device),
		widget.NewFormItem("Models", b.Models),
		widget.NewFormItem("Batch sizes", b.Batches),
		widget.NewFormItem("Precision", b.Precision),
		widget.NewFormItem("Algorithm policy", b.Policy),
		widget.NewFormItem("Repeats", b.Repeats),
		widget.NewFormItem("Input pixels", b.Input),
	)
	buttons := container.NewHBox(b.PlanButton, b.StartButton, b.PauseButton, b.CancelButton, b.CheckButton)
	top := container.NewVBox(widget.NewLabelWithStyle("Sweep", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		form, buttons, b.PlanLabel, b.Progress, b.ETA)
	right := container.NewBorder(widget.NewLabelWithStyle("Cache", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil,
		container.NewVScroll(b.Holdings))
	logBox := container.NewBorder(widget.NewLabelWithStyle("Log", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil,
		container.NewVScroll(b.Log))
	b.content = container.NewHSplit(container.NewBorder(top, nil, nil, nil, logBox), right)
	b.RefreshDevices()
	b.RefreshHoldings()
	return b
}

// Content is the view's root object, for the window's Benchmark tab.
func (b *Benchmark) Content() fyne.CanvasObject { return b.content }

// RefreshDevices lists the devices again (the CPU, and CUDA GPUs through the worker).
func (b *Benchmark) RefreshDevices() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.devices = app.ListSweepDevices(ctx)
	var ids []string
	for _, d := range b.devices.Devices {
		ids = append(ids, d.ID)
		b.logf("device %s: %s (%s)", d.ID, d.Device.Name, d.Device.Key)
	}
	if b.devices.CUDA != "" {
		b.logf("no CUDA devices: %s", b.devices.CUDA)
	}
	b.Device.SetOptions(ids)
}

// RefreshHoldings shows what the cache holds per device.
func (b *Benchmark) RefreshHoldings() {
	hs, err := app.CacheHoldings(context.Background(), b.DBPath)
	if err != nil {
		b.Holdings.SetText("cannot read the cache: " + err.Error())
		return
	}
	if len(hs) == 0 {
		b.Holdings.SetText("No measurements yet.")
		return
	}
	var sb strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&sb, "%s\n  %d kernels (%d out of memory), %d steps", h.Device.Name, h.Kernels, h.OutOfMemory, h.Steps)
		if h.LastSweep != "" {
			fmt.Fprintf(&sb, ", last sweep %s", h.LastSweep)
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

func describePlan(p app.SweepPlan) string {
	return fmt.Sprintf("%d kernels of %d layer configurations to measure (%d already in the cache), %d steps; estimate %s.",
		len(p.Kernels.Items), p.Kernels.Configs, p.Kernels.Cached, len(p.Steps), p.Kernels.Estimate.Round(time.Second))
}

func (b *Benchmark) showPlan() {
	req, ok := b.request()
	if !ok {
		return
	}
	p, err := app.PlanSweepIn(context.Background(), b.DBPath, req)
	if err != nil {
		b.PlanLabel.SetText("Cannot plan: " + err.Error())
		return
	}
	b.PlanLabel.SetText(describePlan(p))
}

// Start runs (or resumes) the sweep in the background; the view follows its progress.
func (b *Benchmark) Start() {
	req, ok := b.request()
	if !ok {
		return
	}
	b.mu.Lock()
	if b.stop != nil {
		b.mu.Unlock()
		return
	}
	ctx, stop := context.WithCancelCause(context.Background())
	b.stop, b.done = stop, make(chan struct{})
	done := b.done
	b.mu.Unlock()
	b.setRunning(true)
	b.Progress.SetValue(0)
	b.logf("sweep of %s on %s started", strings.Join(req.Models, ", "), req.Device)
	go func() {
		res, err := app.SweepInto(ctx, b.DBPath, req,
			func(p app.SweepPlan) { fyne.Do(func() { b.PlanLabel.SetText(describePlan(p)) }) },
			func(p app.SweepProgress) { fyne.Do(func() { b.show(p) }) })
		stop(nil)
		fyne.Do(func() {
			b.finish(res, err)
			close(done)
		})
	}()
}

// CheckGPU runs the CUDA worker's self-test (cnntime devices --check) on the selected
// GPU in the background and shows its table, or the one sentence saying why there is
// none, in a dialog.
func (b *Benchmark) CheckGPU() {
	device := 0
	if id, ok := strings.CutPrefix(b.Device.Selected, "cuda:"); ok {
		device, _ = strconv.Atoi(id)
	}
	b.CheckButton.Disable()
	b.checked = make(chan struct{})
	done := b.checked
	b.logf("GPU check of cuda:%d started (about a minute on a GPU)", device)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		res := app.CheckGPU(ctx, device)
		var text strings.Builder
		_ = res.Write(&text)
		fyne.Do(func() {
			b.lastCheck = res
			b.CheckButton.Enable()
			switch {
			case res.Report == nil:
				b.logf("GPU check: %s", res.Reason)
			case res.Trusted:
				b.logf("GPU check: this GPU's measurements can be trusted")
			default:
				b.logf("GPU check: %s", res.Reason)
			}
			b.showCheck(text.String())
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

// showCheck shows the check's text in a dialog over the window holding the view.
func (b *Benchmark) showCheck(text string) {
	c := fyne.CurrentApp().Driver().CanvasForObject(b.content)
	for _, w := range fyne.CurrentApp().Driver().AllWindows() {
		if c == nil || w.Canvas() != c {
			continue
		}
		body := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		scroll := container.NewScroll(body)
		scroll.SetMinSize(fyne.NewSize(720, 360))
		dialog.ShowCustom("GPU check", "Close", scroll, w)
		return
	}
}

// Wait blocks until the running sweep (if any) has ended and the view shows it.
func (b *Benchmark) Wait() {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done != nil {
		<-done
	}
}

// halt pauses (cause app.ErrSweepPaused) or cancels the running sweep.
func (b *Benchmark) halt(cause error) {
	b.mu.Lock()
	stop := b.stop
	b.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

func (b *Benchmark) show(p app.SweepProgress) {
	if p.Message != "" {
		b.logf("warning: %s", p.Message)
		return
	}
	if p.Total > 0 {
		b.Progress.SetValue(float64(p.Done) / float64(p.Total))
	}
	eta := "ETA: estimating"
	if p.ETA > 0 {
		eta = "ETA: " + p.ETA.Round(time.Second).String()
	}
	b.ETA.SetText(fmt.Sprintf("%d of %d, %s elapsed, %s", p.Done, p.Total, p.Elapsed.Round(time.Second), eta))
	switch {
	case p.Measurement != nil && p.Measurement.Status == measure.OK:
		m := p.Measurement
		b.logf("%s batch %d %s: %.3f ms", m.ConfigKey, m.Batch, m.Phase, m.MedianMS)
	case p.Measurement != nil:
		b.logf("%s batch %d %s: %s", p.Measurement.ConfigKey, p.Measurement.Batch, p.Measurement.Phase, p.Measurement.Status)
	case p.Step != nil:
		b.logf("step %s batch %d: %.2f ms (%s)", p.Step.Model, p.Step.Batch, p.Step.MedianMS, p.Step.Status)
	}
	if b.OnProgress != nil {
		b.OnProgress(p)
	}
}

func (b *Benchmark) finish(res app.SweepResult, err error) {
	b.mu.Lock()
	b.stop = nil
	b.mu.Unlock()
	b.setRunning(false)
	if err != nil {
		b.logf("sweep failed: %v", err)
		b.PlanLabel.SetText("Sweep failed: " + err.Error())
	} else {
		b.logf("sweep %s: %d of %d measured in %s, %d out of memory", res.State, res.Done, res.Total, res.Elapsed.Round(time.Second), res.OOM)
		if res.State == "done" {
			b.Progress.SetValue(1)
			b.ETA.SetText(fmt.Sprintf("Done: %d measured in %s.", res.Done, res.Elapsed.Round(time.Second)))
		} else {
			b.ETA.SetText(fmt.Sprintf("Sweep %s after %d of %d; Start resumes it.", res.State, res.Done, res.Total))
		}
	}
	b.RefreshHoldings()
	if b.OnFinished != nil {
		b.OnFinished(res, err)
	}
}

func (b *Benchmark) setRunning(on bool) {
	for _, w := range []fyne.Disableable{b.StartButton, b.PlanButton} {
		if on {
			w.Disable()
		} else {
			w.Enable()
		}
	}
	for _, w := range []fyne.Disableable{b.PauseButton, b.CancelButton} {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
}

// logf adds a line to the log, keeping the last logLines.
func (b *Benchmark) logf(format string, args ...any) {
	b.lines = append(b.lines, fmt.Sprintf(format, args...))
	if len(b.lines) > logLines {
		b.lines = b.lines[len(b.lines)-logLines:]
	}
	b.Log.SetText(strings.Join(b.lines, "\n"))
}

// LogText is the log's current text.
func (b *Benchmark) LogText() string { return b.Log.Text }

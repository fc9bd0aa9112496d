package views

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// SelectionPanel is the left panel: the selected CNNs and machines as removable
// chips, then tabs with the CNNs by family, the machines by provider (a GPU filter,
// older listings hidden unless asked for, quick picks) and the training run's
// settings. Every change goes to the session at once.
type SelectionPanel struct {
	// runForm is the Run tab's form: its labels dim with their fields only when it
	// refreshes (showTrain refreshes it).
	runForm *widget.Form

	session  *app.Session
	onError  func(error)
	onInfo   func(string)
	models   *checkTree
	machines *checkTree
	gpu      *widget.Select
	older    *widget.Check // shows previous-generation GPUs and historical prices
	// OnOlderChanged, when set, is called when the Older GPUs check changes (the
	// Machines tab follows it).
	OnOlderChanged func(bool)
	gpuOf          map[string]string
	gpus           map[string]hw.GPU
	list           []hw.Machine // the machines, in list order
	byID           map[string]hw.Machine

	Tabs      *container.AppTabs
	chips     *fyne.Container
	Epochs    *widget.Entry
	Images    *widget.Entry
	Precision *widget.Select
	BatchMin  *widget.Entry
	BatchMax  *widget.Entry  // the cap; empty for none
	Nodes     *widget.Entry  // instances of each machine training together; empty for one
	RunData   RunData        // dataset, input size, loader, workers, memory format
	Prices    PriceControls  // on-demand or spot, the region
	Filters   MachineFilters // the machine list's provider, spot and price filters
	Train     TrainControls  // train for N epochs or to a target accuracy
	Limit     LimitControls  // a deadline or budget the results answer
	// Picks are the quick picks, each adding its machines to the selection; Clear
	// empties the machine selection.
	Picks map[app.QuickPick]*widget.Button
	Clear *widget.Button
	// WorkersNote warns when the loader workers asked for are more than a selected
	// machine's vCPUs per GPU.
	WorkersNote *widget.Label

	content fyne.CanvasObject
}

const allGPUs = "All GPUs"

// providerTitles are the providers' names as people write them.
var providerTitles = map[string]string{"aws": "AWS", "gcp": "GCP", "azure": "Azure", "lambda": "Lambda", "runpod": "RunPod", "coreweave": "CoreWeave"}

// NewSelectionPanel builds the panel for a session; onError shows problems the user
// must know about (a machine list that cannot be read), onInfo a line for the status bar.
func NewSelectionPanel(s *app.Session, machines []hw.Machine, gpus []hw.GPU, onError func(error), onInfo func(string)) *SelectionPanel {
	p := &SelectionPanel{session: s, onError: onError, onInfo: onInfo, gpuOf: map[string]string{}, gpus: map[string]hw.GPU{}, byID: map[string]hw.Machine{}}
	for _, g := range gpus {
		p.gpus[g.ID] = g
	}
	p.models = newCheckTree("Search CNNs (Ctrl+F)", func(id string, on bool) { p.report(s.SetModel(id, on)); p.refreshChips() })
	p.machines = newCheckTree("Search machines or GPUs", func(id string, on bool) { p.report(s.SetMachine(id, on)); p.refreshChips() })
	p.machines.tooltip = p.machineTooltip
	p.gpu = widget.NewSelect([]string{allGPUs}, func(string) { p.machines.applyFilter() })
	p.gpu.SetSelected(allGPUs)
	p.older = widget.NewCheck("Older GPUs", func(on bool) {
		p.machines.applyFilter()
		if p.OnOlderChanged != nil {
			p.OnOlderChanged(on)
		}
	})
	p.newMachineFilters()
	p.machines.filter = func(id string) bool {
		if p.gpu.Selected != "" && p.gpu.Selected != allGPUs && p.gpuOf[id] != p.gpu.Selected {
			return false
		}
		if !p.machines.checked[id] && !p.passesFilters(p.byID[id]) {
			return false
		}
		// a selected machine stays listed, so it can be unticked
		return p.older.Checked || p.machines.checked[id] || !app.PreviousGeneration(p.byID[id], p.gpus)
	}
	p.Picks = map[app.QuickPick]*widget.Button{}
	var picks []fyne.CanvasObject
	for _, q := range app.QuickPicks() {
		q := q
		b := widget.NewButton(q.Title(), func() { p.QuickPick(q) })
		p.Picks[q] = b
		picks = append(picks, b)
	}
	p.Clear = widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), p.ClearMachines)
	p.Clear.Importance = widget.LowImportance
	picks = append(picks, p.Clear)
	p.RefreshModels()
	p.SetMachines(machines)

	st := s.Settings()
	p.Epochs = p.intEntry(strconv.Itoa(st.Epochs), func(st *app.SessionSettings, n int) { st.Epochs = n })
	p.Images = p.intEntry(strconv.Itoa(st.Images), func(st *app.SessionSettings, n int) { st.Images = n })
	p.BatchMin = p.intEntry(strconv.Itoa(st.BatchMin), func(st *app.SessionSettings, n int) { st.BatchMin = n })
	p.BatchMax = p.optionalIntEntry(st.BatchMax, "none (what fits)", func(st *app.SessionSettings, n int) { st.BatchMax = n })
	p.Nodes = p.optionalIntEntry(st.Nodes, "1 (one machine)", func(st *app.SessionSettings, n int) { st.Nodes = n })
	var precisions []string
	for _, prec := range predictor.TrainingPrecisions {
		precisions = append(precisions, string(prec))
	}
	p.Precision = widget.NewSelect(precisions, nil)
	p.Precision.SetSelected(string(st.Precision))
	p.Precision.OnChanged = func(v string) {
		p.report(s.Update(func(st *app.SessionSettings) { st.Precision = measure.Precision(v) }))
	}

	trainFor, recipe := p.trainItems()
	form := widget.NewForm(trainFor, widget.NewFormItem("Epochs", p.Epochs))
	p.runForm = form
	for _, it := range recipe {
		form.AppendItem(it)
	}
	for _, it := range []*widget.FormItem{
		widget.NewFormItem("Images", p.Images),
		widget.NewFormItem("Precision", p.Precision),
		widget.NewFormItem("Batch from", p.BatchMin),
		widget.NewFormItem("Batch cap", p.BatchMax),
		widget.NewFormItem("Instances", p.Nodes),
	} {
		form.AppendItem(it)
	}
	for _, it := range p.runDataItems() {
		form.AppendItem(it)
	}
	for _, it := range p.priceItems() {
		form.AppendItem(it)
	}
	for _, it := range p.limitItems() {
		form.AppendItem(it)
	}
	p.WorkersNote = widget.NewLabel("")
	p.WorkersNote.Wrapping = fyne.TextWrapWord
	p.WorkersNote.Importance = widget.WarningImportance
	p.WorkersNote.Hide()
	changed := p.RunData.Workers.OnChanged
	p.RunData.Workers.OnChanged = func(s string) {
		changed(s)
		p.checkWorkers()
	}
	hint := widget.NewLabel("Each curve runs up to the largest batch that fits its machine's memory (the global batch on multi-GPU machines and over all instances); a cap stops it earlier. Instances train data-parallel over the catalog's network between them.")
	hint.Wrapping = fyne.TextWrapWord
	hint.TextStyle = fyne.TextStyle{Italic: true}

	modelBox := container.NewBorder(p.models.search, nil, nil, nil, p.models.tree)
	// Flowing rows whose least width is their widest control's: the panel can be narrow.
	filters := container.New(newFlowLayout(theme.Padding(), theme.Padding()), p.Filters.Provider, p.gpu, p.Filters.MaxPrice, p.Filters.SpotOnly, p.older)
	pickRow := container.New(newFlowLayout(theme.Padding(), theme.Padding()), picks...)
	machineBox := container.NewBorder(container.NewVBox(p.machines.search, filters, pickRow), nil, nil, nil, p.machines.tree)
	p.Tabs = container.NewAppTabs(
		container.NewTabItem("CNNs", modelBox),
		container.NewTabItem("Machines", machineBox),
		container.NewTabItem("Run", container.NewVScroll(container.NewVBox(form, p.Train.Basis, p.WorkersNote, hint))),
	)
	p.chips = container.New(newFlowLayout(theme.Padding(), theme.Padding()/2))
	p.refreshChips()
	// The chips' height is fixed: a quick pick or Clear that adds or removes chips
	// leaves the buttons under the pointer, for the next click.
	chipArea := container.New(&maxHeightLayout{max: 104, fixed: true}, container.NewVScroll(p.chips))
	p.content = container.NewBorder(chipArea, nil, nil, nil, p.Tabs)
	return p
}

// Content is the panel's widget tree.
func (p *SelectionPanel) Content() fyne.CanvasObject { return p.content }

func (p *SelectionPanel) report(err error) {
	if err != nil && p.onError != nil {
		p.onError(err)
	}
}

func (p *SelectionPanel) info(msg string) {
	if p.onInfo != nil {
		p.onInfo(msg)
	}
}

// intEntry is a number field whose valid values apply at once; an invalid one is
// marked and changes nothing.
func (p *SelectionPanel) intEntry(text string, set func(*app.SessionSettings, int)) *widget.Entry {
	e := widget.NewEntry()
	e.AlwaysShowValidationError = true // "abc" is marked as typed, not when the field loses focus
	e.SetText(text)
	check := func(s string) (app.SessionSettings, error) {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
		if err != nil {
			return app.SessionSettings{}, errNotWholeNumber
		}
		next := p.session.Settings()
		set(&next, n)
		return next, next.Validate()
	}
	e.Validator = func(s string) error { _, err := check(s); return err }
	e.OnChanged = func(s string) {
		if next, err := check(s); err == nil {
			_ = p.session.Apply(next)
		}
	}
	return e
}

// showNodes enables Instances unless every machine selected is this computer, which
// no instance count multiplies (the engine predicts it as one machine whatever the
// count).
func (p *SelectionPanel) showNodes(machines []string) {
	if p.Nodes == nil {
		return
	}
	local := len(machines) > 0
	for _, id := range machines {
		local = local && app.OnThisComputer(id)
	}
	if local && !p.Nodes.Disabled() {
		p.Nodes.Disable()
	} else if !local && p.Nodes.Disabled() {
		p.Nodes.Enable()
	}
}

// optionalIntEntry is a number field that may be left empty for 0, the default its
// placeholder names (no batch cap, one instance, the model's input size, …); it shows
// value when that is set.
func (p *SelectionPanel) optionalIntEntry(value int, placeholder string, set func(*app.SessionSettings, int)) *widget.Entry {
	e := p.intEntry("", set)
	if value > 0 {
		e.SetText(strconv.Itoa(value))
	}
	e.SetPlaceHolder(placeholder)
	numeric, changed := e.Validator, e.OnChanged
	e.Validator = func(s string) error {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		return numeric(s)
	}
	e.OnChanged = func(s string) {
		if strings.TrimSpace(s) == "" {
			s = "0"
		}
		changed(s)
	}
	return e
}

type validationError string

func (e validationError) Error() string { return string(e) }

const errNotWholeNumber = validationError("enter a whole number")

// RefreshModels reloads the CNN list (after a custom model was added).
func (p *SelectionPanel) RefreshModels() {
	var groups []string
	items, labels := map[string][]string{}, map[string]string{}
	for _, m := range p.session.Models() {
		fam := m.Family
		if fam == "" {
			fam = "Other"
		}
		if _, ok := items[fam]; !ok {
			groups = append(groups, fam)
		}
		items[fam] = append(items[fam], m.Name)
		labels[m.Name] = m.Name
	}
	p.models.setItems(groups, items, labels)
	p.models.setChecked(p.session.Settings().Models)
	p.refreshChips()
}

// SetMachines replaces the machine list: the user's own first, then by provider,
// newest GPU first (app.SortMachines).
func (p *SelectionPanel) SetMachines(machines []hw.Machine) {
	p.list = append([]hw.Machine(nil), machines...)
	app.SortMachines(p.list, p.gpus)
	var groups []string
	items, labels := map[string][]string{}, map[string]string{}
	titles := map[string]string{}
	gpus := map[string]bool{}
	p.byID = map[string]hw.Machine{}
	for _, m := range p.list {
		p.byID[m.ID] = m
		prov := m.Provider
		if app.OwnMachine(m) {
			prov = "My machines"
		}
		if _, ok := items[prov]; !ok {
			groups = append(groups, prov)
			titles[prov] = providerTitle(prov)
		}
		items[prov] = append(items[prov], m.ID)
		labels[m.ID] = machineLabel(m)
		p.gpuOf[m.ID] = m.GPUID
		gpus[m.GPUID] = true
	}
	options := []string{allGPUs}
	var ids []string
	for g := range gpus {
		ids = append(ids, g)
	}
	sort.Strings(ids)
	p.gpu.Options = append(options, ids...)
	p.machines.titles = titles
	p.machines.setItems(groups, items, labels)
	p.machines.setChecked(p.session.Settings().Machines)
	p.setProviders()
	p.setRegions()
	p.refreshChips()
}

func providerTitle(p string) string {
	if t, ok := providerTitles[strings.ToLower(p)]; ok {
		return t
	}
	return p
}

// machineLabel is a machine's row: its instance and its GPUs.
func machineLabel(m hw.Machine) string {
	label := m.Instance
	if label == "" {
		label = m.ID
	}
	count := ""
	if m.GPUCount > 1 {
		count = strconv.Itoa(m.GPUCount) + "× "
	}
	return label + " — " + count + m.GPUID
}

// machineTooltip is what hovering a machine row shows: the full name and the facts
// that tell machines apart.
func (p *SelectionPanel) machineTooltip(id string) string {
	m, ok := p.byID[id]
	if !ok {
		return ""
	}
	g := p.gpus[m.GPUID]
	name := g.Name
	if name == "" {
		name = m.GPUID
	}
	lines := []string{m.ID, fmt.Sprintf("%d× %s", max(m.GPUCount, 1), name)}
	var facts []string
	if m.VCPUs > 0 {
		facts = append(facts, fmt.Sprintf("%d vCPUs", m.VCPUs))
	}
	if m.MemoryGiB > 0 {
		facts = append(facts, fmt.Sprintf("%.0f GiB RAM", m.MemoryGiB))
	}
	if g.MemoryGB > 0 {
		facts = append(facts, fmt.Sprintf("%.0f GB per GPU", g.MemoryGB))
	}
	if len(facts) > 0 {
		lines = append(lines, strings.Join(facts, ", "))
	}
	lines = append(lines, priceLines(m, p.session.Settings().Price)...)
	if app.PreviousGeneration(m, p.gpus) {
		lines = append(lines, "previous generation or an old price")
	}
	return strings.Join(lines, "\n")
}

// SetCheckedMachines marks the machines selected elsewhere (the spec table).
func (p *SelectionPanel) SetCheckedMachines(ids []string) {
	p.machines.setChecked(ids)
	p.refreshChips()
}

// ToggleModel checks or unchecks a CNN as a click would.
func (p *SelectionPanel) ToggleModel(name string, on bool) { p.models.set(name, on) }

// ToggleMachine checks or unchecks a machine as a click would.
func (p *SelectionPanel) ToggleMachine(id string, on bool) { p.machines.set(id, on) }

// QuickPick adds a quick pick's machines, among those listed, to the machine
// selection: what was selected stays (a selection never silently loses items; Clear
// empties it first, for the pick alone), and the status line says what was added.
// When the pick finds none, or none that is not selected already, it says so and
// changes nothing.
func (p *SelectionPanel) QuickPick(q app.QuickPick) {
	ids := app.Pick(q, p.list, p.gpus)
	if len(ids) == 0 && q == app.PickWorkstation {
		// A sweep may have measured this computer since the list was read: read it again.
		if ms, err := p.session.Machines(context.Background()); err == nil {
			p.SetMachines(ms)
			ids = app.Pick(q, p.list, p.gpus)
		}
	}
	if len(ids) == 0 {
		msg := "No machine to pick."
		if q == app.PickWorkstation {
			msg = "No workstation yet: a sweep in the Benchmark tab adds this computer once it has measured a kernel; `cnntime machine add` adds another machine."
		}
		p.info(msg)
		return
	}
	selected := p.session.Settings().Machines
	var added []string
	for _, id := range ids {
		if !slices.Contains(selected, id) {
			added = append(added, id)
		}
	}
	if len(added) == 0 {
		what := "its machine is"
		if len(ids) > 1 {
			what = fmt.Sprintf("all %d of its machines are", len(ids))
		}
		p.info(fmt.Sprintf("%s: %s already selected.", q.Title(), what))
		return
	}
	next := append(slices.Clone(selected), added...)
	p.report(p.session.Update(func(st *app.SessionSettings) { st.Machines = next }))
	p.machines.setChecked(next)
	p.refreshChips()
	msg := fmt.Sprintf("%s: added %s", q.Title(), charts.Count(len(added), "machine", "machines"))
	if len(selected) > 0 {
		msg += fmt.Sprintf(" to the %d selected (%d in all); Clear empties the selection for a pick alone", len(selected), len(next))
	}
	p.info(msg + ".")
}

// ClearMachines empties the machine selection, saying which machines it took out.
func (p *SelectionPanel) ClearMachines() {
	selected := p.session.Settings().Machines
	if len(selected) == 0 {
		p.info("No machine is selected.")
		return
	}
	p.report(p.session.Update(func(st *app.SessionSettings) { st.Machines = nil }))
	p.machines.setChecked(nil)
	p.refreshChips()
	p.info(fmt.Sprintf("Cleared %s: %s.", charts.Count(len(selected), "machine", "machines"), strings.Join(selected, ", ")))
}

// FocusModelSearch shows the CNN list and puts the cursor in its search field.
func (p *SelectionPanel) FocusModelSearch(c fyne.Canvas) {
	p.Tabs.SelectIndex(0)
	c.Focus(p.models.search)
}

// refreshChips shows the selected CNNs and machines as buttons that remove them.
func (p *SelectionPanel) refreshChips() {
	if p.chips == nil {
		return
	}
	st := p.session.Settings()
	var objs []fyne.CanvasObject
	chip := func(text string, remove func()) {
		if r := []rune(text); len(r) > maxChipRunes {
			text = string(r[:maxChipRunes-1]) + "…"
		}
		b := widget.NewButtonWithIcon(text, theme.CancelIcon(), remove)
		b.IconPlacement = widget.ButtonIconTrailingText
		b.Importance = widget.LowImportance
		objs = append(objs, b)
	}
	for _, name := range st.Models {
		chip(name, func() { p.models.set(name, false) })
	}
	for _, id := range st.Machines {
		text := id
		if m, ok := p.byID[id]; ok && m.Instance != "" {
			text = providerTitle(m.Provider) + " " + m.Instance
		}
		chip(text, func() { p.machines.set(id, false) })
	}
	if len(objs) == 0 {
		objs = append(objs, widget.NewLabel("Nothing selected: tick CNNs and machines below."))
	}
	p.chips.Objects = objs
	p.chips.Refresh()
	p.checkWorkers()
	if p.Tabs != nil {
		p.Tabs.Items[0].Text = tabTitle("CNNs", len(st.Models))
		p.Tabs.Items[1].Text = tabTitle("Machines", len(st.Machines))
		p.Tabs.Refresh()
	}
}

// checkWorkers shows a warning when the loader workers typed are more than a selected
// machine's vCPUs per GPU: they would share its cores (the prediction counts the cores).
func (p *SelectionPanel) checkWorkers() {
	if p.WorkersNote == nil || p.RunData.Workers == nil {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.RunData.Workers.Text))
	var over []string
	if err == nil && n > 0 {
		for _, id := range p.session.Settings().Machines {
			m, ok := p.byID[id]
			if !ok || m.VCPUs <= 0 {
				continue
			}
			if per := m.VCPUs / max(m.GPUCount, 1); n > per {
				over = append(over, fmt.Sprintf("%s (%d vCPUs, %d per GPU)", id, m.VCPUs, per))
			}
		}
	}
	if len(over) == 0 {
		p.WorkersNote.Hide()
		return
	}
	more := ""
	if len(over) > 2 {
		more = fmt.Sprintf(" and %d more", len(over)-2)
		over = over[:2]
	}
	p.WorkersNote.SetText(fmt.Sprintf("%d workers per GPU is more than %s%s has: the workers share those cores, and the prediction counts the cores, not the workers.",
		n, strings.Join(over, ", "), more))
	p.WorkersNote.Show()
}

// maxChipRunes is the longest chip text; longer names are cut with an ellipsis.
const maxChipRunes = 24

func tabTitle(name string, n int) string {
	if n == 0 {
		return name
	}
	return fmt.Sprintf("%s (%d)", name, n)
}

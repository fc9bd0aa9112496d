package views

import (
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// checkTree is a searchable tree of checkable items grouped under headings: the CNNs
// by family, the machines by provider.
type checkTree struct {
	tree     *widget.Tree
	search   *widget.Entry
	groups   []string            // headings in order
	items    map[string][]string // heading → item ids
	labels   map[string]string   // item id → text shown
	shown    map[string][]string // after the search filter
	checked  map[string]bool
	filter   func(id string) bool // an extra filter (the GPU filter); nil for none
	onToggle func(id string, on bool)
}

const groupPrefix = "\x00group:"

func newCheckTree(placeholder string, onToggle func(id string, on bool)) *checkTree {
	ct := &checkTree{items: map[string][]string{}, labels: map[string]string{}, shown: map[string][]string{}, checked: map[string]bool{}, onToggle: onToggle}
	ct.search = widget.NewEntry()
	ct.search.SetPlaceHolder(placeholder)
	ct.search.OnChanged = func(string) { ct.applyFilter() }
	ct.tree = widget.NewTree(ct.children, func(id widget.TreeNodeID) bool { return id == "" || strings.HasPrefix(id, groupPrefix) },
		func(branch bool) fyne.CanvasObject {
			if branch {
				return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			}
			return widget.NewCheck("", nil)
		},
		ct.update)
	return ct
}

func (ct *checkTree) children(id widget.TreeNodeID) []widget.TreeNodeID {
	if id == "" {
		var out []string
		for _, g := range ct.groups {
			if len(ct.shown[g]) > 0 {
				out = append(out, groupPrefix+g)
			}
		}
		return out
	}
	return ct.shown[strings.TrimPrefix(id, groupPrefix)]
}

func (ct *checkTree) update(id widget.TreeNodeID, branch bool, o fyne.CanvasObject) {
	if branch {
		g := strings.TrimPrefix(id, groupPrefix)
		n := 0
		for _, item := range ct.items[g] {
			if ct.checked[item] {
				n++
			}
		}
		text := g
		if n > 0 {
			text += " (" + strconv.Itoa(n) + ")"
		}
		o.(*widget.Label).SetText(text)
		return
	}
	check := o.(*widget.Check)
	check.OnChanged = nil
	// Tree rows are reused for other items: set text and state together and refresh
	// once, since SetChecked alone repaints only when the state changes.
	check.Text = ct.labels[id]
	check.Checked = ct.checked[id]
	check.Refresh()
	check.OnChanged = func(on bool) { ct.set(id, on) }
}

func (ct *checkTree) set(id string, on bool) {
	if ct.checked[id] == on {
		return
	}
	ct.checked[id] = on
	ct.tree.Refresh()
	if ct.onToggle != nil {
		ct.onToggle(id, on)
	}
}

// setItems replaces the tree's contents.
func (ct *checkTree) setItems(groups []string, items map[string][]string, labels map[string]string) {
	ct.groups, ct.items, ct.labels = groups, items, labels
	ct.applyFilter()
}

// setChecked marks the checked items without calling onToggle.
func (ct *checkTree) setChecked(ids []string) {
	ct.checked = map[string]bool{}
	for _, id := range ids {
		ct.checked[id] = true
	}
	ct.tree.Refresh()
}

func (ct *checkTree) applyFilter() {
	q := strings.ToLower(strings.TrimSpace(ct.search.Text))
	ct.shown = map[string][]string{}
	for _, g := range ct.groups {
		groupHit := q != "" && strings.Contains(strings.ToLower(g), q)
		for _, id := range ct.items[g] {
			if ct.filter != nil && !ct.filter(id) {
				continue
			}
			if q == "" || groupHit || strings.Contains(strings.ToLower(ct.labels[id]), q) || strings.Contains(strings.ToLower(id), q) {
				ct.shown[g] = append(ct.shown[g], id)
			}
		}
	}
	if q != "" {
		ct.tree.OpenAllBranches()
	}
	ct.tree.Refresh()
}

// SelectionPanel is the left panel: CNNs by family, machines by provider with a GPU
// filter, and the training run's settings. Every change goes to the session at once.
type SelectionPanel struct {
	session  *app.Session
	onError  func(error)
	models   *checkTree
	machines *checkTree
	gpu      *widget.Select
	gpuOf    map[string]string // machine id → GPU id

	Epochs    *widget.Entry
	Images    *widget.Entry
	Precision *widget.Select
	BatchMin  *widget.Entry
	BatchMax  *widget.Entry
	RunData   RunData // dataset, input size, loader, workers, memory format

	content fyne.CanvasObject
}

const allGPUs = "All GPUs"

// NewSelectionPanel builds the panel for a session; onError shows problems the user
// must know about (a machine list that cannot be read).
func NewSelectionPanel(s *app.Session, machines []hw.Machine, onError func(error)) *SelectionPanel {
	p := &SelectionPanel{session: s, onError: onError, gpuOf: map[string]string{}}
	p.models = newCheckTree("Search CNNs", func(id string, on bool) { p.report(s.SetModel(id, on)) })
	p.machines = newCheckTree("Search machines", func(id string, on bool) { p.report(s.SetMachine(id, on)) })
	p.gpu = widget.NewSelect([]string{allGPUs}, func(string) { p.machines.applyFilter() })
	p.gpu.SetSelected(allGPUs)
	p.machines.filter = func(id string) bool {
		return p.gpu.Selected == "" || p.gpu.Selected == allGPUs || p.gpuOf[id] == p.gpu.Selected
	}
	p.RefreshModels()
	p.SetMachines(machines)

	st := s.Settings()
	p.Epochs = p.intEntry(strconv.Itoa(st.Epochs), func(st *app.SessionSettings, n int) { st.Epochs = n })
	p.Images = p.intEntry(strconv.Itoa(st.Images), func(st *app.SessionSettings, n int) { st.Images = n })
	p.BatchMin = p.intEntry(strconv.Itoa(st.BatchMin), func(st *app.SessionSettings, n int) { st.BatchMin = n })
	p.BatchMax = p.intEntry(strconv.Itoa(st.BatchMax), func(st *app.SessionSettings, n int) { st.BatchMax = n })
	p.Precision = widget.NewSelect([]string{string(measure.FP32), string(measure.FP32Strict), string(measure.AMP)}, nil)
	p.Precision.SetSelected(string(st.Precision))
	p.Precision.OnChanged = func(v string) {
		p.report(s.Update(func(st *app.SessionSettings) { st.Precision = measure.Precision(v) }))
	}

	form := widget.NewForm(
		widget.NewFormItem("Epochs", p.Epochs),
		widget.NewFormItem("Images", p.Images),
		widget.NewFormItem("Precision", p.Precision),
		widget.NewFormItem("Batch from", p.BatchMin),
		widget.NewFormItem("Batch to", p.BatchMax),
	)
	for _, it := range p.runDataItems() {
		form.AppendItem(it)
	}
	modelBox := container.NewBorder(p.models.search, nil, nil, nil, p.models.tree)
	machineBox := container.NewBorder(container.NewVBox(p.machines.search, p.gpu), nil, nil, nil, p.machines.tree)
	lists := container.NewVSplit(
		container.NewBorder(widget.NewLabelWithStyle("CNNs", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, modelBox),
		container.NewBorder(widget.NewLabelWithStyle("Machines", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, machineBox),
	)
	p.content = container.NewBorder(nil, form, nil, nil, lists)
	return p
}

// Content is the panel's widget tree.
func (p *SelectionPanel) Content() fyne.CanvasObject { return p.content }

func (p *SelectionPanel) report(err error) {
	if err != nil && p.onError != nil {
		p.onError(err)
	}
}

// intEntry is a number field whose valid values apply at once; an invalid one is
// marked and changes nothing.
func (p *SelectionPanel) intEntry(text string, set func(*app.SessionSettings, int)) *widget.Entry {
	e := widget.NewEntry()
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
}

// SetMachines replaces the machine list.
func (p *SelectionPanel) SetMachines(machines []hw.Machine) {
	var groups []string
	items, labels := map[string][]string{}, map[string]string{}
	gpus := map[string]bool{}
	for _, m := range machines {
		prov := m.Provider
		if m.User {
			prov = "My machines"
		}
		if _, ok := items[prov]; !ok {
			groups = append(groups, prov)
		}
		items[prov] = append(items[prov], m.ID)
		label := m.Instance
		if label == "" {
			label = m.ID
		}
		count := ""
		if m.GPUCount > 1 {
			count = strconv.Itoa(m.GPUCount) + "× "
		}
		labels[m.ID] = label + " — " + count + m.GPUID
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
	p.machines.setItems(groups, items, labels)
	p.machines.setChecked(p.session.Settings().Machines)
}

// SetCheckedMachines marks the machines selected elsewhere (the spec table).
func (p *SelectionPanel) SetCheckedMachines(ids []string) { p.machines.setChecked(ids) }

// ToggleModel checks or unchecks a CNN as a click would.
func (p *SelectionPanel) ToggleModel(name string, on bool) { p.models.set(name, on) }

// ToggleMachine checks or unchecks a machine as a click would.
func (p *SelectionPanel) ToggleMachine(id string, on bool) { p.machines.set(id, on) }

package views

import (
	"image/color"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/hw"
)

// Filter choices meaning "no filter".
const (
	specAllProviders = "All providers"
	specAllGPUs      = "All GPUs"
)

// specRow is one machine and its GPU's specifications.
type specRow struct {
	m hw.Machine
	g hw.GPU
}

// specColumn is one column of the spec table: its title, width, cell text and, for
// numeric columns, the value it sorts by (0 is unknown and sorts last).
type specColumn struct {
	title string
	width float32
	text  func(r specRow) string
	value func(r specRow) float64 // nil: sort by text
}

var specColumns = []specColumn{
	{title: "✓", width: 28, text: nil}, // selection mark; filled by the table
	{title: "Machine", width: 250, text: func(r specRow) string { return r.m.ID }},
	{title: "GPU", width: 130, text: specGPU},
	{title: "GPUs", width: 60, text: specGPUCount, value: func(r specRow) float64 { return float64(r.m.GPUCount) }},
	{title: "GPU mem GB", width: 100, text: func(r specRow) string { return specFigure(r.g.MemoryGB) }, value: func(r specRow) float64 { return r.g.MemoryGB }},
	{title: "FP32 TFLOPS", width: 110, text: func(r specRow) string { return specFigure(r.g.FP32TFLOPS) }, value: func(r specRow) float64 { return r.g.FP32TFLOPS }},
	{title: "TF32 TFLOPS", width: 110, text: func(r specRow) string { return specFigure(r.g.TF32TFLOPS) }, value: func(r specRow) float64 { return r.g.TF32TFLOPS }},
	{title: "FP16 TFLOPS", width: 110, text: func(r specRow) string { return specFigure(r.g.FP16TFLOPS) }, value: func(r specRow) float64 { return r.g.FP16TFLOPS }},
	{title: "Bandwidth GB/s", width: 130, text: func(r specRow) string { return specFigure(r.g.MemoryBandwidthGBs) }, value: func(r specRow) float64 { return r.g.MemoryBandwidthGBs }},
	{title: "vCPUs", width: 70, text: func(r specRow) string { return specCount(r.m.VCPUs) }, value: func(r specRow) float64 { return float64(r.m.VCPUs) }},
	{title: "RAM GiB", width: 90, text: func(r specRow) string { return specFigure(r.m.MemoryGiB) }, value: func(r specRow) float64 { return r.m.MemoryGiB }},
	{title: "Price/h", width: 150, text: specPriceText, value: func(r specRow) float64 { return r.m.PriceUSDPerHour }},
	{title: "Provider", width: 80, text: func(r specRow) string { return r.m.Provider }},
	{title: "Region", width: 110, text: func(r specRow) string { return specDash(r.m.Region) }},
	{title: "Price date", width: 150, text: specPriceDate},
	{title: "Spot/h", width: 90, text: specSpot, value: func(r specRow) float64 { return r.m.SpotPriceUSDPerHour }},
	{title: "Price source", width: 260, text: func(r specRow) string { return specDash(r.m.PriceSource) }},
}

// The column indices other code may name.
const (
	SpecColumnSelected = iota
	SpecColumnMachine
	SpecColumnGPU
	SpecColumnCount
	SpecColumnMemory
	SpecColumnFP32
	SpecColumnTF32
	SpecColumnFP16
	SpecColumnBandwidth
	SpecColumnVCPUs
	SpecColumnRAM
	SpecColumnPrice
	SpecColumnProvider
	SpecColumnRegion
	SpecColumnPriceDate
	SpecColumnSpot
	SpecColumnPriceSource
)

// specPriceDate is the price's date and age, flagged OLD beyond hw.StalePriceDays.
func specPriceDate(r specRow) string {
	m := r.m
	if m.PriceDate == "" {
		return "—"
	}
	if m.PriceAgeDays == nil {
		return m.PriceDate
	}
	s := m.PriceDate + " (" + strconv.Itoa(*m.PriceAgeDays) + "d)"
	if m.PriceStale {
		s += " OLD"
	}
	return s
}

// specSpot is the spot price in the machine's region, "—" when it has none.
func specSpot(r specRow) string {
	if r.m.SpotPriceUSDPerHour <= 0 {
		return "—"
	}
	return "$" + dollars(r.m.SpotPriceUSDPerHour)
}

func specFigure(x float64) string {
	if x == 0 {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// specGPU is a machine's GPU, "CPU" for a measured CPU.
func specGPU(r specRow) string {
	if app.IsCPU(r.m.GPUID) {
		return "CPU"
	}
	return r.m.GPUID
}

// specGPUCount is how many GPUs a machine has: "—" for a measured CPU, not one GPU.
func specGPUCount(r specRow) string {
	if app.IsCPU(r.m.GPUID) {
		return "—"
	}
	return strconv.Itoa(r.m.GPUCount)
}

func specCount(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}

func specDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// specPriceText shows the price per hour and what kind of price it is.
func specPriceText(r specRow) string {
	m := r.m
	if m.Listing == hw.ListingUnpriced && !m.PriceOverridden {
		return "— (no price)"
	}
	s := "$" + dollars(m.PriceUSDPerHour)
	switch {
	case m.PriceOverridden:
		s += " (yours)"
	case m.Listing == hw.ListingHistorical:
		s += " (old)"
	case m.Listing == hw.ListingComponent:
		s += " (GPU only)"
	}
	return s
}

// dollars writes a price with two to four decimals: 3.06, 0.526, 2.00.
func dollars(usd float64) string {
	s := strings.TrimRight(strconv.FormatFloat(usd, 'f', 4, 64), "0")
	if i := strings.IndexByte(s, '.'); len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// addOn reports whether a row is a GPU add-on, priced without its VM.
func addOn(r specRow) bool { return r.m.Listing == hw.ListingComponent }

// SpecTable is the machine specification table: one row per machine with its GPU's
// figures, its size and price, sortable by any column (click a header; again to
// reverse), filterable by provider and GPU, and with a multiple selection of machines
// that mirrors the selection panel's (tap a row to add or remove it).
type SpecTable struct {
	widget.BaseWidget

	// OnSelectionChanged is called with the selected machine ids, in the order of
	// SetMachines, when the user taps a row. SetSelected does not call it.
	OnSelectionChanged func(ids []string)

	// Search narrows the rows to machines whose id, GPU or provider holds its text.
	Search   *widget.Entry
	table    *widget.Table
	content  fyne.CanvasObject
	columns  *stretchColumns
	provider *widget.Select
	gpu      *widget.Select

	all        []specRow
	rows       []specRow // what the table shows: filtered and sorted
	selected   map[string]bool
	sortColumn int // -1: catalog order
	descending bool
	filterProv string
	filterGPU  string
	// showOlder lists previous-generation GPUs and historical prices, as the
	// selection panel's Older GPUs check does; gpus are the GPUs that decides it by.
	showOlder bool
	gpus      map[string]hw.GPU
}

// NewSpecTable returns an empty spec table; give it machines with SetMachines.
func NewSpecTable() *SpecTable {
	t := &SpecTable{selected: map[string]bool{}, sortColumn: -1}
	t.table = widget.NewTable(t.size, t.createCell, t.updateCell)
	t.table.ShowHeaderRow = true
	t.table.CreateHeader = newSortHeader
	t.table.UpdateHeader = t.updateHeader
	t.table.OnSelected = func(id widget.TableCellID) {
		t.table.UnselectAll()
		if id.Row >= 0 && id.Row < len(t.rows) {
			t.toggle(t.rows[id.Row].m.ID)
		}
	}
	// The selection mark and the machine's name stay while the figures scroll.
	t.table.StickyColumnCount = 2
	widths := make([]float32, len(specColumns))
	for i, c := range specColumns {
		widths[i] = c.width
	}
	t.content, t.columns = newStretchTable(t.table, widths)
	t.provider = widget.NewSelect([]string{specAllProviders}, func(s string) { t.applyFilter(s, t.filterGPU) })
	t.gpu = widget.NewSelect([]string{specAllGPUs}, func(s string) { t.applyFilter(t.filterProv, s) })
	t.Search = widget.NewEntry()
	t.Search.SetPlaceHolder("machine or GPU")
	t.Search.OnChanged = func(string) { t.rebuild() }
	t.ExtendBaseWidget(t)
	t.applyFilter("", "")
	return t
}

// CreateRenderer lays out the filters above the table.
func (t *SpecTable) CreateRenderer() fyne.WidgetRenderer {
	note := widget.NewLabelWithStyle("GPU add-ons (priced without their VM) come after whole machines.", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	note.Truncation = fyne.TextTruncateEllipsis
	searchWidth := canvas.NewRectangle(color.Transparent)
	searchWidth.SetMinSize(fyne.NewSize(170, 0)) // room for "machine or GPU"
	filters := container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("Filter:"), container.NewStack(searchWidth, t.Search), t.provider, t.gpu), nil, note)
	return widget.NewSimpleRenderer(container.NewBorder(filters, nil, nil, nil, t.content))
}

// SetMachines replaces the machines shown; gpus gives their specifications (a machine
// whose GPU is not among them shows its figures as unknown). The selection keeps the
// ids that are still there; the sort and a filter that still applies are kept.
func (t *SpecTable) SetMachines(machines []hw.Machine, gpus []hw.GPU) {
	byID := make(map[string]hw.GPU, len(gpus))
	for _, g := range gpus {
		byID[g.ID] = g
	}
	t.gpus = byID
	t.all = make([]specRow, len(machines))
	present := map[string]bool{}
	providers := map[string]bool{}
	gpuIDs := map[string]bool{}
	for i, m := range machines {
		t.all[i] = specRow{m: m, g: byID[m.GPUID]}
		present[m.ID] = true
		providers[m.Provider] = true
		gpuIDs[m.GPUID] = true
	}
	for id := range t.selected {
		if !present[id] {
			delete(t.selected, id)
		}
	}
	t.provider.Options = append([]string{specAllProviders}, sortedKeys(providers)...)
	t.gpu.Options = append([]string{specAllGPUs}, sortedKeys(gpuIDs)...)
	prov, gpu := t.filterProv, t.filterGPU
	if !providers[prov] {
		prov = ""
	}
	if !gpuIDs[gpu] {
		gpu = ""
	}
	t.applyFilter(prov, gpu)
	t.columns.setBase(fitWidths(t.columns.least, specTitles(), len(t.all), func(row, col int) string { return t.cellText(t.all[row], col) }, specWidthMax))
}

// specWidthMax is the widest a spec column grows to fit its cells (a price source
// longer than that ends in "…").
const specWidthMax = 520

func specTitles() []string {
	out := make([]string, len(specColumns))
	for i, c := range specColumns {
		out[i] = c.title
	}
	return out
}

// SetShowOlder lists (on) or hides previous-generation GPUs and historical prices,
// as the selection panel's Older GPUs check; a selected machine stays listed.
func (t *SpecTable) SetShowOlder(on bool) {
	if on != t.showOlder {
		t.showOlder = on
		t.rebuild()
	}
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SetFilter shows only the machines of provider and with GPU id gpuID; "" for either
// means all. The filter choosers show the same.
func (t *SpecTable) SetFilter(provider, gpuID string) { t.applyFilter(provider, gpuID) }

func (t *SpecTable) applyFilter(provider, gpuID string) {
	if provider == specAllProviders {
		provider = ""
	}
	if gpuID == specAllGPUs {
		gpuID = ""
	}
	t.filterProv, t.filterGPU = provider, gpuID
	t.provider.Selected = orAll(provider, specAllProviders)
	t.gpu.Selected = orAll(gpuID, specAllGPUs)
	t.provider.Refresh()
	t.gpu.Refresh()
	t.rebuild()
}

func orAll(choice, all string) string {
	if choice == "" {
		return all
	}
	return choice
}

// SortBy sorts by a column, as a click on its header does: ascending first, the
// reverse when it is already sorted by that column. Unknown figures sort last.
func (t *SpecTable) SortBy(column int) {
	if column < 0 || column >= len(specColumns) {
		return
	}
	if column == t.sortColumn {
		t.descending = !t.descending
	} else {
		t.sortColumn, t.descending = column, false
	}
	t.rebuild()
}

// SetSelected sets which machines are selected, without calling OnSelectionChanged.
func (t *SpecTable) SetSelected(ids []string) {
	t.selected = make(map[string]bool, len(ids))
	for _, id := range ids {
		t.selected[id] = true
	}
	t.rebuild() // a selected older machine stays listed
}

// Selected returns the selected machine ids in the order of SetMachines.
func (t *SpecTable) Selected() []string {
	var out []string
	for _, r := range t.all {
		if t.selected[r.m.ID] {
			out = append(out, r.m.ID)
		}
	}
	return out
}

// Rows returns the ids of the machines shown, top to bottom.
func (t *SpecTable) Rows() []string {
	out := make([]string, len(t.rows))
	for i, r := range t.rows {
		out[i] = r.m.ID
	}
	return out
}

// Cell returns the text shown at a row (0 is the first machine) and column.
func (t *SpecTable) Cell(row, column int) string {
	if row < 0 || row >= len(t.rows) || column < 0 || column >= len(specColumns) {
		return ""
	}
	return t.cellText(t.rows[row], column)
}

func (t *SpecTable) toggle(id string) {
	if t.selected[id] {
		delete(t.selected, id)
	} else {
		t.selected[id] = true
	}
	t.table.Refresh()
	if t.OnSelectionChanged != nil {
		t.OnSelectionChanged(t.Selected())
	}
}

// rebuild filters and sorts the rows and redraws.
func (t *SpecTable) rebuild() {
	t.rows = t.rows[:0]
	q := ""
	if t.Search != nil {
		q = strings.ToLower(strings.TrimSpace(t.Search.Text))
	}
	for _, r := range t.all {
		if !t.showOlder && !t.selected[r.m.ID] && app.PreviousGeneration(r.m, t.gpus) {
			continue
		}
		if (t.filterProv == "" || r.m.Provider == t.filterProv) && (t.filterGPU == "" || r.m.GPUID == t.filterGPU) &&
			(q == "" || strings.Contains(strings.ToLower(r.m.ID), q) || strings.Contains(strings.ToLower(r.m.GPUID), q) || strings.Contains(strings.ToLower(r.m.Provider), q)) {
			t.rows = append(t.rows, r)
		}
	}
	if t.sortColumn >= 0 {
		col := specColumns[t.sortColumn]
		sort.SliceStable(t.rows, func(i, j int) bool { return t.less(col, t.rows[i], t.rows[j]) })
	}
	// A GPU add-on's price leaves out the VM it attaches to: it is not a machine to
	// rank with whole ones, whatever the column, so the add-ons come after them.
	sort.SliceStable(t.rows, func(i, j int) bool { return !addOn(t.rows[i]) && addOn(t.rows[j]) })
	t.table.Refresh()
}

// less orders two rows by a column in the current direction; unknown numbers go last
// either way, and ties keep their previous order.
func (t *SpecTable) less(col specColumn, a, b specRow) bool {
	if col.value != nil {
		va, vb := col.value(a), col.value(b)
		if (va == 0) != (vb == 0) {
			return vb == 0
		}
		if t.descending {
			return va > vb
		}
		return va < vb
	}
	ta, tb := strings.ToLower(t.cellText(a, t.sortColumn)), strings.ToLower(t.cellText(b, t.sortColumn))
	if t.descending {
		return ta > tb
	}
	return ta < tb
}

func (t *SpecTable) cellText(r specRow, column int) string {
	if column == SpecColumnSelected {
		if t.selected[r.m.ID] {
			return "✓"
		}
		return ""
	}
	return specColumns[column].text(r)
}

func (t *SpecTable) size() (int, int) { return len(t.rows), len(specColumns) }

func (t *SpecTable) createCell() fyne.CanvasObject {
	l := widget.NewLabel("")
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

func (t *SpecTable) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	l.TextStyle.Bold = id.Row >= 0 && id.Row < len(t.rows) && t.selected[t.rows[id.Row].m.ID]
	l.SetText(t.Cell(id.Row, id.Col))
}

func (t *SpecTable) updateHeader(id widget.TableCellID, o fyne.CanvasObject) {
	b := o.(*widget.Button)
	if id.Col < 0 || id.Col >= len(specColumns) {
		b.SetText("")
		b.OnTapped = nil
		return
	}
	col := id.Col
	showSortHeader(o, specColumns[col].title, col == t.sortColumn, t.descending, func() { t.SortBy(col) })
}

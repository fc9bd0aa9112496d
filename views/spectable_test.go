package views

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/hw"
)

var specGPUs = []hw.GPU{
	{ID: "v100-sxm2-16gb", MemoryGB: 16, FP32TFLOPS: 15.7, FP16TFLOPS: 125, MemoryBandwidthGBs: 900},
	{ID: "t4", MemoryGB: 16, FP32TFLOPS: 8.1, FP16TFLOPS: 65, MemoryBandwidthGBs: 320},
	{ID: "a100-pcie-80gb", MemoryGB: 80, FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312}, // bandwidth unknown
}

var specMachines = []hw.Machine{
	{ID: "aws/p3.2xlarge", Provider: "aws", GPUID: "v100-sxm2-16gb", GPUCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSDPerHour: 3.06, PriceDate: "2026-01-21", Listing: hw.ListingCurrent},
	{ID: "aws/g4dn.xlarge", Provider: "aws", GPUID: "t4", GPUCount: 1, VCPUs: 4, MemoryGiB: 16, PriceUSDPerHour: 0.526, PriceDate: "2026-01-21", Listing: hw.ListingCurrent},
	{ID: "azure/Standard_NC24ads_A100_v4", Provider: "azure", GPUID: "a100-pcie-80gb", GPUCount: 1, VCPUs: 24, MemoryGiB: 220, PriceUSDPerHour: 3.673, Listing: hw.ListingCurrent},
	{ID: "gcp/n1-standard-4-1x-nvidia-tesla-k80", Provider: "gcp", GPUID: "t4", GPUCount: 1, Listing: hw.ListingUnpriced},
	{ID: "lambda/gpu_8x_v100", Provider: "lambda", GPUID: "v100-sxm2-16gb", GPUCount: 8, VCPUs: 92, MemoryGiB: 448, PriceUSDPerHour: 2, PriceOverridden: true, CatalogPrice: 6.32, Listing: hw.ListingCurrent},
}

func newFilledSpecTable(t *testing.T) *SpecTable {
	t.Helper()
	newTestApp(t)
	st := NewSpecTable()
	st.SetMachines(specMachines, specGPUs)
	return st
}

func TestSpecTableSortsByColumnAndReverses(t *testing.T) {
	const (
		p3    = "aws/p3.2xlarge"
		g4    = "aws/g4dn.xlarge"
		a100  = "azure/Standard_NC24ads_A100_v4"
		k80   = "gcp/n1-standard-4-1x-nvidia-tesla-k80"
		v100s = "lambda/gpu_8x_v100"
	)
	// Ties keep the order machines were given in; unknown figures are last either way.
	tests := []struct {
		column          int
		ascending, desc []string
	}{
		{SpecColumnPrice, []string{g4, v100s, p3, a100, k80}, []string{a100, p3, v100s, g4, k80}},
		{SpecColumnBandwidth, []string{g4, k80, p3, v100s, a100}, []string{p3, v100s, g4, k80, a100}},
		{SpecColumnCount, []string{p3, g4, a100, k80, v100s}, []string{v100s, p3, g4, a100, k80}},
		{SpecColumnMachine, []string{g4, p3, a100, k80, v100s}, []string{v100s, k80, a100, p3, g4}},
		{SpecColumnProvider, []string{p3, g4, a100, k80, v100s}, []string{v100s, k80, a100, p3, g4}},
	}
	for _, tt := range tests {
		st := newFilledSpecTable(t)
		st.SortBy(tt.column)
		if got := st.Rows(); !slices.Equal(got, tt.ascending) {
			t.Errorf("%s ascending: %v, want %v", specColumns[tt.column].title, got, tt.ascending)
		}
		st.SortBy(tt.column)
		if got := st.Rows(); !slices.Equal(got, tt.desc) {
			t.Errorf("%s descending: %v, want %v", specColumns[tt.column].title, got, tt.desc)
		}
	}
}

func TestSpecTableHeaderClickSorts(t *testing.T) {
	st := newFilledSpecTable(t)
	w := test.NewWindow(st)
	defer w.Close()
	w.Resize(fyne.NewSize(2200, 500))

	// The middle of the Price/h header: the table's position plus the widths and
	// dividers of the columns before it.
	tablePos := fyne.CurrentApp().Driver().AbsolutePositionForObject(st.table)
	x := tablePos.X + st.columns.columnLeft(SpecColumnPrice)
	at := fyne.NewPos(x+st.columns.widths[SpecColumnPrice]/2, tablePos.Y+10)

	test.TapCanvas(w.Canvas(), at)
	if got := st.Rows()[0]; got != "aws/g4dn.xlarge" {
		t.Fatalf("after one click on Price/h the first row is %s, want the cheapest, aws/g4dn.xlarge (rows %v)", got, st.Rows())
	}
	test.TapCanvas(w.Canvas(), at)
	if got := st.Rows()[0]; got != "azure/Standard_NC24ads_A100_v4" {
		t.Errorf("after a second click the first row is %s, want the dearest, azure/Standard_NC24ads_A100_v4", got)
	}
}

func TestSpecTableFilters(t *testing.T) {
	st := newFilledSpecTable(t)
	tests := []struct {
		provider, gpu string
		want          []string
	}{
		{"aws", "", []string{"aws/p3.2xlarge", "aws/g4dn.xlarge"}},
		{"", "v100-sxm2-16gb", []string{"aws/p3.2xlarge", "lambda/gpu_8x_v100"}},
		{"aws", "t4", []string{"aws/g4dn.xlarge"}},
		{"azure", "t4", []string{}},
		{"", "", []string{"aws/p3.2xlarge", "aws/g4dn.xlarge", "azure/Standard_NC24ads_A100_v4", "gcp/n1-standard-4-1x-nvidia-tesla-k80", "lambda/gpu_8x_v100"}},
	}
	for _, tt := range tests {
		st.SetFilter(tt.provider, tt.gpu)
		if got := st.Rows(); !slices.Equal(got, tt.want) {
			t.Errorf("filter %q %q: %v, want %v", tt.provider, tt.gpu, got, tt.want)
		}
	}
	// The choosers above the table filter too, and show the filter.
	st.provider.SetSelected("lambda")
	if got := st.Rows(); !slices.Equal(got, []string{"lambda/gpu_8x_v100"}) {
		t.Errorf("choosing lambda shows %v", got)
	}
	st.SetFilter("aws", "")
	if st.provider.Selected != "aws" || st.gpu.Selected != specAllGPUs {
		t.Errorf("choosers show %q and %q after SetFilter(aws, \"\")", st.provider.Selected, st.gpu.Selected)
	}
	if want := []string{specAllProviders, "aws", "azure", "gcp", "lambda"}; !slices.Equal(st.provider.Options, want) {
		t.Errorf("provider choices %v, want %v", st.provider.Options, want)
	}
}

func TestSpecTableCells(t *testing.T) {
	st := newFilledSpecTable(t)
	st.SetFilter("", "")
	tests := []struct {
		row, column int
		want        string
	}{
		{0, SpecColumnMachine, "aws/p3.2xlarge"},
		{0, SpecColumnBandwidth, "900"},
		{0, SpecColumnPrice, "$3.06"},
		{0, SpecColumnPriceDate, "2026-01-21"},
		{2, SpecColumnBandwidth, "—"},
		{2, SpecColumnTF32, "156"},
		{2, SpecColumnPriceDate, "—"},
		{3, SpecColumnPrice, "— (no price)"},
		{4, SpecColumnPrice, "$2.00 (yours)"},
		{4, SpecColumnCount, "8"},
		{4, SpecColumnRAM, "448"},
		{1, SpecColumnPrice, "$0.526"},
		{2, SpecColumnPrice, "$3.673"},
	}
	for _, tt := range tests {
		if got := st.Cell(tt.row, tt.column); got != tt.want {
			t.Errorf("cell (%d, %s) = %q, want %q", tt.row, specColumns[tt.column].title, got, tt.want)
		}
	}
}

func TestSpecTableSelectionMirrorsTheCaller(t *testing.T) {
	st := newFilledSpecTable(t)
	var reported [][]string
	st.OnSelectionChanged = func(ids []string) { reported = append(reported, ids) }

	st.SetSelected([]string{"lambda/gpu_8x_v100", "aws/p3.2xlarge"})
	if len(reported) != 0 {
		t.Errorf("SetSelected called OnSelectionChanged: %v", reported)
	}
	if got := st.Selected(); !slices.Equal(got, []string{"aws/p3.2xlarge", "lambda/gpu_8x_v100"}) {
		t.Errorf("Selected() = %v", got)
	}
	if st.Cell(0, SpecColumnSelected) != "✓" || st.Cell(1, SpecColumnSelected) != "" {
		t.Errorf("selection marks %q %q", st.Cell(0, SpecColumnSelected), st.Cell(1, SpecColumnSelected))
	}

	st.table.Select(widget.TableCellID{Row: 1, Col: SpecColumnPrice}) // a tap on g4dn.xlarge's row
	st.table.Select(widget.TableCellID{Row: 0, Col: SpecColumnGPU})   // a tap on p3.2xlarge's row
	want := [][]string{
		{"aws/p3.2xlarge", "aws/g4dn.xlarge", "lambda/gpu_8x_v100"},
		{"aws/g4dn.xlarge", "lambda/gpu_8x_v100"},
	}
	if len(reported) != len(want) || !slices.Equal(reported[0], want[0]) || !slices.Equal(reported[1], want[1]) {
		t.Errorf("taps reported %v, want %v", reported, want)
	}

	// A new machine list keeps the selected ids that remain.
	st.SetMachines(specMachines[1:3], specGPUs)
	if got := st.Selected(); !slices.Equal(got, []string{"aws/g4dn.xlarge"}) {
		t.Errorf("after SetMachines the selection is %v", got)
	}
}

func TestSpecTableWithTheCatalog(t *testing.T) {
	newTestApp(t)
	c, err := app.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	st := NewSpecTable()
	st.SetMachines(c.Machines(), c.GPUs())
	// Older GPUs and historical prices are listed only when asked for, as in the
	// selection panel (a selected one stays); the CPU is a CPU, not one GPU.
	gpus := map[string]hw.GPU{}
	for _, g := range c.GPUs() {
		gpus[g.ID] = g
	}
	current := 0
	for _, m := range c.Machines() {
		if !app.PreviousGeneration(m, gpus) {
			current++
		}
	}
	if n := len(st.Rows()); n != current || current == len(c.Machines()) {
		t.Fatalf("%d rows of %d machines, want the %d current ones", n, len(c.Machines()), current)
	}
	st.SetSelected([]string{"aws/p2.xlarge"})
	if n := len(st.Rows()); n != current+1 {
		t.Errorf("a selected K80 machine: %d rows, want %d", n, current+1)
	}
	st.SetSelected(nil)
	st.SetShowOlder(true)
	if n := len(st.Rows()); n != len(c.Machines()) {
		t.Fatalf("Older GPUs: %d rows, want all %d", n, len(c.Machines()))
	}
	cpu := hw.Machine{ID: hw.LocalCPUID, Provider: hw.LocalProvider, GPUID: hw.CPUGPUID, GPUCount: 1}
	st.SetMachines([]hw.Machine{cpu}, []hw.GPU{{ID: hw.CPUGPUID, Architecture: hw.CPUArchitecture}})
	if g, n := st.Cell(0, SpecColumnGPU), st.Cell(0, SpecColumnCount); g != "CPU" || n != "—" {
		t.Errorf("local/cpu: GPU %q, GPUs %q; want CPU and —", g, n)
	}
	st.SetMachines(c.Machines(), c.GPUs())
	st.SetFilter("lambda", "")
	for _, id := range st.Rows() {
		m, _ := c.Machine(id)
		if m.Provider != "lambda" {
			t.Errorf("lambda filter shows %s", id)
		}
	}
	st.SetFilter("", "h100-sxm")
	st.SortBy(SpecColumnPrice)
	rows := st.Rows()
	if len(rows) < 5 || rows[0] != "lambda/gpu_1x_h100_sxm5" {
		t.Errorf("H100 SXM machines by price: %v, want lambda/gpu_1x_h100_sxm5 ($4.29) first", rows)
	}
}

// GPU add-ons (priced without their VM) never rank among whole machines: after them
// whatever the column and direction. The machine's name stays on screen while the
// figures scroll, and every row says where its price comes from.
func TestSpecTableAddOnsApartNameFrozenPriceSource(t *testing.T) {
	newTestApp(t)
	st := NewSpecTable()
	addon := hw.Machine{ID: "gcp/nvidia-tesla-t4-gpu-addon", Provider: "gcp", GPUID: "t4", GPUCount: 1, PriceUSDPerHour: 0.35, PriceSource: "GCP GPU pricing page, GPU only", Listing: hw.ListingComponent}
	ms := append(append([]hw.Machine(nil), specMachines...), addon)
	for i := range ms {
		if ms[i].PriceSource == "" {
			ms[i].PriceSource = "SkyPilot catalog 2026-01-21"
		}
	}
	st.SetMachines(ms, specGPUs)
	for _, col := range []int{SpecColumnPrice, SpecColumnMachine, SpecColumnCount} {
		for _, desc := range []bool{false, true} {
			st.SortBy(col)
			if desc != st.descending {
				st.SortBy(col)
			}
			rows := st.Rows()
			if rows[len(rows)-1] != addon.ID {
				t.Errorf("sorted by %s (descending %v): %v, want the add-on last", specColumns[col].title, desc, rows)
			}
		}
	}
	if got := st.Cell(len(st.Rows())-1, SpecColumnPriceSource); got != addon.PriceSource {
		t.Errorf("the add-on's price source cell says %q", got)
	}
	if st.table.StickyColumnCount < SpecColumnMachine+1 {
		t.Errorf("%d sticky columns: the machine's name scrolls away", st.table.StickyColumnCount)
	}
}

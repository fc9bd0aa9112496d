package views

import (
	"strconv"
	"strings"

	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/dataset"
	"cnntime/predictor/pipeline"
)

// RunData is the run-data part of the settings form: the dataset, the input size
// (0: the model's own), the input pipeline, its workers per GPU (0: the machine's
// vCPUs per GPU less one), the memory format, the training script and the framework
// that runs the step. Picking a dataset also sets the
// images per epoch to the dataset's.
type RunData struct {
	Dataset *widget.Select
	Input   *widget.Entry
	Loader  *widget.Select
	Workers *widget.Entry
	Format  *widget.Select
	Script  *widget.Select
	// Framework is the software stack that runs the step (predictor.Frameworks:
	// pytorch2, pytorch1, graph, compiled, optimized): which kernels run and fuse, how
	// the host issues them and the optimizer's per-step cost, as --framework does on the
	// command line.
	Framework *widget.Select
	// Software is the release of the kernel libraries that runs the step
	// (predictor.ParseSoftware: current, pytorch-X.Y, ngc-YY.MM or YYYY-MM), as
	// --software does on the command line.
	Software *widget.SelectEntry
}

// runDataItems builds the run-data fields of p's form.
func (p *SelectionPanel) runDataItems() []*widget.FormItem {
	s := p.session
	d := s.Settings().Data
	r := &p.RunData
	r.Dataset = widget.NewSelect(dataset.Names(), nil)
	r.Dataset.SetSelected(d.Dataset)
	r.Dataset.OnChanged = func(name string) {
		err := s.Update(func(st *app.SessionSettings) {
			st.Data.Dataset = name
			if n := st.Data.Images(); n > 0 {
				st.Images = n
			}
		})
		p.report(err)
		if err == nil && p.Images != nil {
			p.Images.SetText(strconv.Itoa(s.Settings().Images))
		}
		if err != nil && r.Dataset.Selected != s.Settings().Data.Dataset {
			r.Dataset.SetSelected(s.Settings().Data.Dataset) // refused (to a target with no preset): show what applies
		}
		if p.Train.Basis != nil {
			p.showTrain(s.Settings())
		}
	}
	// The Run tab has the height for one setting a row.
	r.Input = p.optionalIntEntry(d.Input, "the model's own", func(st *app.SessionSettings, n int) { st.Data.Input = n })
	r.Loader = widget.NewSelect(choiceNames(pipeline.Loaders), nil)
	r.Loader.SetSelected(d.Loader)
	r.Loader.OnChanged = func(v string) { p.report(s.Update(func(st *app.SessionSettings) { st.Data.Loader = v })) }
	r.Workers = p.optionalIntEntry(d.Workers, "vCPUs per GPU − 1", func(st *app.SessionSettings, n int) { st.Data.Workers = n })
	r.Format = widget.NewSelect([]string{"nchw", "nhwc"}, nil)
	r.Format.SetSelected(d.MemoryFormat)
	r.Format.OnChanged = func(v string) { p.report(s.Update(func(st *app.SessionSettings) { st.Data.MemoryFormat = v })) }
	r.Script = widget.NewSelect(choiceNames(predictor.Scripts), nil)
	r.Script.SetSelected(d.Script)
	r.Script.OnChanged = func(v string) { p.report(s.Update(func(st *app.SessionSettings) { st.Data.Script = v })) }
	r.Framework = widget.NewSelect(choiceNames(predictor.Frameworks), nil)
	if fw, err := predictor.ParseFramework(d.Framework); err == nil {
		r.Framework.SetSelected(string(fw)) // "" reads as pytorch2, the default
	}
	r.Framework.OnChanged = func(v string) { p.report(s.Update(func(st *app.SessionSettings) { st.Data.Framework = v })) }
	r.Software = widget.NewSelectEntry(predictor.SoftwareChoices())
	r.Software.SetPlaceHolder("current")
	r.Software.SetText(d.Software)
	r.Software.OnChanged = func(v string) {
		if _, err := predictor.ParseSoftware(v); err != nil {
			return // half typed: the session keeps the last good release
		}
		p.report(s.Update(func(st *app.SessionSettings) { st.Data.Software = strings.TrimSpace(v) }))
	}
	return []*widget.FormItem{
		widget.NewFormItem("Dataset", r.Dataset),
		widget.NewFormItem("Input px", r.Input),
		widget.NewFormItem("Loader", r.Loader),
		widget.NewFormItem("Workers", r.Workers),
		widget.NewFormItem("Layout", r.Format),
		widget.NewFormItem("Script", r.Script),
		widget.NewFormItem("Framework", r.Framework),
		widget.NewFormItem("Software", r.Software),
	}
}

// choiceNames lists a setting's values as a select shows them.
func choiceNames[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

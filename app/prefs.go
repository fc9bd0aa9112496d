package app

import (
	"strconv"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// Preferences store a session's choices between launches (Fyne's preferences satisfy it).
type Preferences interface {
	String(key string) string
	SetString(key, value string)
}

// Preference keys the session reads and writes.
const (
	PrefModels    = "session.models"
	PrefMachines  = "session.machines"
	PrefEpochs    = "session.epochs"
	PrefImages    = "session.images"
	PrefPrecision = "session.precision"
	PrefPolicy    = "session.policy"
	PrefBatchMin  = "session.batch_min"
	// PrefBatchMax is the batch size cap ("0": none). Its key is new: the old
	// "session.batch_max" held a fixed range end (1024 by default), not a cap.
	PrefBatchMax  = "session.batch_cap"
	PrefDataset   = "session.dataset"
	PrefInput     = "session.input"
	PrefLoader    = "session.loader"
	PrefWorkers   = "session.workers"
	PrefFormat    = "session.memory_format"
	PrefScript    = "session.script"
	PrefFramework = "session.framework"
	PrefSoftware  = "session.software"
	PrefNodes     = "session.nodes"
	PrefRegion    = "session.price_region" // "" each machine's cheapest region
	PrefSpot      = "session.spot_prices"
	// The training's mode (epochs or to-target) and the user's own epochs figures
	// ("" or "0": none): epochs at a reference batch, and a critical batch or a preset.
	PrefTrain         = "session.train"
	PrefRefEpochs     = "session.ref_epochs"
	PrefRefBatch      = "session.ref_batch"
	PrefCriticalBatch = "session.critical_batch"
	PrefLike          = "session.like"
	// PrefAnyBatch lets a fixed-epoch run's best batch make fewer than MinStepsPerEpoch
	// steps an epoch ("true"); by default it does not.
	PrefAnyBatch = "session.any_batch"
	// The recipe every CNN trains with to a target ("": each its own) and the target
	// accuracy ("" or "0": each recipe's published one).
	PrefRecipe     = "session.recipe"
	PrefTargetTop1 = "session.target_top1"
	// PrefSaved is set once the session has saved its choices: without it (and
	// without models or machines saved by an older version) a launch is a first one.
	PrefSaved      = "session.saved"
	PrefMetric     = "chart.metric"
	PrefLogX       = "chart.log_x"
	PrefLogY       = "chart.log_y"
	PrefScatterLog = "chart.scatter_log"
	PrefNoBands    = "chart.no_error_bands"
	PrefNoLegend   = "chart.no_legend"
	// The Run tab's deadline (a Go duration, "" none) and budget (USD, "" or "0" none).
	PrefDeadline = "results.deadline"
	PrefBudget   = "results.budget"
)

// firstLaunch reports whether p holds no choices of an earlier session.
func firstLaunch(p Preferences) bool {
	return p != nil && p.String(PrefSaved) == "" && p.String(PrefModels) == "" && p.String(PrefMachines) == ""
}

// loadPrefs reads the remembered choices; anything unreadable falls back to its default.
func loadPrefs(p Preferences) (SessionSettings, ChartSettings) {
	s := DefaultSessionSettings()
	v := DefaultChartSettings()
	if p == nil {
		return s, v
	}
	split := func(key string) []string {
		var out []string
		for _, part := range strings.Split(p.String(key), ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out
	}
	s.Models, s.Machines = split(PrefModels), split(PrefMachines)
	readInt := func(key string, into *int) {
		if n, err := strconv.Atoi(p.String(key)); err == nil {
			*into = n
		}
	}
	readInt(PrefEpochs, &s.Epochs)
	readInt(PrefImages, &s.Images)
	readInt(PrefBatchMin, &s.BatchMin)
	readInt(PrefBatchMax, &s.BatchMax)
	readInt(PrefInput, &s.Data.Input)
	readInt(PrefWorkers, &s.Data.Workers)
	readInt(PrefNodes, &s.Nodes)
	for key, into := range map[string]*string{PrefDataset: &s.Data.Dataset, PrefLoader: &s.Data.Loader, PrefFormat: &s.Data.MemoryFormat, PrefScript: &s.Data.Script, PrefFramework: &s.Data.Framework, PrefSoftware: &s.Data.Software} {
		if v := strings.TrimSpace(p.String(key)); v != "" {
			*into = v
		}
	}
	s.Price.Region = strings.TrimSpace(p.String(PrefRegion))
	if b, err := strconv.ParseBool(p.String(PrefSpot)); err == nil {
		s.Price.Spot = b
	}
	if m, err := ParseTrainMode(p.String(PrefTrain)); err == nil {
		s.Train.Mode = m
	}
	readFloat := func(key string, into *float64) {
		if f, err := strconv.ParseFloat(p.String(key), 64); err == nil {
			*into = f
		}
	}
	readFloat(PrefRefEpochs, &s.Train.Custom.Epochs)
	readInt(PrefRefBatch, &s.Train.Custom.Batch)
	readFloat(PrefCriticalBatch, &s.Train.Custom.CriticalBatch)
	s.Train.Custom.Like = strings.TrimSpace(p.String(PrefLike))
	if b, err := strconv.ParseBool(p.String(PrefAnyBatch)); err == nil {
		s.Train.AnyBatch = b
	}
	s.Train.Recipe = strings.TrimSpace(p.String(PrefRecipe))
	readFloat(PrefTargetTop1, &s.Train.TargetTop1)
	if prec, err := predictor.ParseTrainingPrecision(p.String(PrefPrecision)); err == nil {
		s.Precision = prec
	}
	if pol, err := measure.ParsePolicy(p.String(PrefPolicy)); err == nil {
		s.Policy = pol
	}
	if s.Validate() != nil {
		models, machines := s.Models, s.Machines
		s = DefaultSessionSettings()
		s.Models, s.Machines = unique(models), unique(machines)
	}
	if m, err := charts.ParseMetric(p.String(PrefMetric)); err == nil {
		v.Metric = m
	}
	if b, err := strconv.ParseBool(p.String(PrefLogX)); err == nil {
		v.LogX = b
	}
	if b, err := strconv.ParseBool(p.String(PrefLogY)); err == nil {
		v.LogY = b
	}
	if b, err := strconv.ParseBool(p.String(PrefScatterLog)); err == nil {
		v.ScatterLog = b
	}
	if b, err := strconv.ParseBool(p.String(PrefNoBands)); err == nil {
		v.HideErrorBands = b
	}
	if b, err := strconv.ParseBool(p.String(PrefNoLegend)); err == nil {
		v.HideLegend = b
	}
	v.Limit = loadLimit(p)
	return s, v
}

func (s *Session) savePrefsLocked() {
	p := s.prefs
	if p == nil {
		return
	}
	st, v := s.settings, s.view
	p.SetString(PrefSaved, "1")
	p.SetString(PrefModels, strings.Join(st.Models, ","))
	p.SetString(PrefMachines, strings.Join(st.Machines, ","))
	p.SetString(PrefEpochs, strconv.Itoa(st.Epochs))
	p.SetString(PrefImages, strconv.Itoa(st.Images))
	p.SetString(PrefPrecision, string(st.Precision))
	p.SetString(PrefPolicy, string(st.Policy))
	p.SetString(PrefBatchMin, strconv.Itoa(st.BatchMin))
	p.SetString(PrefBatchMax, strconv.Itoa(st.BatchMax))
	p.SetString(PrefDataset, st.Data.Dataset)
	p.SetString(PrefInput, strconv.Itoa(st.Data.Input))
	p.SetString(PrefLoader, st.Data.Loader)
	p.SetString(PrefWorkers, strconv.Itoa(st.Data.Workers))
	p.SetString(PrefFormat, st.Data.MemoryFormat)
	p.SetString(PrefScript, st.Data.Script)
	p.SetString(PrefFramework, st.Data.Framework)
	p.SetString(PrefSoftware, st.Data.Software)
	p.SetString(PrefNodes, strconv.Itoa(st.Nodes))
	p.SetString(PrefRegion, st.Price.Region)
	p.SetString(PrefSpot, strconv.FormatBool(st.Price.Spot))
	p.SetString(PrefTrain, string(st.Train.Mode))
	p.SetString(PrefRefEpochs, strconv.FormatFloat(st.Train.Custom.Epochs, 'g', -1, 64))
	p.SetString(PrefRefBatch, strconv.Itoa(st.Train.Custom.Batch))
	p.SetString(PrefCriticalBatch, strconv.FormatFloat(st.Train.Custom.CriticalBatch, 'g', -1, 64))
	p.SetString(PrefLike, st.Train.Custom.Like)
	p.SetString(PrefAnyBatch, strconv.FormatBool(st.Train.AnyBatch))
	p.SetString(PrefRecipe, st.Train.Recipe)
	p.SetString(PrefTargetTop1, strconv.FormatFloat(st.Train.TargetTop1, 'g', -1, 64))
	if v.Metric != "" {
		p.SetString(PrefMetric, string(v.Metric))
	}
	p.SetString(PrefLogX, strconv.FormatBool(v.LogX))
	p.SetString(PrefLogY, strconv.FormatBool(v.LogY))
	p.SetString(PrefScatterLog, strconv.FormatBool(v.ScatterLog))
	p.SetString(PrefNoBands, strconv.FormatBool(v.HideErrorBands))
	p.SetString(PrefNoLegend, strconv.FormatBool(v.HideLegend))
	saveLimit(p, v.Limit)
}

package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/app/outfile"
	"cnntime/predictor"
)

// ExportWritten is one file `cnntime export --json` wrote.
type ExportWritten struct {
	Path   string `json:"path"`
	What   string `json:"what"`   // "curves chart", "scatter chart", "results CSV" or "curves CSV"
	Format string `json:"format"` // png, svg, pdf or csv
	Bytes  int64  `json:"bytes"`
}

func exportCommands(register func(Command)) {
	cmd := Command{
		Name:    "export",
		Summary: "write a chart (PNG, SVG, PDF) or the results or curves as CSV",
		Usage: "export " + runFlagsUsage + " " + nodesUsage + "\n        [--chart " + alternatives(exportCharts) + " --out FILE.{png,svg,pdf}] [--csv FILE.csv] [--table " + alternatives(exportTables) + "]\n" +
			"        [--metric " + alternatives(metricChoices()) + "] [--logx] [--logy] [--no-error-bands] [--width W] [--height H] [--title T]\n" +
			"        [--deadline 24h] [--budget USD]" + trainFlagsUsage,
		Details: runDataNote + "\n\n" + trainNote,
	}
	cmd.Run = func(env *Env, args []string) error { return runExport(env, cmd, args) }
	register(cmd)
}

func runExport(env *Env, cmd Command, args []string) error {
	fs := env.Flags(cmd)
	var pf runFlags
	pf.register(fs, false)
	var chart, table, metric string
	choiceVar(fs, &chart, "chart", "", "the chart --out draws (default curves)", exportCharts, acceptChoice("chart", exportCharts))
	out := fs.String("out", "", "the chart file; its extension picks the format: .png, .svg or .pdf")
	csvPath := fs.String("csv", "", "a CSV file to write")
	choiceVar(fs, &table, "table", "results", "what the CSV holds", exportTables, acceptChoice("table", exportTables))
	choiceVar(fs, &metric, "metric", "total", "the curves chart's y axis", metricChoices(), errorOf(charts.ParseMetric))
	logX := fs.Bool("logx", false, "logarithmic x axis (default: the window's axes, logarithmic for the curves chart, linear for the scatter; --logx=false for a linear one)")
	logY := fs.Bool("logy", false, "logarithmic y axis (default as --logx; --logy=false for a linear one)")
	noBands := fs.Bool("no-error-bands", false, "leave out the expected-error bands (curves) and whiskers (scatter)")
	width := wholeFlag(fs, "width", 1200, "chart width in pixels (SVG and PDF: ×0.75 points)")
	height := wholeFlag(fs, "height", 750, "chart height in pixels")
	title := fs.String("title", "", "chart title (default: what it shows and the run: CNNs, machines, epochs or target, dataset, precision, framework, loader, prices' date)")
	var deadline time.Duration
	var budget float64
	fs.DurationVar(&deadline, "deadline", 0, "the scatter draws this deadline, e.g. 24h, as a dashed line and tints the runs that meet it (as best --deadline ranks them)")
	decimalVar(fs, &budget, "budget", 0, "the scatter draws this budget, USD, as a dashed line and tints the runs within it")
	if err := checkFlagValues(fs, args); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}

	// Check every flag before predicting or writing anything.
	if chart != "" && *out == "" {
		return Usagef("--chart %s needs --out FILE.png, .svg or .pdf", chart)
	}
	if *out == "" && *csvPath == "" {
		return Usagef("nothing to write: give --chart and --out FILE, or --csv FILE")
	}
	var format charts.Format
	if *out != "" {
		if chart == "" {
			chart = "curves"
		}
		if !isChoice(exportCharts, chart) {
			return Usagef("--chart %q: use %s", chart, strings.Join(strings.Split(alternatives(exportCharts), "|"), " or "))
		}
		f, err := charts.FormatOf(*out)
		if err != nil {
			return Usagef("--out: %v", err)
		}
		format = f
	}
	if !isChoice(exportTables, table) {
		return Usagef("--table %q: use %s", table, strings.Join(strings.Split(alternatives(exportTables), "|"), " or "))
	}
	m, err := charts.ParseMetric(metric)
	if err != nil {
		return Usagef("--metric: %v", err)
	}
	if deadline < 0 || budget < 0 {
		return Usagef("--deadline %v --budget %v: give a positive deadline or budget", deadline, budget)
	}
	if (deadline > 0 || budget > 0) && chart != "scatter" {
		return Usagef("--deadline and --budget mark the scatter: add --chart scatter")
	}
	if *width < 100 || *height < 100 || *width > charts.MaxPixels || *height > charts.MaxPixels {
		return Usagef("--width %d --height %d: use 100 to %d pixels a side", *width, *height, charts.MaxPixels)
	}

	if *out == "-" {
		return Usagef("--out -: a chart goes to a file (its extension picks the format); --csv - writes CSV to standard output")
	}
	if *csvPath == "-" && env.JSON {
		return Usagef("--json with --csv -: both would go to standard output; write the CSV to a file, or leave --json out")
	}
	for _, path := range []string{*out, *csvPath} {
		if path != "" && path != "-" {
			if err := outfile.Check(path); err != nil { // before the work of predicting
				return fmt.Errorf("export to %s: %w", app.Printable(path), err)
			}
		}
	}

	eng, closeDB, err := openEngine(env)
	if err != nil {
		return err
	}
	defer closeDB()
	q, err := pf.query(env.Ctx, eng, fs)
	if err != nil {
		return err
	}
	var curves []predictor.Curve
	if *out != "" { // a chart draws every curve at once
		if curves, err = eng.Curves(env.Ctx, q); err != nil {
			return err
		}
	}

	var written []ExportWritten
	// counted wraps write to count the bytes it writes: a pipe or a terminal has no size.
	counted := func(path, what, format string, write func(io.Writer) error) func(io.Writer) error {
		return func(w io.Writer) error {
			cw := &countingWriter{w: w}
			err := write(cw)
			if err == nil && path != "-" {
				written = append(written, ExportWritten{Path: path, What: what, Format: format, Bytes: cw.n})
			}
			return err
		}
	}
	if *out != "" {
		// The window's axes unless the flags say otherwise: a chart of many series on
		// linear axes crowds every small machine's curve against the axis.
		def := app.DefaultChartSettings()
		lx, ly := def.LogX, def.LogY
		if chart == "scatter" {
			lx, ly = def.ScatterLog, def.ScatterLog
		}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "logx":
				lx = *logX
			case "logy":
				ly = *logY
			}
		})
		opt := charts.Options{Metric: m, LogX: lx, LogY: ly, Legend: true, Title: *title, NoErrorBands: *noBands,
			DeadlineS: deadline.Seconds(), BudgetUSD: budget}
		if *title == "" { // the window's title for the same chart: what it shows and the run
			what := m.TitleFor(curves) + " vs batch size"
			if chart == "scatter" {
				what = charts.ScatterTitle(curves)
			}
			opt.Title = app.ChartTitle(what, app.QuerySettings(q), curves)
		}
		c := charts.Curves(curves, opt)
		if chart == "scatter" {
			c = charts.Scatter(curves, opt)
		}
		draw := counted(*out, chart+" chart", string(format), func(w io.Writer) error { return c.Write(w, format, *width, *height) })
		if err := app.ExportFile(*out, draw); err != nil {
			return err
		}
	}
	if *csvPath != "" {
		write := func(w io.Writer) error { return app.WriteSummariesCSV(w, app.Summarize(curves)) }
		if table == "curves" {
			write = func(w io.Writer) error { return app.WriteCurvesCSV(w, curves) }
		}
		if curves == nil { // no chart: predict while writing, a curve at a time
			write = func(w io.Writer) error { return app.StreamSummariesCSV(env.Ctx, w, eng, q) }
			if table == "curves" {
				write = func(w io.Writer) error { return app.StreamCurvesCSV(env.Ctx, w, eng, q) }
			}
		}
		write = counted(*csvPath, table+" CSV", "csv", write)
		if *csvPath == "-" {
			err = write(env.Stdout)
		} else {
			err = app.ExportCSV(*csvPath, write)
		}
		if err != nil {
			return err
		}
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]any{"written": written})
	}
	for _, w := range written {
		fmt.Fprintf(env.Stdout, "wrote %s (%s, %d bytes)\n", app.Printable(w.Path), w.What, w.Bytes)
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

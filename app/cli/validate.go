package cli

import (
	"io"
	"strings"

	"cnntime/app"
	"cnntime/app/validate"
)

// maxRounds bounds validate's CPU rounds: each measures every layer and step once.
const maxRounds = 100

func validateCommands(register func(Command)) {
	cmd := Command{
		Name:    "validate",
		Summary: "measure and print the predictor's accuracy: CPU steps, per-layer across GPUs, published networks and cross-GPU ratios",
		Usage:   "validate [--skip-cpu] [--rounds N] [--repeats N] [--table " + alternatives(validateTables) + "] [--json]",
	}
	cmd.Run = func(env *Env, args []string) error {
		fs := env.Flags(cmd)
		skipCPU := fs.Bool("skip-cpu", false, "skip the CPU measurements (about five minutes on two cores)")
		repeats := wholeFlag(fs, "repeats", 3, "timed repeats of each CPU measurement in each round")
		rounds := wholeFlag(fs, "rounds", 5, "CPU rounds: each measures every layer and step once, and the round with the median error counts")
		var table string
		choiceVar(fs, &table, "table", "", "print one table alone (default: every table)", validateTables, acceptChoice("table", validateTables))
		if err := fs.Parse(args); err != nil {
			return err
		}
		if strings.TrimSpace(table) == "" && flagGiven(fs, "table") { // not every table, which takes minutes
			return Usagef("--table %q names no table: give one of %s, or leave --table out for every table", table, strings.Join(strings.Split(alternatives(validateTables), "|"), ", "))
		}
		switch table {
		case "":
		case "steps":
			return runValidateSteps(env)
		case "convergence":
			return runValidateConvergence(env)
		case "ratios":
			return runValidateRatios(env)
		case "gains":
			return runValidateGains(env)
		default:
			return Usagef("--table %q: the tables are %s", table, strings.Join(strings.Split(alternatives(validateTables), "|"), " and "))
		}
		if fs.NArg() > 0 {
			return Usagef("unexpected argument %q", fs.Arg(0))
		}
		if *repeats < 1 {
			return Usagef("--repeats %d: must be positive", *repeats)
		}
		if *rounds < 1 {
			return Usagef("--rounds %d: must be positive", *rounds)
		}
		if err := inRange("repeats", *repeats, 1, maxRepeats, false, "the timed repeats of each CPU measurement"); err != nil {
			return err
		}
		if err := inRange("rounds", *rounds, 1, maxRounds, false, "the CPU rounds"); err != nil {
			return err
		}
		eng, err := app.NewEngine(env.Ctx, nil) // the embedded calibration alone: reproducible anywhere
		if err != nil {
			return err
		}
		rep := validate.Report{Layers: eng.Kernels().Calibration().Accuracy}
		if rep.Rows, err = validate.Public(env.Ctx, eng); err != nil {
			return err
		}
		rep.Public = validate.BySource(rep.Rows)
		if rep.Modern, err = validate.Modern(eng); err != nil {
			return err
		}
		rep.Ratios = validate.Ratios(rep.Modern)
		if rep.Scaling, err = validate.Scaling(eng); err != nil {
			return err
		}
		if rep.Convergence, err = validate.Convergence(); err != nil {
			return err
		}
		if rep.StepBatch, err = validate.StepBatch(eng); err != nil {
			return err
		}
		if rep.Loader, err = validate.Loader(eng); err != nil {
			return err
		}
		if rep.Gains, err = validate.GainsWithRefit(eng, &rep); err != nil {
			return err
		}
		if !*skipCPU {
			var progress io.Writer
			if !env.JSON {
				progress = env.Stderr
			}
			if rep.CPU, err = validate.MeasureCPU(env.Ctx, eng.Kernels().Calibration(), validate.DefaultCPUOptions(*rounds, *repeats), progress); err != nil {
				return err
			}
		}
		if env.JSON {
			return WriteJSON(env.Stdout, rep)
		}
		return validate.WriteReport(env.Stdout, &rep)
	}
	register(cmd)
}

// runValidateSteps is `cnntime validate --table steps`.
func runValidateSteps(env *Env) error {
	eng, err := app.NewEngine(env.Ctx, nil)
	if err != nil {
		return err
	}
	d, err := env.ExistingCache()
	if err != nil {
		return err
	}
	if d == nil {
		return env.noCache("validate: it holds the measured steps")
	}
	v, err := validate.Steps(env.Ctx, d, eng.Kernels().Calibration())
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, v)
	}
	return validate.WriteStepsTable(env.Stdout, &v)
}

// runValidateConvergence is `cnntime validate --table convergence`: the epochs-to-target
// model against the published figures, tuning and held out.
func runValidateConvergence(env *Env) error {
	acc, err := validate.Convergence()
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, acc)
	}
	return validate.WriteConvergenceTable(env.Stdout, acc, 6)
}

// runValidateRatios is `cnntime validate --table ratios`: the cross-GPU throughput
// ratios of the published whole-network figures against the predicted ones.
func runValidateRatios(env *Env) error {
	eng, err := app.NewEngine(env.Ctx, nil)
	if err != nil {
		return err
	}
	m, err := validate.Modern(eng)
	if err != nil {
		return err
	}
	acc := validate.Ratios(m)
	if env.JSON {
		return WriteJSON(env.Stdout, acc)
	}
	return validate.WriteRatioTable(env.Stdout, acc)
}

// runValidateGains is `cnntime validate --table gains`: each published series'
// throughput gain from its smallest to its largest batch (tables 3, 4 and 8's rows),
// measured and predicted, with the queued kernel's, eager operator's and handoff's costs
// refitted together on the tuning series and table 8's tuning rows.
func runValidateGains(env *Env) error {
	eng, err := app.NewEngine(env.Ctx, nil)
	if err != nil {
		return err
	}
	var rep validate.Report
	if rep.Rows, err = validate.Public(env.Ctx, eng); err != nil {
		return err
	}
	rep.Public = validate.BySource(rep.Rows)
	if rep.Modern, err = validate.Modern(eng); err != nil {
		return err
	}
	if rep.StepBatch, err = validate.StepBatch(eng); err != nil {
		return err
	}
	acc, err := validate.GainsWithRefit(eng, &rep)
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, acc)
	}
	return validate.WriteGainTable(env.Stdout, acc, 10)
}

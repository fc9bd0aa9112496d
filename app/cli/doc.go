// Package cli is cnntime's command line: it parses the global flags and each command's
// flags, turns mistakes (and app.InputError) into usage errors that say what to type,
// and prints tables, CSV and JSON. The shared run flags of predict, best and export live
// in runflags.go; the commands are listed explicitly in cli.go (commandSets).
//
// Imports: app and the packages app exposes types from (predictor and its sub-packages,
// db, gpu), app/charts, app/cluster and
// app/validate (the accuracy tables of `cnntime validate`). Nothing imports cli but main.
package cli

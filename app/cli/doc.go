// Package cli is cnntime's command line: it parses the global flags and each command's
// flags, turns mistakes (and app.InputError) into usage errors that say what to type,
// and prints tables, CSV and JSON. The shared run flags of predict, best and export live
// in runflags.go; the commands are listed explicitly in cli.go (commandSets).
//
// It may import app and the packages app exposes types from (predictor, predictor/...,
// db, gpu); nothing imports cli but main.
package cli

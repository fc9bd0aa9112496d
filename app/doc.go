// Package app is the application layer shared by the GUI (views) and the command line
// (app/cli): the state a session works on and the use cases (predict, sweep, import,
// export, validate). It parses no flags: a request it refuses is an InputError that
// names no flag. views and app/cli call it, never the other way round.
//
// Imports: predictor and its sub-packages, gpu and gpu/cpu (never gpu/cuda), db, assets
// and app/charts. Never Fyne, gorgonia.org/cu, views or app/cli.
package app

// Package app is the application layer shared by the GUI (views) and the command line
// (app/cli): the state a session works on and the use cases (predict, sweep, import,
// export). It parses no flags: a request it refuses is an InputError that names no
// flag. views and app/cli call it, never the other way round. The accuracy tables of
// `cnntime validate` are app/validate, which builds on app.
//
// Imports: predictor and its sub-packages, gpu and its packages but gpu/cuda, db, assets,
// app/charts and the packages split from it (app/prices: cloud prices; app/shipped: the
// shipped catalog; app/clock; app/inputerr). Never Fyne, gorgonia.org/cu, views, app/cli
// or app/validate.
package app

// Package validate holds the accuracy tables behind `cnntime validate`: each table
// predicts a set of figures (steps measured on this CPU, DeepBench layers, published
// whole-network speeds, multi-node scaling, …) and reports how far the predictions are
// from them, with the tuning and held-out sets apart. It is accuracy bookkeeping, kept
// out of app's use cases; only the command line (app/cli) runs it.
//
// Imports: app (the engine, the catalog, the text tables), predictor and its
// sub-packages, gpu/cpu (the CPU table measures), db (the cache's measured steps) and
// assets (the embedded published figures). Never Fyne, views or app/cli.
package validate

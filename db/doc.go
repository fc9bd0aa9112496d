// Package db is cnntime's benchmark cache: one local SQLite file (modernc.org/sqlite,
// pure Go) that holds every measured device, layer configuration, kernel measurement,
// whole training step, sweep, user machine, price override and custom model file, and
// the cloud prices imported from SkyPilot's catalog (ReplacePrices swaps a cloud's
// prices whole, in one transaction; a merge leaves them out: they are this machine's).
//
// The file is safe to share: it runs in WAL mode with a busy timeout, so a reader (the
// GUI) and a writer (a sweep, possibly in another process) work at the same time; every
// write is one transaction, so a process killed half-way loses at most the write it was
// making, never a committed one. The schema is versioned (PRAGMA user_version) and
// marked as cnntime's (PRAGMA application_id): an older cache is migrated on Open; a
// cache written by a newer cnntime, or any file that is not a cnntime cache, is refused
// before a single byte of it is changed.
//
// Import merges another cache file or a CSV of whole-step measurements (see
// StepCSVColumns) all or nothing; Export writes the whole cache or a part of it to a new
// cache file or to CSV.
//
// Imports: predictor/hw and predictor/measure (the records it stores), db/csvsafe and
// the SQLite driver. Never gpu, app, views, Fyne or CUDA.
package db

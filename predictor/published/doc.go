// Package published reads the CSV files of published figures the predictor is fitted
// and checked on (assets/validation): a header that names its columns, rows each in
// the tuning or the held-out set, and errors that name the file, the line and the
// column of what did not read.
//
// Imports: nothing of ours. It does no I/O: the files arrive as bytes.
package published

// Package numfmt writes numbers for people, one way for the window, the CLI's tables and
// lines, and the exported charts: whole counts with thousands separators ("1,281,167"),
// measures to three significant digits ("84.2 ms", "0.170 images/s"), durations in the
// unit that suits them ("850 ms", "12.3 s", "14.5 min", "5.2 h", "3.1 days"), dollars
// to the cent and, under a cent, to two significant digits ("$0.0042", never "$0.00"),
// and axis ticks as plain decimals ("0.001", "100,000", "1,000,000", never "1e+06").
//
// Each function has an Append form for the CLI's streamed tables, which write millions
// of cells; the string forms call them.
//
// Imports: the standard library only; app, app/charts, app/cli and the views write
// their numbers with it.
package numfmt

// Package csvsafe keeps the text cells of cnntime's CSV files from running as formulas
// when the file is opened in a spreadsheet (CSV or formula injection).
//
// A spreadsheet reads a cell that starts with =, +, - or @ (or a tab or a carriage
// return, which some strip first) as a formula, so a custom model named
// =HYPERLINK("http://…") or a machine named +cmd|' /C calc'!A0 would run when a results
// CSV is opened. Text turns such a cell into text with a leading apostrophe, which
// spreadsheets show as text; Untext takes it off again, so a CSV that cnntime writes and
// later reads back (the step CSV of `cnntime cache export --csv` and `cache import`)
// gives back every name unchanged.
//
// Only text cells go through Text: names of models, machines, GPUs and devices, sources,
// notes, enumerations. Numeric cells are written as numbers and left alone, so a
// negative number stays a number.
//
// The rule is one-to-one. Text prefixes an apostrophe to a cell that starts with one of
// = + - @ TAB CR, and also to a cell that starts with an apostrophe followed by one of
// those or by another apostrophe (so that a name that really starts that way survives a
// round trip); every other cell is returned as it is. Untext removes one leading
// apostrophe exactly when the rest starts with one of = + - @ TAB CR or an apostrophe.
// So Untext(Text(s)) == s for every s, and a hand-written CSV may write '=x for a name
// =x. A name that starts with a single apostrophe and then anything else ('abc) is
// written and read as it is.
//
// The package sits under db, the lowest layer that writes CSV files, so that db, app,
// app/cli and views all use this one implementation (db must not import app).
//
// Imports: nothing of ours.
package csvsafe

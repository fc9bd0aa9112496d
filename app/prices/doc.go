// Package prices keeps cnntime's cloud prices: the shipped catalog
// (assets/catalog/machines.csv, package shipped) is the offline default; SkyPilot's
// catalog, imported from files (Import) or downloaded (Update), replaces a cloud's
// prices in the cache, all or nothing, and adds every instance type whose GPU cnntime
// can predict (Imported gives them to app's machine list). Current says which prices
// are in use and how old they are; Gaps says why a curve's machine has no price for the
// run's choice (region, spot) and what fixes it.
//
// Imports: app/clock, app/infile, app/inputerr, app/pricefeed, app/shipped, db and
// predictor. Never app itself (app imports it), Fyne or views.
package prices

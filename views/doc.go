// Package views is cnntime's desktop interface: the main window, its selection panel
// (chips, CNN and machine lists, run settings), the charts, the results, machine and
// benchmark tabs, "Why this number?", and the dialogs. It holds Fyne widgets and layout
// only; what they show and do comes from package app (the session, the sweep runner,
// the exports), so the same use cases run headless from the command line.
//
// Imports: Fyne, app and app/charts, and predictor and its sub-packages for plain types
// only (curves, points, explanations, machines, precisions); never db or gpu.
package views

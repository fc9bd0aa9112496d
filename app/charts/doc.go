// Package charts draws the app's two charts with gonum/plot, without any GUI toolkit:
// training time (or cost, or throughput) against batch size, one curve per CNN×machine,
// and the min-time vs cost scatter with its Pareto front. It renders them as PNG, SVG or
// PDF at a chosen size, and maps pixels to data and back so a GUI can draw a hover
// crosshair and find the point under the mouse.
//
// Imports: predictor (the curves it draws) and predictor/recipe (their recipes), app/numfmt (how
// its ticks and tooltips write numbers), and gonum/plot. No GUI toolkit and no app:
// the app and the views both draw with it.
package charts

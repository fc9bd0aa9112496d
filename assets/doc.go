// Package assets holds the files embedded in the cnntime binary: the app icon, the
// hardware and cloud catalog, the fitted calibration of the predictor and bundled
// measurements. Each kind of file has its own accessor; nothing here parses them.
//
// Imports: nothing of ours (embed only). app, app/cli and views read it; predictor, gpu
// and db never do: they are handed the bytes.
package assets

// Package assets holds the files embedded in the cnntime binary: the app icon, the
// hardware and cloud catalog, the fitted calibration of the predictor and bundled
// measurements. Each kind of file has its own accessor; nothing here parses them.
package assets

import _ "embed"

// Icon is the application icon, a 512×512 PNG.
//
//go:embed icon.png
var Icon []byte

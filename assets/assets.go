package assets

import _ "embed"

// Icon is the application icon, a 512×512 PNG.
//
//go:embed icon.png
var Icon []byte

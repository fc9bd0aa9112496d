package assets

import _ "embed"

// PublicMeasurements is a copy of the published whole-network training speeds used
// for development (validation/public_measurements_dev.csv, from ../shared/data): one
// row per source × GPU × model × framework × precision × batch size, with notes that
// give the exact source file and its caveats. `cnntime validate` compares the
// predictor with the rows whose setup it models.
//
//go:embed validation/public_measurements_dev.csv
var PublicMeasurements []byte

package assets

import _ "embed"

// CatalogGPUs is the GPU specification catalog (catalog/gpus.csv): one row per GPU
// model with its published figures and their sources; see catalog/README.md.
//
//go:embed catalog/gpus.csv
var CatalogGPUs []byte

// CatalogMachines is the cloud machine catalog (catalog/machines.csv): one row per
// instance with its GPU, size, on-demand price and the price's date and source.
//
//go:embed catalog/machines.csv
var CatalogMachines []byte

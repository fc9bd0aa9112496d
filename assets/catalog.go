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

// CatalogNetworks is the network between instances of a machine (catalog/networks.csv):
// fabric and bandwidth per node with their sources, for multi-node predictions. A
// machine missing from it has an unknown network.
//
//go:embed catalog/networks.csv
var CatalogNetworks []byte

// CatalogCPUs is each instance's host CPU (catalog/cpus.csv): model, base and turbo
// clock with their sources. The loader's per-worker rate scales with it.
//
//go:embed catalog/cpus.csv
var CatalogCPUs []byte

// CatalogSpotPrices is a dated snapshot of the machines' spot prices per region
// (catalog/spot_prices.csv) from a public price catalog, for spot costs offline; see
// catalog/README.md.
//
//go:embed catalog/spot_prices.csv
var CatalogSpotPrices []byte

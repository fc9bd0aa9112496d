package app

import (
	"fmt"
	"sync"

	"cnntime/assets"
	"cnntime/predictor/hw"
)

// catalogNetworks is the embedded network file, read once.
var catalogNetworks = sync.OnceValues(func() (*hw.Networks, error) {
	cat, err := hw.ParseCatalog(assets.CatalogGPUs, assets.CatalogMachines)
	if err != nil {
		return nil, err
	}
	n, err := hw.ParseNetworks(assets.CatalogNetworks, cat)
	if err != nil {
		return nil, fmt.Errorf("the embedded network catalog is broken (a build mistake; report it): %w", err)
	}
	return n, nil
})

// NodeNetwork is the network between instances of the machine: the catalog's figure
// with its source, or hw.AssumedNetwork (marked assumed) where none is published.
func NodeNetwork(machineID string) hw.Network {
	n, err := catalogNetworks()
	if err != nil {
		return hw.AssumedNetwork
	}
	return n.For(machineID)
}

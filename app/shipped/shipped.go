package shipped

import (
	"fmt"
	"sync"

	"cnntime/assets"
	"cnntime/predictor/hw"
)

var (
	once   sync.Once
	loaded *hw.Catalog
	err    error
)

// Catalog returns the embedded GPU and cloud machine catalog, parsed and validated the
// first time it is asked for. The catalog is shared and read-only.
func Catalog() (*hw.Catalog, error) {
	once.Do(func() {
		loaded, err = hw.ParseCatalog(assets.CatalogGPUs, assets.CatalogMachines)
		if err == nil {
			err = hw.ParseCPUs(assets.CatalogCPUs, loaded)
		}
		if err == nil {
			err = hw.ParseSpotPrices(assets.CatalogSpotPrices, loaded)
		}
		if err != nil {
			err = fmt.Errorf("the embedded hardware catalog is broken (a build mistake; report it): %w", err)
		}
	})
	return loaded, err
}

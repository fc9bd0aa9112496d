package app

import (
	"fmt"
	"strings"

	"cnntime/db"
)

func MergedText(m db.Merged) string {
	return fmt.Sprintf("%d added, %d replaced older ones, %d left out (the cache's were as new)", m.Added, m.Replaced, m.Kept)
}

// PricesMergedText says how an imported cache's clouds of prices met the cache's, and
// which were refused as no catalog cnntime keeps.
func PricesMergedText(rep db.ImportReport) string {
	m := rep.Prices
	text := fmt.Sprintf("%d clouds added, %d replaced by later prices, %d left out (the cache's were as new)", m.Added, m.Replaced, m.Kept)
	if len(rep.PricesRefused) > 0 {
		text += fmt.Sprintf("; refused, as no price catalog cnntime keeps: %s", strings.Join(rep.PricesRefused, "; "))
	}
	return text
}

// OpenCache opens the cache at path (db.Open) with the checks of imports that need the
// application: a step or kernel row's catalog GPU must be in the catalog, and an
// imported cache's custom models must read and must not take a zoo model's name.
func OpenCache(path string) (*db.DB, error) {
	d, err := db.Open(path)
	if err != nil {
		return nil, err
	}
	d.SetImportChecks(ImportChecks())
	return d, nil
}

// maxCustomModelBytes bounds a custom model file: ten thousand layers (the most a
// model may have) take a few megabytes.
const maxCustomModelBytes = 16 << 20

// ImportChecks are the checks a cache's imports make (db.ImportChecks) with the
// embedded catalog and the custom model format.
func ImportChecks() db.ImportChecks {
	var c db.ImportChecks
	if cat, err := LoadCatalog(); err == nil { // a broken catalog fails everything else first
		c.GPU = func(id string) bool { _, err := cat.GPU(id); return err == nil }
	}
	c.CustomModel = func(name string, data []byte) error {
		if len(data) > maxCustomModelBytes {
			return fmt.Errorf("its file is %d MB, more than a custom model may be (%d MB)", len(data)>>20, maxCustomModelBytes>>20)
		}
		net, err := ParseSavedModel(db.CustomModel{Name: name, JSON: data})
		if err != nil {
			return err
		}
		if net.Name != name {
			return fmt.Errorf("it is saved as %q but its file names it %q", name, net.Name)
		}
		return nil
	}
	return c
}

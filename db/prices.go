package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"cnntime/predictor/hw"
)

// PriceCatalog is one cloud's imported prices as the cache keeps them: where and when
// they came from, and the validators of the download (for a conditional request).
type PriceCatalog struct {
	Cloud        string    `json:"cloud"`
	Source       string    `json:"source"`     // the file or address
	PriceDate    string    `json:"price_date"` // YYYY-MM-DD
	ImportedAt   time.Time `json:"imported_at"`
	CheckedAt    time.Time `json:"checked_at"` // the last time a download found it unchanged (else ImportedAt)
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Rows         int       `json:"rows"`   // data rows of the file
	Offers       int       `json:"offers"` // instance types × regions with an accelerator
}

// CloudPrices is one cloud's new prices: its catalog record and every offer.
type CloudPrices struct {
	Catalog PriceCatalog
	Offers  []hw.CloudOffer
}

// ReplacePrices replaces the prices of every cloud in sets, all in one transaction:
// after it each of those clouds has exactly its new offers, or (on any error) the
// cache is as it was. Clouds not in sets keep theirs.
func (d *DB) ReplacePrices(ctx context.Context, sets []CloudPrices) error {
	for _, s := range sets {
		if err := checkCloudPrices(s); err != nil {
			return err
		}
	}
	if len(sets) == 0 {
		return nil
	}
	return d.write(ctx, "store the imported prices", func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO cloud_offers (cloud, instance, region, accelerator,
				accelerator_count, vcpus, memory_gib, price_usd, spot_usd, spot_zone)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, s := range sets {
			c := s.Catalog
			if _, err := tx.ExecContext(ctx, `DELETE FROM cloud_offers WHERE cloud = ?`, c.Cloud); err != nil {
				return err
			}
			imported := c.ImportedAt
			if imported.IsZero() {
				imported = time.Now()
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO price_catalogs (cloud, source, price_date,
					imported_at, checked_at, etag, last_modified, rows) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				c.Cloud, c.Source, c.PriceDate, imported.UnixNano(), imported.UnixNano(), c.ETag, c.LastModified, c.Rows); err != nil {
				return err
			}
			for _, o := range s.Offers {
				if _, err := ins.ExecContext(ctx, c.Cloud, o.Instance, o.Region, o.Accelerator, o.AcceleratorCount,
					o.VCPUs, o.MemoryGiB, o.PriceUSD, o.SpotUSD, o.SpotZone); err != nil {
					return fmt.Errorf("%s %s in %s: %w", c.Cloud, o.Instance, o.Region, err)
				}
			}
		}
		return checkStoredPrices(ctx, tx, "main")
	})
}

// checkStoredPrices refuses prices that together exceed what cnntime keeps
// (hw.MaxStoredOffers instance types × regions, hw.MaxPriceClouds clouds), so that the
// transaction storing them rolls back.
func checkStoredPrices(ctx context.Context, tx *sql.Tx, schema string) error {
	var offers, clouds int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+schema+`.cloud_offers), (SELECT count(*) FROM `+schema+`.price_catalogs)`).Scan(&offers, &clouds); err != nil {
		return err
	}
	switch {
	case clouds > hw.MaxPriceClouds:
		return fmt.Errorf("store the prices: the cache would hold the prices of %d clouds, more than cnntime keeps (%d); nothing was stored", clouds, hw.MaxPriceClouds)
	case offers > hw.MaxStoredOffers:
		return fmt.Errorf("store the prices: the cache would hold %d instance types × regions across its clouds, more than cnntime keeps (%d); nothing was stored: import fewer clouds",
			offers, hw.MaxStoredOffers)
	}
	return nil
}

// checkCloudPrices refuses a set the cache would store wrongly: no cloud, source or
// date, an offer of another cloud, a figure no instance has (hw.CheckOffer), or more
// instance types or instance types × regions than cnntime keeps of a cloud
// (hw.MaxCloudInstanceTypes, hw.MaxCloudOffers).
func checkCloudPrices(s CloudPrices) error {
	c := s.Catalog
	switch {
	case c.Cloud == "":
		return fmt.Errorf("store prices: no cloud named")
	case c.Source == "" || c.PriceDate == "":
		return fmt.Errorf("store the prices of %s: the source and the date are required", c.Cloud)
	case c.Rows < 0:
		return fmt.Errorf("store the prices of %s: %d rows is negative", c.Cloud, c.Rows)
	case len(s.Offers) > hw.MaxCloudOffers:
		return fmt.Errorf("store the prices of %s: %d instance types × regions, more than cnntime keeps of a cloud (%d)", c.Cloud, len(s.Offers), hw.MaxCloudOffers)
	}
	types := map[string]bool{}
	for _, o := range s.Offers {
		if o.Cloud != c.Cloud {
			return fmt.Errorf("store the prices of %s: an offer of %s (%s) is among them", c.Cloud, o.Cloud, o.Instance)
		}
		for _, name := range []string{o.Instance, o.Region, o.Accelerator, o.SpotZone} {
			if err := hw.CheckName(name); err != nil {
				return fmt.Errorf("store the prices of %s: %w", c.Cloud, err)
			}
		}
		if err := hw.CheckOffer(o); err != nil {
			return fmt.Errorf("store the prices of %s: %s in %s: %w", c.Cloud, o.Instance, o.Region, err)
		}
		types[o.Instance] = true
	}
	if len(types) > hw.MaxCloudInstanceTypes {
		return fmt.Errorf("store the prices of %s: %d instance types, more than cnntime keeps of a cloud (%d)", c.Cloud, len(types), hw.MaxCloudInstanceTypes)
	}
	return nil
}

// MarkPricesChecked records that a download found cloud's prices unchanged (HTTP 304)
// at time at; it is an error (wrapping ErrNotFound) when the cache has no prices of it.
func (d *DB) MarkPricesChecked(ctx context.Context, cloud string, at time.Time) error {
	return d.write(ctx, "mark the prices of "+cloud+" as checked", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE price_catalogs SET checked_at = ? WHERE cloud = ?`, at.UnixNano(), cloud)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("the cache has no prices of %s: %w", cloud, ErrNotFound)
		}
		return nil
	})
}

// PriceCatalogs lists the clouds whose prices the cache holds, by cloud.
func (d *DB) PriceCatalogs(ctx context.Context) ([]PriceCatalog, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT p.cloud, p.source, p.price_date, p.imported_at, p.checked_at,
			p.etag, p.last_modified, p.rows, (SELECT count(*) FROM cloud_offers o WHERE o.cloud = p.cloud)
		FROM price_catalogs p ORDER BY p.cloud`)
	if err != nil {
		return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []PriceCatalog
	for rows.Next() {
		var c PriceCatalog
		var imported, checked int64
		if err := rows.Scan(&c.Cloud, &c.Source, &c.PriceDate, &imported, &checked, &c.ETag, &c.LastModified, &c.Rows, &c.Offers); err != nil {
			return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
		}
		c.ImportedAt, c.CheckedAt = time.Unix(0, imported), time.Unix(0, checked)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
	}
	return out, nil
}

// PriceCatalog is one cloud's record; the error wraps ErrNotFound when there is none.
func (d *DB) PriceCatalog(ctx context.Context, cloud string) (PriceCatalog, error) {
	all, err := d.PriceCatalogs(ctx)
	if err != nil {
		return PriceCatalog{}, err
	}
	for _, c := range all {
		if c.Cloud == cloud {
			return c, nil
		}
	}
	return PriceCatalog{}, fmt.Errorf("the cache has no prices of %s: %w", cloud, ErrNotFound)
}

// CloudOffers lists every imported offer, by cloud, instance and region.
func (d *DB) CloudOffers(ctx context.Context) ([]hw.CloudOffer, error) {
	return d.CloudOffersOf(ctx, nil)
}

// CloudOffersOf lists the imported offers whose accelerator is one of accelerators
// (compared without case; nil: every offer), by cloud, instance and region: what reads
// prices for some accelerators costs nothing for the others' rows.
func (d *DB) CloudOffersOf(ctx context.Context, accelerators []string) ([]hw.CloudOffer, error) {
	where, args := "", []any{}
	if accelerators != nil {
		where = "WHERE lower(accelerator) IN (SELECT lower(value) FROM json_each(?))"
		list, err := json.Marshal(accelerators)
		if err != nil {
			return nil, err
		}
		args = append(args, string(list))
	}
	rows, err := d.sqldb().QueryContext(ctx, `SELECT cloud, instance, region, accelerator, accelerator_count,
			vcpus, memory_gib, price_usd, spot_usd, spot_zone
		FROM cloud_offers `+where+` ORDER BY cloud, instance, region`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []hw.CloudOffer
	for rows.Next() {
		var o hw.CloudOffer
		if err := rows.Scan(&o.Cloud, &o.Instance, &o.Region, &o.Accelerator, &o.AcceleratorCount,
			&o.VCPUs, &o.MemoryGiB, &o.PriceUSD, &o.SpotUSD, &o.SpotZone); err != nil {
			return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the imported prices in %s: %w", d.path, err)
	}
	return out, nil
}

package db

import (
	"context"
	"fmt"
)

// HoldingCounts is how many rows the cache holds for one device, counted by the
// database rather than read.
type HoldingCounts struct {
	Kernels     int // kernel measurements of any status
	OutOfMemory int // of which did not fit
	Steps       int // whole-step measurements
}

// CountsByDevice returns the row counts per device key, for every device the cache knows
// (a device with nothing measured counts zero).
func (d *DB) CountsByDevice(ctx context.Context) (map[string]HoldingCounts, error) {
	out := map[string]HoldingCounts{}
	rows, err := d.sqldb().QueryContext(ctx, `SELECT d.key,
			(SELECT count(*) FROM measurements m WHERE m.device_id = d.id),
			(SELECT count(*) FROM measurements m WHERE m.device_id = d.id AND m.status = 'oom'),
			(SELECT count(*) FROM steps s WHERE s.device_key = d.key)
		FROM devices d`)
	if err != nil {
		return nil, fmt.Errorf("count the cache's measurements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var c HoldingCounts
		if err := rows.Scan(&key, &c.Kernels, &c.OutOfMemory, &c.Steps); err != nil {
			return nil, fmt.Errorf("count the cache's measurements: %w", err)
		}
		out[key] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count the cache's measurements: %w", err)
	}
	return out, nil
}

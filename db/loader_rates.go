package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// LoaderRate is this computer's measured input-pipeline rate: what one worker of a
// loader (a PyTorch DataLoader: "pytorch") delivers of ImageNet-like JPEGs through the
// standard training transform, on its own core, as scripts/dataloader_rate.py measures
// it.
type LoaderRate struct {
	Loader     string    `json:"loader"`
	ImagesPerS float64   `json:"images_per_s_per_worker"`
	Workers    int       `json:"workers"` // the worker count of the measurement it comes from
	CPU        string    `json:"cpu,omitempty"`
	Host       string    `json:"host,omitempty"`
	MeasuredAt time.Time `json:"measured_at"`
	Source     string    `json:"source"` // the file it was imported from
}

// LoaderRateCSVColumns is the header of a loader-rate CSV (scripts/dataloader_rate.py
// --csv): one row per loader.
var LoaderRateCSVColumns = []string{"loader", "images_per_s_per_worker", "workers", "cpu", "host", "measured_at"}

// IsLoaderRateCSVHeader reports whether header is a loader-rate CSV's.
func IsLoaderRateCSVHeader(header []string) bool {
	if len(header) < 2 {
		return false
	}
	return strings.TrimSpace(strings.TrimPrefix(header[0], "\ufeff")) == "loader" && strings.TrimSpace(header[1]) == "images_per_s_per_worker"
}

// ParseLoaderRateCSV reads a loader-rate CSV named name. A row needs a loader, a
// positive rate below a million images/s, a positive worker count and measured_at in
// Unix seconds; a bad row is an error naming its line, and nothing is returned.
func ParseLoaderRateCSV(r io.Reader, name string) ([]LoaderRate, error) {
	s, err := openCSV(r, name)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s is empty: a loader-rate CSV starts with the header %s", name, strings.Join(LoaderRateCSVColumns, ","))
	}
	if err != nil {
		return nil, err
	}
	return readLoaderRates(s)
}

// readLoaderRates reads the rows of a loader-rate CSV stream.
func readLoaderRates(s *csvStream) ([]LoaderRate, error) {
	col := map[string]int{}
	for i, h := range s.header {
		col[h] = i
	}
	for _, c := range LoaderRateCSVColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: the header lacks column %q (want %s)", s.name, c, strings.Join(LoaderRateCSVColumns, ","))
		}
	}
	var out []LoaderRate
	for {
		rec, line, ok, err := s.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		lr := LoaderRate{Loader: strings.ToLower(get("loader")), CPU: get("cpu"), Host: get("host"), Source: "csv:" + s.name}
		rate, err1 := strconv.ParseFloat(get("images_per_s_per_worker"), 64)
		workers, err2 := strconv.Atoi(get("workers"))
		at, err3 := strconv.ParseInt(get("measured_at"), 10, 64)
		switch {
		case lr.Loader == "":
			return nil, fmt.Errorf("%s line %d: no loader named", s.name, line)
		case err1 != nil || !(rate > 0) || rate >= 1e6 || math.IsInf(rate, 0):
			return nil, fmt.Errorf("%s line %d, images_per_s_per_worker: %q is not a rate (a positive number of images/s)", s.name, line, get("images_per_s_per_worker"))
		case err2 != nil || workers <= 0:
			return nil, fmt.Errorf("%s line %d, workers: %q is not a positive whole number", s.name, line, get("workers"))
		case err3 != nil || at <= 0:
			return nil, fmt.Errorf("%s line %d, measured_at: %q is not a time in Unix seconds", s.name, line, get("measured_at"))
		}
		lr.ImagesPerS, lr.Workers, lr.MeasuredAt = rate, workers, time.Unix(at, 0).UTC()
		if err := checkMeasuredAt(lr.MeasuredAt); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", s.name, line, err)
		}
		out = append(out, lr)
	}
}

// ImportLoaderRateCSV merges a loader-rate CSV read from r, named name (see
// importLoaderRates).
func (d *DB) ImportLoaderRateCSV(ctx context.Context, r io.Reader, name string) (ImportReport, error) {
	s, err := openCSV(r, name)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s is empty", name)
		}
		return ImportReport{File: name, Kind: "loader-csv", Source: "csv:" + name}, fmt.Errorf("import %w; the cache was not changed", err)
	}
	return d.importLoaderRates(ctx, s)
}

// importLoaderRates merges the loader-rate CSV stream s: each row replaces the cache's
// rate of its loader when it was measured later (an earlier or equal one is kept, as a
// re-imported file is). All rows or none are written.
func (d *DB) importLoaderRates(ctx context.Context, s *csvStream) (ImportReport, error) {
	name := s.name
	rep := ImportReport{File: name, Kind: "loader-csv", Source: "csv:" + name}
	rates, err := readLoaderRates(s)
	if err != nil {
		return rep, fmt.Errorf("import %w; the cache was not changed", err)
	}
	err = d.write(ctx, "import "+name, func(tx *sql.Tx) error {
		for _, lr := range rates {
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT measured_at FROM loader_rates WHERE loader = ?`, lr.Loader).Scan(&at)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				rep.LoaderRates.Added++
			case err != nil:
				return err
			case at >= lr.MeasuredAt.Unix():
				rep.LoaderRates.Kept++
				continue
			default:
				rep.LoaderRates.Replaced++
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO loader_rates (loader, images_per_s, workers, cpu, host, measured_at, source)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, lr.Loader, lr.ImagesPerS, lr.Workers, lr.CPU, lr.Host, lr.MeasuredAt.Unix(), lr.Source); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import %s into %s: %w", name, d.path, err)
	}
	return rep, nil
}

// LoaderRates lists this computer's measured loader rates, by loader.
func (d *DB) LoaderRates(ctx context.Context) ([]LoaderRate, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT loader, images_per_s, workers, cpu, host, measured_at, source FROM loader_rates ORDER BY loader`)
	if err != nil {
		return nil, fmt.Errorf("list loader rates in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []LoaderRate
	for rows.Next() {
		var (
			lr LoaderRate
			at int64
		)
		if err := rows.Scan(&lr.Loader, &lr.ImagesPerS, &lr.Workers, &lr.CPU, &lr.Host, &at, &lr.Source); err != nil {
			return nil, fmt.Errorf("list loader rates in %s: %w", d.path, err)
		}
		lr.MeasuredAt = time.Unix(at, 0).UTC()
		out = append(out, lr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list loader rates in %s: %w", d.path, err)
	}
	return out, nil
}

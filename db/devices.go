package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"cnntime/predictor/measure"
)

const deviceColumns = `key, backend, name, uuid, gpu_id, compute_capability, sm_count, memory_bytes,
	clock_mhz, memory_clock_mhz, driver, cuda, cudnn, host`

// upsertDevice saves a device's description, replacing the one stored under its key;
// with where (an SQL condition on the stored row, e.g. "devices.name = ”") only a
// stored row that satisfies it is replaced.
const upsertDevice = `INSERT INTO devices (` + deviceColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (key) DO UPDATE SET backend = excluded.backend, name = excluded.name,
		uuid = excluded.uuid, gpu_id = excluded.gpu_id,
		compute_capability = excluded.compute_capability, sm_count = excluded.sm_count,
		memory_bytes = excluded.memory_bytes, clock_mhz = excluded.clock_mhz,
		memory_clock_mhz = excluded.memory_clock_mhz, driver = excluded.driver,
		cuda = excluded.cuda, cudnn = excluded.cudnn, host = excluded.host`

// deviceValues are a device's values in deviceColumns' order.
func deviceValues(dev measure.Device) []any {
	return []any{dev.Key, dev.Backend, dev.Name, dev.UUID, dev.GPUID, dev.ComputeCapability, dev.SMs,
		dev.MemoryBytes, dev.ClockMHz, dev.MemoryClockMHz, dev.Driver, dev.CUDA, dev.CuDNN, dev.Host}
}

// PutDevice adds a measured device or updates what is known of it (a new driver, say).
func (d *DB) PutDevice(ctx context.Context, dev measure.Device) error {
	if dev.Key == "" {
		return fmt.Errorf("save device %q: it has no key", dev.Name)
	}
	return d.write(ctx, "save device "+dev.Key, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, upsertDevice, deviceValues(dev)...)
		return err
	})
}

// Devices lists the cache's devices by key.
func (d *DB) Devices(ctx context.Context) ([]measure.Device, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list devices in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []measure.Device
	for rows.Next() {
		var v measure.Device
		if err := rows.Scan(&v.Key, &v.Backend, &v.Name, &v.UUID, &v.GPUID, &v.ComputeCapability, &v.SMs,
			&v.MemoryBytes, &v.ClockMHz, &v.MemoryClockMHz, &v.Driver, &v.CUDA, &v.CuDNN, &v.Host); err != nil {
			return nil, fmt.Errorf("list devices in %s: %w", d.path, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list devices in %s: %w", d.path, err)
	}
	return out, nil
}

// PutConfig records a layer configuration: its canonical key (cnn.Config.Key()) and a
// description of it (its JSON). Measurements refer to configurations by key.
func (d *DB) PutConfig(ctx context.Context, key, description string) error {
	if key == "" {
		return fmt.Errorf("save layer configuration: it has no key")
	}
	return d.write(ctx, "save layer configuration "+key, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO configs (key, description) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET description = excluded.description`, key, description)
		return err
	})
}

// Config is a layer configuration as the cache holds it.
type Config struct {
	Key         string `json:"key"`
	Description string `json:"description"` // JSON of the cnn.Config; "" when only the key is known
}

// Configs lists the cache's layer configurations by key.
func (d *DB) Configs(ctx context.Context) ([]Config, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT key, description FROM configs ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list layer configurations in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []Config
	for rows.Next() {
		var c Config
		if err := rows.Scan(&c.Key, &c.Description); err != nil {
			return nil, fmt.Errorf("list layer configurations in %s: %w", d.path, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list layer configurations in %s: %w", d.path, err)
	}
	return out, nil
}

// keyIDs finds (and where missing creates) the rows of devices or configs within one
// transaction, remembering the ids it has seen.
type keyIDs struct {
	tx      *sql.Tx
	table   string // "devices" or "configs"
	ids     map[string]int64
	lookup  *sql.Stmt
	creator *sql.Stmt
}

func newKeyIDs(ctx context.Context, tx *sql.Tx, table string) (*keyIDs, error) {
	lookup, err := tx.PrepareContext(ctx, `SELECT id FROM `+table+` WHERE key = ?`)
	if err != nil {
		return nil, err
	}
	insert := `INSERT INTO configs (key) VALUES (?)`
	if table == "devices" {
		insert = `INSERT INTO devices (key, backend, name) VALUES (?, ?, ?)`
	}
	creator, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		lookup.Close()
		return nil, err
	}
	return &keyIDs{tx: tx, table: table, ids: map[string]int64{}, lookup: lookup, creator: creator}, nil
}

func (k *keyIDs) close() {
	k.lookup.Close()
	k.creator.Close()
}

// id returns the row id of key, creating a row with only the key when there is none
// (a device row also gets its backend, the key's prefix before ':', and the key as name).
func (k *keyIDs) id(ctx context.Context, key string) (int64, error) {
	if id, ok := k.ids[key]; ok {
		return id, nil
	}
	if len(k.ids) >= 1<<16 { // a file of many keys: remember a bounded number
		clear(k.ids)
	}
	var id int64
	err := k.lookup.QueryRowContext(ctx, key).Scan(&id)
	if err == sql.ErrNoRows {
		args := []any{key}
		if k.table == "devices" {
			backend, _, _ := strings.Cut(key, ":")
			args = append(args, backend, key)
		}
		var res sql.Result
		if res, err = k.creator.ExecContext(ctx, args...); err == nil {
			id, err = res.LastInsertId()
		}
	}
	if err != nil {
		return 0, fmt.Errorf("find %s row %q: %w", k.table, key, err)
	}
	k.ids[key] = id
	return id, nil
}

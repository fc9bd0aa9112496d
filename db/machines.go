package db

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"cnntime/predictor/hw"
)

// UserMachines lists the machines the user defined, by id. Each comes back with User set.
func (d *DB) UserMachines(ctx context.Context) ([]hw.Machine, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT id, provider, instance, gpu_id, gpu_count, vcpus,
			memory_gib, region, price_usd_per_hour, price_source, notes, cpu_model, cpu_turbo_ghz
		FROM user_machines ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list user machines in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []hw.Machine
	for rows.Next() {
		m := hw.Machine{User: true}
		var cpuModel string
		var cpuGHz float64
		if err := rows.Scan(&m.ID, &m.Provider, &m.Instance, &m.GPUID, &m.GPUCount, &m.VCPUs,
			&m.MemoryGiB, &m.Region, &m.PriceUSDPerHour, &m.PriceSource, &m.Notes, &cpuModel, &cpuGHz); err != nil {
			return nil, fmt.Errorf("list user machines in %s: %w", d.path, err)
		}
		if cpuModel != "" {
			m.CPU = hw.UserCPU(cpuModel, cpuGHz)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list user machines in %s: %w", d.path, err)
	}
	return out, nil
}

// PutUserMachine adds or replaces a user-defined machine (by id). The catalog validates
// what a machine means; the cache refuses only what it cannot store sensibly.
func (d *DB) PutUserMachine(ctx context.Context, m hw.Machine) error {
	switch {
	case m.ID == "":
		return fmt.Errorf("save user machine %q: it has no id", m.Instance)
	case m.GPUCount < 0 || m.VCPUs < 0:
		return fmt.Errorf("save user machine %s: GPU count %d and vCPUs %d must not be negative", m.ID, m.GPUCount, m.VCPUs)
	case !validAmount(m.MemoryGiB) || !validAmount(m.PriceUSDPerHour):
		return fmt.Errorf("save user machine %s: memory %v GiB and price %v USD/h must be finite and not negative", m.ID, m.MemoryGiB, m.PriceUSDPerHour)
	case m.CPU != nil && (m.CPU.Model == "" || !validAmount(m.CPU.TurboGHz)):
		return fmt.Errorf("save user machine %s: its CPU needs a model name and a finite, not negative clock (%q, %v GHz)", m.ID, m.CPU.Model, m.CPU.TurboGHz)
	}
	var cpuModel string
	var cpuGHz float64
	if m.CPU != nil && !m.CPU.Assumed {
		cpuModel, cpuGHz = m.CPU.Model, m.CPU.TurboGHz
	}
	return d.write(ctx, "save user machine "+m.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO user_machines (id, provider, instance,
				gpu_id, gpu_count, vcpus, memory_gib, region, price_usd_per_hour, price_source, notes,
				cpu_model, cpu_turbo_ghz)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Provider, m.Instance, m.GPUID, m.GPUCount, m.VCPUs, m.MemoryGiB, m.Region,
			m.PriceUSDPerHour, m.PriceSource, m.Notes, cpuModel, cpuGHz)
		return err
	})
}

// RemoveUserMachine deletes a user-defined machine; it is an error (wrapping
// ErrNotFound) when there is none with that id.
func (d *DB) RemoveUserMachine(ctx context.Context, id string) error {
	return d.write(ctx, "remove user machine "+id, func(tx *sql.Tx) error {
		return deleteOne(ctx, tx, `DELETE FROM user_machines WHERE id = ?`, id,
			fmt.Sprintf("there is no user machine %q", id))
	})
}

// PriceOverrides maps machine ids to the user's price in USD per hour.
func (d *DB) PriceOverrides(ctx context.Context) (map[string]float64, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT machine_id, usd_per_hour FROM price_overrides`)
	if err != nil {
		return nil, fmt.Errorf("read price overrides in %s: %w", d.path, err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var id string
		var price float64
		if err := rows.Scan(&id, &price); err != nil {
			return nil, fmt.Errorf("read price overrides in %s: %w", d.path, err)
		}
		out[id] = price
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read price overrides in %s: %w", d.path, err)
	}
	return out, nil
}

// SetPriceOverride sets the user's price of a machine, in USD per hour (0 for a
// machine that costs nothing to run).
func (d *DB) SetPriceOverride(ctx context.Context, machineID string, usdPerHour float64) error {
	if machineID == "" {
		return fmt.Errorf("set a price override: no machine id given")
	}
	if !validAmount(usdPerHour) {
		return fmt.Errorf("set the price of %s: %v USD/h: must be a finite number, 0 or more", machineID, usdPerHour)
	}
	return d.write(ctx, "set the price of "+machineID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO price_overrides (machine_id, usd_per_hour, set_at)
			VALUES (?, ?, ?)`, machineID, usdPerHour, time.Now().UnixNano())
		return err
	})
}

// ClearPriceOverride goes back to the catalog's price of a machine; it is an error
// (wrapping ErrNotFound) when its price was not overridden.
func (d *DB) ClearPriceOverride(ctx context.Context, machineID string) error {
	return d.write(ctx, "clear the price override of "+machineID, func(tx *sql.Tx) error {
		return deleteOne(ctx, tx, `DELETE FROM price_overrides WHERE machine_id = ?`, machineID,
			fmt.Sprintf("the price of %q is not overridden", machineID))
	})
}

// deleteOne runs a DELETE of one row and reports missing when it deleted none.
func deleteOne(ctx context.Context, tx *sql.Tx, query, key, missing string) error {
	res, err := tx.ExecContext(ctx, query, key)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", missing, ErrNotFound)
	}
	return nil
}

func validAmount(x float64) bool { return x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

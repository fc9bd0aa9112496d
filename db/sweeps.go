package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Sweep states.
const (
	SweepRunning   = "running"
	SweepPaused    = "paused"
	SweepDone      = "done"
	SweepCancelled = "cancelled"
	SweepFailed    = "failed"
)

var sweepStates = []string{SweepRunning, SweepPaused, SweepDone, SweepCancelled, SweepFailed}

// Sweep is one measuring run on a device: its plan, state and progress.
type Sweep struct {
	ID        int64     `json:"id"`
	DeviceKey string    `json:"device"`
	Plan      string    `json:"plan"` // the plan as JSON, for resuming
	State     string    `json:"state"`
	Total     int       `json:"total"` // kernels (or steps) planned
	Done      int       `json:"done"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// CreateSweep records a new running sweep of total items and returns its id.
func (d *DB) CreateSweep(ctx context.Context, deviceKey, planJSON string, total int) (int64, error) {
	if deviceKey == "" {
		return 0, fmt.Errorf("record a sweep: it has no device")
	}
	if total < 0 {
		return 0, fmt.Errorf("record a sweep of %s: %d planned items: must not be negative", deviceKey, total)
	}
	var id int64
	now := time.Now().UnixNano()
	err := d.write(ctx, "record a sweep of "+deviceKey, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO sweeps (device_key, plan, state, total, done, created_at, updated_at)
			VALUES (?, ?, ?, ?, 0, ?, ?)`, deviceKey, planJSON, SweepRunning, total, now, now)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err == nil {
		d.removeStaleSweepLocks()
		d.holdSweep(id)
	}
	return id, err
}

// UpdateSweep sets a sweep's state (running, paused, done, cancelled or failed) and how
// many of its items are done.
func (d *DB) UpdateSweep(ctx context.Context, id int64, state string, done int) error {
	if !isSweepState(state) {
		return fmt.Errorf("update sweep %d: unknown state %q: use running, paused, done, cancelled or failed", id, state)
	}
	if done < 0 {
		return fmt.Errorf("update sweep %d: %d items done: must not be negative", id, done)
	}
	err := d.write(ctx, fmt.Sprintf("update sweep %d", id), func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT total FROM sweeps WHERE id = ?`, id).Scan(&total); err == sql.ErrNoRows {
			return fmt.Errorf("no sweep %d in the cache: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if done > total {
			return fmt.Errorf("%d items done of %d planned: more than planned", done, total)
		}
		_, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = ?, done = ?, updated_at = ? WHERE id = ?`,
			state, done, time.Now().UnixNano(), id)
		return err
	})
	if err == nil { // a running sweep is held by this process; one that stopped by nobody
		if state == SweepRunning {
			d.holdSweep(id)
		} else {
			d.releaseSweep(id)
		}
	}
	return err
}

func isSweepState(s string) bool {
	for _, v := range sweepStates {
		if s == v {
			return true
		}
	}
	return false
}

// Sweeps lists the recorded sweeps, newest first. A sweep recorded as running that no
// live process holds comes back as SweepInterrupted.
func (d *DB) Sweeps(ctx context.Context) ([]Sweep, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT id, device_key, plan, state, total, done, created_at, updated_at
		FROM sweeps ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list sweeps in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []Sweep
	for rows.Next() {
		var s Sweep
		var created, updated int64
		if err := rows.Scan(&s.ID, &s.DeviceKey, &s.Plan, &s.State, &s.Total, &s.Done, &created, &updated); err != nil {
			return nil, fmt.Errorf("list sweeps in %s: %w", d.path, err)
		}
		s.Created, s.Updated = fromUnixNanos(created), fromUnixNanos(updated)
		if s.State == SweepRunning && !d.sweepHeld(s.ID) {
			s.State = SweepInterrupted
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sweeps in %s: %w", d.path, err)
	}
	return out, nil
}

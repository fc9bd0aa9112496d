package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// PID is the process running a running sweep, where its lock file says.
	PID int `json:"pid,omitempty"`
	// Note says why a sweep ended when the cache could not record it ("the disk
	// holding the cache was full"): its state is read from its lock file.
	Note string `json:"note,omitempty"`
}

// SweepRunningError is a sweep refused because another live process is running a
// sweep on the same device: the two would spoil each other's timings (and, of the
// same plan, measure the same items).
type SweepRunningError struct {
	Running  Sweep
	SamePlan bool // the running sweep's plan is the refused one's
}

func (e *SweepRunningError) Error() string {
	who := "another process"
	stop := "stop it where it runs (Ctrl+C in its terminal, or Cancel in the window's Benchmark tab)"
	if e.Running.PID > 0 {
		who = fmt.Sprintf("process %d", e.Running.PID)
		stop = fmt.Sprintf("stop it where it runs (Ctrl+C in its terminal, Cancel in the window's Benchmark tab, or kill %d)", e.Running.PID)
	}
	plan := "of the same plan"
	if !e.SamePlan {
		plan = "of another plan"
		if p := describePlan(e.Running.Plan); p != "" {
			plan += " (" + p + ")"
		}
	}
	return fmt.Sprintf("sweep %d, %s on %s, is running in %s (since %s): two sweeps on one device spoil each other's timings; wait for it to finish, or %s, then run this again",
		e.Running.ID, plan, e.Running.DeviceKey, who, e.Running.Created.Local().Format("2006-01-02 15:04:05"), stop)
}

// describePlan says what a sweep's plan (the sweep request as JSON) measures, "resnet18,
// vgg16 at 32 batch sizes from 1 to 64, fp32", as far as it says; "" when it says none
// of it.
func describePlan(planJSON string) string {
	var p struct {
		Models    []string `json:"models"`
		Batches   []int    `json:"batches"`
		Precision string   `json:"precision"`
	}
	if json.Unmarshal([]byte(planJSON), &p) != nil {
		return ""
	}
	var parts []string
	if len(p.Models) > 0 {
		models := p.Models
		if len(models) > 4 {
			models = append(append([]string{}, models[:3]...), fmt.Sprintf("%d more", len(p.Models)-3))
		}
		parts = append(parts, strings.Join(models, ", "))
	}
	switch n := len(p.Batches); {
	case n == 1:
		parts = append(parts, fmt.Sprintf("at batch %d", p.Batches[0]))
	case n > 1:
		parts = append(parts, fmt.Sprintf("at %d batch sizes from %d to %d", n, slices.Min(p.Batches), slices.Max(p.Batches)))
	}
	text := strings.Join(parts, " ")
	if p.Precision != "" && text != "" {
		text += ", " + p.Precision
	}
	return text
}

// CreateSweep records a new running sweep of total items, held by this DB, and returns
// its id. It refuses (SweepRunningError) while a live process runs a sweep on the same
// device, of this plan or another: one sweep at a time measures a device. The end of an earlier sweep that the cache could not record
// (see UpdateSweep) is recorded first.
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
		running, err := d.runningSweeps(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range running {
			switch h := d.sweepHeld(s.ID); {
			case h.held && s.DeviceKey == deviceKey:
				s.PID = h.pid
				return &SweepRunningError{Running: s, SamePlan: s.Plan == planJSON}
			case !h.held && h.state != "":
				if _, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = ? WHERE id = ?`, h.state, s.ID); err != nil {
					return err
				}
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO sweeps (device_key, plan, state, total, done, created_at, updated_at)
			VALUES (?, ?, ?, ?, 0, ?, ?)`, deviceKey, planJSON, SweepRunning, total, now, now)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		// Held before the commit: a sweep that reads this one as running sees it held.
		d.holdSweep(id)
		return nil
	})
	if err == nil {
		d.removeStaleSweepLocks() // their ends, if any, are in the cache now
	}
	var running *SweepRunningError
	if errors.As(err, &running) {
		return 0, running
	}
	if err != nil && id != 0 {
		d.releaseSweep(id)
	}
	return id, err
}

// runningSweeps are the sweeps recorded as running, oldest first.
func (d *DB) runningSweeps(ctx context.Context, tx *sql.Tx) ([]Sweep, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, device_key, plan, created_at FROM sweeps WHERE state = ? ORDER BY id`, SweepRunning)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sweep
	for rows.Next() {
		s := Sweep{State: SweepRunning}
		var created int64
		if err := rows.Scan(&s.ID, &s.DeviceKey, &s.Plan, &created); err != nil {
			return nil, err
		}
		s.Created = fromUnixNanos(created)
		out = append(out, s)
	}
	return out, rows.Err()
}

// UpdateSweep sets a sweep's state (running, paused, done, cancelled or failed) and how
// many of its items are done. A sweep done closes the interrupted sweeps of the same
// plan on the same device (recorded as running, held by no process): it continued them,
// measuring what they left, so they are done too. When the disk is too full for the
// cache to record an end, the end is written into the sweep's lock file instead, and
// Sweeps reports it from there; the error is returned all the same.
func (d *DB) UpdateSweep(ctx context.Context, id int64, state string, done int) error {
	if !isSweepState(state) {
		return fmt.Errorf("update sweep %d: unknown state %q: use running, paused, done, cancelled or failed", id, state)
	}
	if done < 0 {
		return fmt.Errorf("update sweep %d: %d items done: must not be negative", id, done)
	}
	err := d.write(ctx, fmt.Sprintf("update sweep %d", id), func(tx *sql.Tx) error {
		var total int
		var device, plan string
		if err := tx.QueryRowContext(ctx, `SELECT total, device_key, plan FROM sweeps WHERE id = ?`, id).Scan(&total, &device, &plan); err == sql.ErrNoRows {
			return fmt.Errorf("no sweep %d in the cache: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if done > total {
			return fmt.Errorf("%d items done of %d planned: more than planned", done, total)
		}
		now := time.Now().UnixNano()
		if _, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = ?, done = ?, updated_at = ? WHERE id = ?`,
			state, done, now, id); err != nil {
			return err
		}
		if state != SweepDone {
			return nil
		}
		running, err := d.runningSweeps(ctx, tx)
		if err != nil {
			return err
		}
		for _, s := range running {
			if s.ID != id && s.DeviceKey == device && s.Plan == plan && !d.sweepHeld(s.ID).held {
				if _, err := tx.ExecContext(ctx, `UPDATE sweeps SET state = ?, updated_at = ? WHERE id = ?`, SweepDone, now, s.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	switch {
	case err == nil && state == SweepRunning: // a running sweep is held by this process
		d.holdSweep(id)
	case err == nil:
		d.releaseSweep(id)
	case state != SweepRunning && IsDiskFull(err):
		d.leaveSweepEnd(id, state, "the disk holding the cache was full")
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
// live process holds comes back as SweepInterrupted, or as the end its lock file
// records (with a Note saying why the cache could not); a running one says its
// process (PID).
func (d *DB) Sweeps(ctx context.Context) ([]Sweep, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT id, device_key, plan, state, total, done, created_at, updated_at
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
		if s.State == SweepRunning {
			switch h := d.sweepHeld(s.ID); {
			case h.held:
				s.PID = h.pid
			case h.state != "":
				s.State, s.Note = h.state, h.why
			default:
				s.State = SweepInterrupted
			}
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sweeps in %s: %w", d.path, err)
	}
	return out, nil
}

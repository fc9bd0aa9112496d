package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"cnntime/predictor/measure"
)

// StepFilter chooses whole-step measurements; an empty field matches every value.
type StepFilter struct {
	DeviceKey string
	Model     string
	Precision measure.Precision
	Framework string
	Source    string
}

func (f StepFilter) where() (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ column, value string }{
		{"device_key", f.DeviceKey}, {"model", f.Model}, {"precision", string(f.Precision)},
		{"framework", f.Framework}, {"source", f.Source},
	} {
		if c.value != "" {
			conds = append(conds, c.column+" = ?")
			args = append(args, c.value)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func validateStep(s measure.Step) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if _, err := measure.ParsePrecision(string(s.Precision)); err != nil {
		return fmt.Errorf("step measurement of %s: %w", s.Model, err)
	}
	if s.MedianMS < 0 || s.SpreadMS < 0 {
		return fmt.Errorf("step measurement of %s at batch %d has a negative time", s.Model, s.Batch)
	}
	if err := checkMeasuredAt(s.At); err != nil {
		return fmt.Errorf("step measurement of %s at batch %d: %w", s.Model, s.Batch, err)
	}
	return nil
}

// PutSteps saves whole-step measurements in one transaction, all or none. A step
// replaces the cache's one of the same device, model, batch, precision, framework and
// source only when it was measured later; one measured at the same time or earlier
// leaves the cache's as it is. Steps from different sources are kept side by side.
func (d *DB) PutSteps(ctx context.Context, steps []measure.Step) error {
	for i, s := range steps {
		if err := validateStep(s); err != nil {
			return fmt.Errorf("save step measurements: step %d of %d: %w; nothing was saved", i+1, len(steps), err)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	return d.write(ctx, fmt.Sprintf("save %d step measurements", len(steps)), func(tx *sql.Tx) error {
		_, err := putSteps(ctx, tx, steps)
		return err
	})
}

// putSteps saves steps in tx, each replacing the row of its key only when measured
// later, and returns how many rows it added or replaced.
func putSteps(ctx context.Context, tx *sql.Tx, steps []measure.Step) (changed int, err error) {
	insert, err := tx.PrepareContext(ctx, upsertStep)
	if err != nil {
		return 0, err
	}
	defer insert.Close()
	for _, s := range steps {
		res, err := insert.ExecContext(ctx, s.DeviceKey, s.Model, s.Batch, string(s.Precision),
			s.Framework, s.Source, s.MedianMS, s.SpreadMS, string(s.Status), unixNanos(s.At))
		if err != nil {
			return changed, fmt.Errorf("save step of %s at batch %d: %w", s.Model, s.Batch, err)
		}
		n, _ := res.RowsAffected() // 0 when the cache's row is as new: the update's WHERE held it back
		changed += int(n)
	}
	return changed, nil
}

// upsertStep adds a step, or replaces the row of its key when the step was measured
// later than it, or the row's time lies in the future (storedInFuture): the rule a
// cache import and a kernel CSV import follow too.
var upsertStep = `INSERT INTO steps (device_key, model, batch, precision,
		framework, source, median_ms, spread_ms, status, at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (device_key, model, batch, precision, framework, source) DO UPDATE SET
		median_ms = excluded.median_ms, spread_ms = excluded.spread_ms,
		status = excluded.status, at = excluded.at
	WHERE excluded.at > steps.at OR ` + storedInFuture("steps.at")

// Steps returns the whole-step measurements f chooses, ordered by device, model,
// precision, framework, source and batch.
func (d *DB) Steps(ctx context.Context, f StepFilter) ([]measure.Step, error) {
	where, args := f.where()
	rows, err := d.sqldb().QueryContext(ctx, `SELECT device_key, model, batch, precision, framework,
			source, median_ms, spread_ms, status, at FROM steps`+where+`
		ORDER BY device_key, model, precision, framework, source, batch`, args...)
	if err != nil {
		return nil, fmt.Errorf("read step measurements from %s: %w", d.path, err)
	}
	defer rows.Close()
	out, err := scanSteps(rows)
	if err != nil {
		return nil, fmt.Errorf("read step measurements from %s: %w", d.path, err)
	}
	return out, nil
}

// scanSteps reads rows of device_key, model, batch, precision, framework, source,
// median_ms, spread_ms, status, at.
func scanSteps(rows *sql.Rows) ([]measure.Step, error) {
	var out []measure.Step
	for rows.Next() {
		var s measure.Step
		var at int64
		if err := rows.Scan(&s.DeviceKey, &s.Model, &s.Batch, &s.Precision, &s.Framework,
			&s.Source, &s.MedianMS, &s.SpreadMS, &s.Status, &at); err != nil {
			return nil, err
		}
		s.At = fromUnixNanos(at)
		out = append(out, s)
	}
	return out, rows.Err()
}

// jsonStrings encodes keys as a JSON array, for json_each in a query.
func jsonStrings(keys []string) string {
	b, _ := json.Marshal(keys) // a []string always marshals
	return string(b)
}

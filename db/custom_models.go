package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// CustomModel is one of the user's own CNNs: its name and the model file's JSON as the
// user wrote it (cnn.ParseCustom's format). The cache stores the text; parsing and
// checking the layers is the caller's job.
type CustomModel struct {
	Name    string    `json:"name"`
	JSON    []byte    `json:"json"`
	AddedAt time.Time `json:"added_at"`
}

// PutCustomModel saves a custom model's file under its name. A model of that name
// already saved gets the new text and keeps its place in the order.
func (d *DB) PutCustomModel(ctx context.Context, name string, data []byte) error {
	switch {
	case name == "":
		return fmt.Errorf("save custom model: it has no name (give it a \"name\" in the file)")
	case len(data) == 0 || !json.Valid(data):
		return fmt.Errorf("save custom model %s: its file is not valid JSON; check it with 'cnntime model FILE.json'", name)
	}
	return d.write(ctx, "save custom model "+name, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO custom_models (name, json, added_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET json = excluded.json`,
			name, string(data), time.Now().UnixNano())
		return err
	})
}

// CustomModels lists the saved custom models in the order they were first saved.
func (d *DB) CustomModels(ctx context.Context) ([]CustomModel, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT name, json, added_at FROM custom_models ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list custom models in %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []CustomModel
	for rows.Next() {
		var (
			m    CustomModel
			text string
			at   int64
		)
		if err := rows.Scan(&m.Name, &text, &at); err != nil {
			return nil, fmt.Errorf("list custom models in %s: %w", d.path, err)
		}
		m.JSON, m.AddedAt = []byte(text), time.Unix(0, at).UTC()
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list custom models in %s: %w", d.path, err)
	}
	return out, nil
}

// RemoveCustomModel deletes a saved custom model; it is an error (wrapping ErrNotFound)
// when there is none of that name.
func (d *DB) RemoveCustomModel(ctx context.Context, name string) error {
	return d.write(ctx, "remove custom model "+name, func(tx *sql.Tx) error {
		return deleteOne(ctx, tx, `DELETE FROM custom_models WHERE name = ?`, name,
			fmt.Sprintf("there is no custom model %q", name))
	})
}

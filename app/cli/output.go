package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes v as indented JSON followed by a newline: the stable --json form.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

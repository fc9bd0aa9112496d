package skypilotschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

//go:embed task.schema.json
var taskSchema []byte

// Schema is SkyPilot's task schema, compiled.
type Schema struct{ s *jsonschema.Schema }

// Compile compiles the embedded task schema.
func Compile() (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(taskSchema))
	if err != nil {
		return nil, fmt.Errorf("read SkyPilot's task schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("skypilot-task.json", doc); err != nil {
		return nil, fmt.Errorf("load SkyPilot's task schema: %w", err)
	}
	s, err := c.Compile("skypilot-task.json")
	if err != nil {
		return nil, fmt.Errorf("compile SkyPilot's task schema: %w", err)
	}
	return &Schema{s}, nil
}

// Check reads a task's YAML as the JSON values SkyPilot's validator sees and says what
// of it SkyPilot's schema refuses; nil when the schema takes it.
func (s *Schema) Check(task []byte) error {
	var v any
	if err := yaml.Unmarshal(task, &v); err != nil {
		return fmt.Errorf("the task is not YAML: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("the task's YAML holds what JSON cannot: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.s.Validate(doc)
}

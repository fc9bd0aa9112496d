// Package skypilotschema checks a SkyPilot task file against SkyPilot's own task
// schema (task.schema.json: sky/utils/schemas.py written out as one JSON Schema; its
// README says where it comes from and how to refresh it). The tests of the packages
// that write tasks (app/launch, app) validate every task they write with it.
//
// Imports: github.com/santhosh-tekuri/jsonschema/v6 and gopkg.in/yaml.v3; nothing of
// cnntime's.
package skypilotschema

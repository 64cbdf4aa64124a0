package tools

import (
	"context"
	"testing"
)

// TestBuiltinSchemas generates the schemas of every built-in tool, core (in each edit
// format) and deferred: Must leaves that to first use, so this is where a schema that cannot
// be generated shows up.
func TestBuiltinSchemas(t *testing.T) {
	var all []Tool
	for _, f := range []EditFormat{EditLines, EditText, EditPatch} {
		all = append(all, Core(f)...)
	}
	all = append(all, Deferred()...)
	for _, tl := range all {
		if tl.InputSchema() == nil || tl.OutputSchema() == nil {
			t.Errorf("%s: no schema", tl.Name())
		}
	}
}

type badInput struct {
	C chan int `json:"c"`
}

// TestSchemaErrors: New refuses a tool whose schema cannot be generated; Must accepts it and
// panics when the schema is first asked for, naming the tool.
func TestSchemaErrors(t *testing.T) {
	spec := Spec[badInput, PlanResult]{Name: "bad", Call: func(context.Context, *Env, badInput) (PlanResult, error) { return PlanResult{}, nil }}
	if _, err := New(spec); err == nil {
		t.Fatal("New accepted an input with a channel field")
	}
	tl := Must(spec)
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("InputSchema of a bad tool did not panic")
		}
	}()
	tl.InputSchema()
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/safety"
)

// Tool is one tool of the registry: a name, a description, the JSON schemas of its input
// and output (generated from Go structs), whether it only reads, whether it is deferred
// (not sent by default; found through tool search), and its call.
type Tool interface {
	// Name is the tool's wire name ("read_file").
	Name() string
	// Description is what a model is shown about the tool.
	Description() string
	// Summary is one line for tool search results.
	Summary() string
	// ReadOnly reports whether the tool never changes the workspace or runs a command.
	ReadOnly() bool
	// Deferred reports whether the tool is left out of the default tool list and loaded
	// through tool search.
	Deferred() bool
	// InputSchema and OutputSchema are the JSON schemas (draft 2020-12) of the tool's
	// arguments and structured result.
	InputSchema() *jsonschema.Schema
	OutputSchema() *jsonschema.Schema
	// Call decodes args strictly (an unknown field is refused) and runs the tool. A refusal
	// the model should read is an *Error.
	Call(ctx context.Context, env *Env, args json.RawMessage) (any, error)
}

// Spec defines a tool from typed Go functions; New turns it into a Tool. In and Out must be
// struct types: their JSON schemas are generated from their fields, `json` tags and
// `jsonschema` descriptions.
type Spec[In, Out any] struct {
	Name        string
	Description string
	Summary     string
	ReadOnly    bool
	Deferred    bool
	// Input, when set, replaces the schema generated from In (apply_patch shows the schema
	// of the configured edit format while accepting every form).
	Input *jsonschema.Schema
	// Decode, when set, replaces the strict JSON decoding of the arguments into In.
	Decode func(args json.RawMessage) (In, error)
	Call   func(ctx context.Context, env *Env, in In) (Out, error)
}

type tool[In, Out any] struct {
	spec      Spec[In, Out]
	summaryOr string

	schemas sync.Once // generates in and out
	in, out *jsonschema.Schema
	err     error
}

// New returns the Tool that spec defines. It returns an error when the name is empty, Call
// is nil or a schema cannot be generated from In or Out.
func New[In, Out any](spec Spec[In, Out]) (Tool, error) {
	t, err := newTool(spec)
	if err != nil {
		return nil, err
	}
	if err := t.loadSchemas(); err != nil {
		return nil, err
	}
	return t, nil
}

func newTool[In, Out any](spec Spec[In, Out]) (*tool[In, Out], error) {
	if spec.Name == "" || spec.Call == nil {
		return nil, errors.New("tools.New: a tool needs a name and a Call")
	}
	t := &tool[In, Out]{spec: spec}
	t.summaryOr = spec.Summary
	if t.summaryOr == "" {
		t.summaryOr = firstSentence(spec.Description)
	}
	return t, nil
}

// loadSchemas generates the input and output schemas once and returns the error of that
// one generation.
func (t *tool[In, Out]) loadSchemas() error {
	t.schemas.Do(func() {
		t.in = t.spec.Input
		if t.in == nil {
			if t.in, t.err = schemaFor[In](); t.err != nil {
				t.err = fmt.Errorf("tool %s: input schema: %w", t.spec.Name, t.err)
				return
			}
		}
		if t.out, t.err = schemaFor[Out](); t.err != nil {
			t.err = fmt.Errorf("tool %s: output schema: %w", t.spec.Name, t.err)
		}
	})
	return t.err
}

// mustSchemas is loadSchemas for a tool made by Must: a schema that cannot be generated is
// a programming error (TestBuiltinSchemas generates every built-in tool's).
func (t *tool[In, Out]) mustSchemas() {
	if err := t.loadSchemas(); err != nil {
		panic(err)
	}
}

// typeSchemas are the schemas of types whose JSON form is not what their Go kind says
// (they marshal themselves as text).
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[safety.Decision]():    {Type: "string", Enum: []any{"allow", "ask", "deny"}},
	reflect.TypeFor[json.RawMessage]():    {Description: "any JSON value"}, // raw JSON, not the []byte it is in Go
	reflect.TypeFor[patch.NullableText](): {Types: []string{"string", "null"}},
}

// schemaFor returns the JSON schema of T's JSON encoding.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	return jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
}

// Must is New that panics on error, for the built-in tool list (a programming error). It
// generates the schemas on first use, not when called: the built-in tools are package
// variables, and generating their schemas at package initialisation cost every s-code
// process about 2 million instructions, `s-code version` and `s-code run` included.
func Must[In, Out any](spec Spec[In, Out]) Tool {
	t, err := newTool(spec)
	if err != nil {
		panic(err)
	}
	return t
}

func (t *tool[In, Out]) Name() string                     { return t.spec.Name }
func (t *tool[In, Out]) Description() string              { return t.spec.Description }
func (t *tool[In, Out]) Summary() string                  { return t.summaryOr }
func (t *tool[In, Out]) ReadOnly() bool                   { return t.spec.ReadOnly }
func (t *tool[In, Out]) Deferred() bool                   { return t.spec.Deferred }
func (t *tool[In, Out]) InputSchema() *jsonschema.Schema  { t.mustSchemas(); return t.in }
func (t *tool[In, Out]) OutputSchema() *jsonschema.Schema { t.mustSchemas(); return t.out }

func (t *tool[In, Out]) Call(ctx context.Context, env *Env, args json.RawMessage) (any, error) {
	var in In
	var err error
	if t.spec.Decode != nil {
		in, err = t.spec.Decode(args)
	} else {
		err = DecodeStrict(args, &in)
	}
	if err != nil {
		return nil, err
	}
	out, err := t.spec.Call(ctx, env, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeStrict decodes the JSON object args into v, refusing unknown fields and trailing
// data; empty args or null decode as {}. Errors are *Error with code "invalid_arguments".
func DecodeStrict(args json.RawMessage, v any) error {
	b := bytes.TrimSpace(args)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{Code: "invalid_arguments", Message: fmt.Sprintf("arguments: %v", err)}
	}
	if dec.More() {
		return &Error{Code: "invalid_arguments", Message: "arguments: data after the JSON object"}
	}
	return nil
}

// Error is a refusal or failure written for the model: a stable code, a message that says
// what to do instead, and optional details (e.g. a patch batch's applied files).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Rule    string `json:"rule,omitempty"` // rule id, when a rule refused
	Detail  any    `json:"detail,omitempty"`
	Err     error  `json:"-"` // the cause, for errors.Is and errors.As
}

// Error returns the message, prefixed by the code.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Registry holds tools by name. It is safe for concurrent use.
type Registry struct {
	mu    sync.Mutex // guards tools
	tools map[string]Tool
}

// NewRegistry returns a registry holding tools, or an error naming a duplicate.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ErrDuplicate is wrapped by Register's refusal of a second tool of one name.
var ErrDuplicate = errors.New("tool already registered")

// Register adds t. A second tool of the same name is refused (ErrDuplicate): a tool is
// replaced only by Override, said explicitly.
func (r *Registry) Register(t Tool) error {
	if t == nil || reflect.ValueOf(t).IsNil() {
		return errors.New("register: nil tool")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name()]; ok {
		return fmt.Errorf("register %q: %w", t.Name(), ErrDuplicate)
	}
	r.tools[t.Name()] = t
	return nil
}

// Override adds t, replacing a tool of the same name.
func (r *Registry) Override(t Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools[t.Name()] = t
}

// Lookup returns the tool named name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool, sorted by name.
func (r *Registry) List() []Tool {
	r.mu.Lock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// ReadOnlyTools returns a registry holding only the read-only tools of r (what Code Mode
// is given).
func (r *Registry) ReadOnlyTools() *Registry {
	n := &Registry{tools: map[string]Tool{}}
	for _, t := range r.List() {
		if t.ReadOnly() {
			n.tools[t.Name()] = t
		}
	}
	return n
}

// firstSentence returns s up to its first ". " or newline.
func firstSentence(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || (s[i] == '.' && (i+1 == len(s) || s[i+1] == ' ')) {
			return s[:i]
		}
	}
	return s
}

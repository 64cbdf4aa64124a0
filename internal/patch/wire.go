package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The wire format of apply_patch: Go types that encoding/json decodes with unknown fields
// refused, and that tools generate the JSON schemas a model is shown from. Decode checks a
// request against these types first (walk: a json.Decoder.Token pass that names the exact
// place of a repeated field, an unknown field or a value of the wrong type), then decodes
// it with json.Decoder.DisallowUnknownFields, then checks the rules between fields.

// Envelope is the batch form: {"files": [...]}.
type Envelope struct {
	Files []EnvelopeFile `json:"files" jsonschema:"the files to change, each listed once"`
}

// EnvelopeFile is one file of an Envelope: its path, the revision it must have, and either
// edits or its whole new content.
type EnvelopeFile struct {
	Path             string       `json:"path" jsonschema:"file path relative to the workspace root"`
	ExpectedRevision NullableText `json:"expected_revision" jsonschema:"the revision read_file returned, or null for a file that must not exist yet"`
	Edits            []Edit       `json:"edits,omitempty" jsonschema:"edits of one kind (line edits or exact text edits), all against the file as read"`
	Content          *string      `json:"content,omitempty" jsonschema:"the whole new content instead of edits (new files, CRLF files, files without a final newline)"`
}

// Edit is one edit of a file: a line edit (start_line, end_line, new_text) or an exact text
// edit (old_text, new_text). The fields of the other kind must be absent.
type Edit struct {
	StartLine *int    `json:"start_line,omitempty" jsonschema:"first line replaced, 1-based, as numbered by read_file"`
	EndLine   *int    `json:"end_line,omitempty" jsonschema:"last line replaced, inclusive; start_line-1 inserts before start_line"`
	OldText   *string `json:"old_text,omitempty" jsonschema:"text that occurs exactly once in the file, copied exactly (no line-number prefixes)"`
	NewText   *string `json:"new_text" jsonschema:"the replacement, without read_file's line-number prefixes"`
}

// PatchText is the patch-text form: {"patch": "*** Begin Patch...", "revisions": {...}}.
type PatchText struct {
	Patch     string             `json:"patch" jsonschema:"*** Begin Patch / *** Add File: PATH (+ lines) / *** Update File: PATH (bare @@ hunks of ' ', '-', '+' lines) / *** End Patch"`
	Revisions map[string]*string `json:"revisions" jsonschema:"every path of the patch mapped to its revision from read_file, or null for a file the patch adds"`
}

// Legacy is the single-file form of earlier releases: an EnvelopeFile at the top level,
// which may give the full expected_sha256 instead of (or with) expected_revision.
type Legacy struct {
	Path             string       `json:"path"`
	ExpectedRevision NullableText `json:"expected_revision"`
	ExpectedSHA256   string       `json:"expected_sha256,omitempty"`
	Edits            []Edit       `json:"edits,omitempty"`
	Content          *string      `json:"content,omitempty"`
}

// NullableText is a string field where absent, null and a string mean three things
// (expected_revision: absent is refused, null is a new file). Its JSON form is a string or
// null.
type NullableText struct {
	Set   bool    // the field was in the request
	Value *string // nil for null
}

// UnmarshalJSON implements json.Unmarshaler (encoding/json calls it for null too).
func (n *NullableText) UnmarshalJSON(b []byte) error {
	n.Set, n.Value = true, nil
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n.Value = &s
	return nil
}

// MarshalJSON implements json.Marshaler: the string, or null.
func (n NullableText) MarshalJSON() ([]byte, error) {
	if n.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*n.Value)
}

var nullableTextType = reflect.TypeFor[NullableText]()

// decodeWire checks data against the type of v (walk), then decodes it into v with
// json.Decoder.DisallowUnknownFields. data is one valid JSON value (json.Valid).
func decodeWire(data []byte, v any) error {
	w := walker{b: data}
	if _, err := w.walk(skipSpace(data, 0), reflect.TypeOf(v).Elem(), false); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// walk refuses everything Decode refuses; this is the backstop.
		return errf(ErrMalformed, "request", "", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errf(ErrMalformed, "request", "", "data after the request object")
	}
	return nil
}

// child names member k of the value at where ("request" is the whole request).
func child(where, k string) string {
	if where == "request" {
		return k
	}
	return where + "." + k
}

// walker checks a request, valid JSON already, against the wire types with the scanners of
// scan.go (one pass, no value decoded but keys and integers), keeping the path of the
// current value (object keys and array indexes) so that a refusal names its exact place;
// the path becomes a string only for a refusal.
type walker struct {
	b    []byte
	path []step
}

// step is one element of a path: an object key, or an array index when key is "".
type step struct {
	key   string
	index int
}

// where renders the path as the messages name places: "files[0].edits[2]", "request" for
// the whole request.
func (w *walker) where() string {
	var b strings.Builder
	for _, s := range w.path {
		if s.key == "" {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	if b.Len() == 0 {
		return "request"
	}
	return b.String()
}

func (w *walker) fail(sentinel error, format string, args ...any) error {
	return errf(sentinel, w.where(), "", format, args...)
}

// walk checks the JSON value at w.b[i] against t and returns the offset after it: objects
// against struct fields (each once, none unknown), maps (each key once), arrays, strings,
// integers, and null only where the type gives it a meaning (NullableText; map values that
// are pointers: nullOK).
func (w *walker) walk(i int, t reflect.Type, nullOK bool) (int, error) {
	b := w.b
	if i >= len(b) {
		return i, w.fail(ErrMalformed, "invalid JSON: unexpected end")
	}
	c := b[i]
	if t == nullableTextType {
		switch c {
		case '"':
			return skipString(b, i), nil
		case 'n':
			return i + 4, nil
		}
		return i, w.fail(ErrMalformed, "must be a string or null")
	}
	if t.Kind() == reflect.Pointer {
		if c == 'n' && nullOK {
			return i + 4, nil
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		if c != '"' {
			return i, w.fail(ErrMalformed, "must be a string")
		}
		return skipString(b, i), nil
	case reflect.Int:
		end := skipValue(b, i)
		lit := b[i:end]
		v, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil || v > 1<<31 || v < -(1<<31) {
			return i, w.fail(ErrMalformed, "must be an integer, not %s", literal(lit))
		}
		return end, nil
	case reflect.Slice:
		if c != '[' {
			return i, w.fail(ErrMalformed, "must be an array")
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		w.path = append(w.path, step{})
		for n := 0; ; n++ {
			w.path[len(w.path)-1].index = n
			var err error
			if i, err = w.walk(i, t.Elem(), false); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ',' {
				break
			}
			i = skipSpace(b, i+1)
		}
		w.path = w.path[:len(w.path)-1]
		return i + 1, nil // ']'
	case reflect.Map, reflect.Struct:
		if c != '{' {
			return i, w.fail(ErrMalformed, "must be a JSON object")
		}
		var names []string
		var seenField uint64 // bit k: struct field k was given (wire structs have fewer than 64)
		var seenKey map[string]bool
		if t.Kind() == reflect.Struct {
			names = wireFields(t)
		} else {
			seenKey = map[string]bool{}
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			end := skipString(b, i)
			k, err := decodeString(b[i:end])
			if err != nil {
				return i, w.fail(ErrMalformed, "invalid JSON: %v", err)
			}
			var ft reflect.Type
			null := true
			if names != nil {
				f := slices.Index(names, k)
				if f < 0 {
					return i, w.fail(ErrUnknownField, "unknown field %q (allowed: %s)", k, strings.Join(names, ", "))
				}
				if seenField&(1<<f) != 0 {
					return i, w.fail(ErrDuplicateField, "field %q appears twice", k)
				}
				seenField |= 1 << f
				ft, null = t.Field(f).Type, false
			} else {
				if seenKey[k] {
					return i, w.fail(ErrDuplicateField, "field %q appears twice", k)
				}
				seenKey[k] = true
				ft = t.Elem()
			}
			i = skipSpace(b, end)
			i = skipSpace(b, i+1) // ':'
			w.path = append(w.path, step{key: k})
			if i, err = w.walk(i, ft, null); err != nil {
				return i, err
			}
			w.path = w.path[:len(w.path)-1]
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ',' {
				break
			}
			i = skipSpace(b, i+1)
		}
		return i + 1, nil // '}'
	}
	return i, w.fail(ErrMalformed, "has no wire type %s", t)
}

// literal shows a JSON value in a message: numbers, true, false and null as written,
// strings quoted, objects and arrays by kind.
func literal(lit []byte) string {
	switch {
	case len(lit) == 0:
		return "nothing"
	case lit[0] == '{':
		return "an object"
	case lit[0] == '[':
		return "an array"
	case len(lit) > 40:
		return string(lit[:40]) + "…"
	}
	return string(lit)
}

var fieldNames sync.Map // reflect.Type -> []string

// wireFields returns the JSON names of t's fields, in field order.
func wireFields(t reflect.Type) []string {
	if v, ok := fieldNames.Load(t); ok {
		return v.([]string)
	}
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = t.Field(i).Name
		}
		out = append(out, name)
	}
	fieldNames.Store(t, out)
	return out
}

package patch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const rev = "0123456789abcdef"

func TestDecodeForms(t *testing.T) {
	tests := []struct {
		name  string
		req   string
		form  Form
		check func(t *testing.T, r *Request)
	}{
		{"envelope line edits", `{"files":[{"path":"a.go","expected_revision":"` + rev + `","edits":[{"start_line":2,"end_line":3,"new_text":"x\n"}]}]}`, FormEnvelope,
			func(t *testing.T, r *Request) {
				if got := r.Files[0].LineEdits; len(got) != 1 || got[0] != (LineEdit{2, 3, "x\n"}) {
					t.Errorf("line edits = %+v", got)
				}
			}},
		{"envelope text edits", `{"files":[{"path":"a.go","expected_revision":"` + rev + `","edits":[{"old_text":"a","new_text":"b"},{"old_text":"c","new_text":""}]}]}`, FormEnvelope,
			func(t *testing.T, r *Request) {
				if got := r.Files[0].TextEdits; len(got) != 2 || got[1] != (TextEdit{"c", ""}) {
					t.Errorf("text edits = %+v", got)
				}
			}},
		{"envelope new file", `{"files":[{"path":"n.go","expected_revision":null,"content":"package n\n"}]}`, FormEnvelope,
			func(t *testing.T, r *Request) {
				if f := r.Files[0]; !f.New || f.Content == nil || *f.Content != "package n\n" {
					t.Errorf("file = %+v", f)
				}
			}},
		{"legacy with revision", `{"path":"a.go","expected_revision":"` + rev + `","content":"x"}`, FormLegacy,
			func(t *testing.T, r *Request) {
				if f := r.Files[0]; f.Revision != rev || f.SHA256 != "" {
					t.Errorf("file = %+v", f)
				}
			}},
		{"legacy with sha256 only", `{"path":"a.go","expected_sha256":"` + rev + strings.Repeat("0", 48) + `","edits":[{"old_text":"a","new_text":"b"}]}`, FormLegacy,
			func(t *testing.T, r *Request) {
				if f := r.Files[0]; f.SHA256 == "" || f.Revision != "" {
					t.Errorf("file = %+v", f)
				}
			}},
		{"patch add and update", `{"patch":"*** Begin Patch\n*** Add File: n.txt\n+hello\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n","revisions":{"n.txt":null,"a.txt":"` + rev + `"}}`, FormPatch,
			func(t *testing.T, r *Request) {
				if len(r.Files) != 2 || !r.Files[0].New || *r.Files[0].Content != "hello\n" {
					t.Fatalf("files = %+v", r.Files)
				}
				if h := r.Files[1].Hunks; len(h) != 1 || h[0].Old != "one\ntwo\n" || h[0].New != "one\nTWO\n" || r.Files[1].Revision != rev {
					t.Errorf("update = %+v", r.Files[1])
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decode([]byte(tc.req))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if r.Form != tc.form {
				t.Errorf("form = %s, want %s", r.Form, tc.form)
			}
			tc.check(t, r)
		})
	}
}

func TestDecodeRefusals(t *testing.T) {
	file := func(extra string) string {
		return `{"files":[{"path":"a.go","expected_revision":"` + rev + `",` + extra + `}]}`
	}
	many := make([]string, MaxPaths+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"path":"f%d","expected_revision":null,"content":""}`, i)
	}
	edits := make([]string, MaxEdits+1)
	for i := range edits {
		edits[i] = fmt.Sprintf(`{"old_text":"x%d","new_text":"y"}`, i)
	}
	tests := []struct {
		name string
		req  string
		want error
		msg  string // a word the message must carry (the field or the cause)
	}{
		{"not json", `{"files":`, ErrMalformed, "invalid JSON"},
		{"trailing data", `{"path":"a","expected_revision":null,"content":""} {}`, ErrMalformed, "after top-level value"},
		{"array at top", `[]`, ErrMalformed, "object"},
		{"no form", `{"x":1}`, ErrMalformed, "needs"},
		{"unknown envelope field", `{"files":[],"turn":"t"}`, ErrUnknownField, `"turn"`},
		{"unknown file field", file(`"content":"x","mode":"0755"`), ErrUnknownField, `"mode"`},
		{"unknown line edit field", file(`"edits":[{"start_line":1,"end_line":1,"new_text":"x","why":"y"}]`), ErrUnknownField, `"why"`},
		{"unknown text edit field", file(`"edits":[{"old_text":"a","new_text":"b","replace_all":true}]`), ErrUnknownField, `"replace_all"`},
		{"unknown legacy field", `{"path":"a","expected_revision":null,"content":"","bogus":1}`, ErrUnknownField, `"bogus"`},
		{"unknown patch field", `{"patch":"x","revisions":{},"strip":1}`, ErrUnknownField, `"strip"`},
		{"sha256 in envelope file", file(`"content":"x","expected_sha256":"` + strings.Repeat("0", 64) + `"`), ErrUnknownField, `"expected_sha256"`},
		{"unknown edit kind", file(`"edits":[{"find":"a"}]`), ErrUnknownField, `"find"`},
		{"duplicate field", `{"path":"a","path":"b","expected_revision":null,"content":""}`, ErrDuplicateField, `"path"`},
		{"missing revision", `{"files":[{"path":"a","content":""}]}`, ErrMalformed, "expected_revision"},
		{"bad revision", file(`"content":""`)[:0] + `{"files":[{"path":"a","expected_revision":"XYZ","content":""}]}`, ErrMalformed, "not a revision"},
		{"revision wrong type", `{"files":[{"path":"a","expected_revision":5,"content":""}]}`, ErrMalformed, "string or null"},
		{"sha256 disagrees", `{"path":"a","expected_revision":"` + rev + `","expected_sha256":"` + strings.Repeat("f", 64) + `","content":""}`, ErrMalformed, "disagrees"},
		{"edits and content", file(`"content":"","edits":[]`), ErrMalformed, "both"},
		{"neither edits nor content", file(`"path2":1`)[:0] + `{"files":[{"path":"a","expected_revision":null}]}`, ErrMalformed, "needs edits or content"},
		{"new file with edits", `{"files":[{"path":"a","expected_revision":null,"edits":[{"old_text":"a","new_text":"b"}]}]}`, ErrMalformed, "takes content"},
		{"empty edits", file(`"edits":[]`), ErrMalformed, "empty"},
		{"line number as string", file(`"edits":[{"start_line":"1","end_line":1,"new_text":""}]`), ErrMalformed, "integer"},
		{"line number fractional", file(`"edits":[{"start_line":1.5,"end_line":1,"new_text":""}]`), ErrMalformed, "integer"},
		{"missing new_text", file(`"edits":[{"start_line":1,"end_line":1}]`), ErrMalformed, "new_text"},
		{"empty old_text", file(`"edits":[{"old_text":"","new_text":"b"}]`), ErrMalformed, "empty"},
		{"noop text edit", file(`"edits":[{"old_text":"a","new_text":"a"}]`), ErrNoop, "equal"},
		{"mixed text then line", file(`"edits":[{"old_text":"a","new_text":"b"},{"start_line":1,"end_line":1,"new_text":""}]`), ErrMixedEdits, "line edit"},
		{"mixed line then text", file(`"edits":[{"start_line":1,"end_line":1,"new_text":""},{"old_text":"a","new_text":"b"}]`), ErrMixedEdits, "text edit"},
		{"line zero", file(`"edits":[{"start_line":0,"end_line":1,"new_text":""}]`), ErrLineRange, "from 1"},
		{"end before start", file(`"edits":[{"start_line":5,"end_line":3,"new_text":""}]`), ErrLineRange, "before"},
		{"overlap", file(`"edits":[{"start_line":1,"end_line":3,"new_text":""},{"start_line":3,"end_line":4,"new_text":""}]`), ErrOverlap, "overlap"},
		{"two inserts at one point", file(`"edits":[{"start_line":2,"end_line":1,"new_text":"a"},{"start_line":2,"end_line":1,"new_text":"b"}]`), ErrOverlap, "overlap"},
		{"numbered new_text", file(`"edits":[{"start_line":3,"end_line":4,"new_text":"     3\tfoo\n     4\tbar\n"}]`), ErrNumberedText, "line-number"},
		{"duplicate path", `{"files":[{"path":"a","expected_revision":null,"content":""},{"path":"a","expected_revision":null,"content":""}]}`, ErrDuplicatePath, "files[0]"},
		{"too many paths", `{"files":[` + strings.Join(many, ",") + `]}`, ErrLimit, "32"},
		{"too many edits", file(`"edits":[` + strings.Join(edits, ",") + `]`), ErrLimit, "100"},
		{"request too large", `{"path":"a","expected_revision":null,"content":"` + strings.Repeat("x", MaxBytes) + `"}`, ErrLimit, "bytes"},
		{"patch without revisions", `{"patch":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}`, ErrMalformed, "revisions"},
		{"patch revision missing for a file", `{"patch":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch","revisions":{}}`, ErrMalformed, "missing"},
		{"patch add with revision", `{"patch":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch","revisions":{"a":"` + rev + `"}}`, ErrMalformed, "null"},
		{"patch update with null", `{"patch":"*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch","revisions":{"a":null}}`, ErrMalformed, "not null"},
		{"unknown field names its place", file(`"edits":[{"old_text":"a","new_text":"b"},{"old_text":"c","new_text":"d","why":1}]`), ErrUnknownField, `files[0].edits[1]: unknown field "why"`},
		{"wrong type names its place", file(`"edits":[{"start_line":1,"end_line":true,"new_text":""}]`), ErrMalformed, `files[0].edits[0].end_line: must be an integer, not true`},
		{"duplicate in an edit names its place", file(`"edits":[{"old_text":"a","old_text":"c","new_text":"b"}]`), ErrDuplicateField, `files[0].edits[0]: field "old_text" appears twice`},
		{"duplicate revision key", `{"patch":"x","revisions":{"a":null,"a":null}}`, ErrDuplicateField, `revisions: field "a" appears twice`},
		{"null content", file(`"content":null`), ErrMalformed, `files[0].content: must be a string`},
		{"null edits", file(`"edits":null`), ErrMalformed, `files[0].edits: must be an array`},
		{"text and line fields in one edit", file(`"edits":[{"old_text":"a","start_line":1,"new_text":"b"}]`), ErrMalformed, "a line edit start_line"},
		{"patch extra revision", `{"patch":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch","revisions":{"a":null,"b":null}}`, ErrMalformed, "not a file of the patch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decode([]byte(tc.req))
			if err == nil {
				t.Fatalf("Decode accepted it: %+v", r)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not *Error", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not name %q", err, tc.msg)
			}
		})
	}
}

func TestNumberedPrefixes(t *testing.T) {
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"read_file output", "     1\tpackage a\n     2\t\n", true},
		{"wide numbers", "1000000\tx\n1000001\ty\n", true},
		{"plain code", "func f() {}\n", false},
		{"tsv with non-consecutive numbers", "     1\ta\n     5\tb\n", false},
		{"tsv with narrow numbers", "1\ta\n2\tb\n", false},
		{"one line of mixed", "     1\tx\nplain\n", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := numberedPrefixes(tc.text); got != tc.want {
				t.Errorf("numberedPrefixes(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

package patch

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics and that whatever it accepts applies or
// refuses cleanly.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"files":[{"path":"a","expected_revision":"0123456789abcdef","edits":[{"start_line":1,"end_line":1,"new_text":"x"}]}]}`,
		`{"files":[{"path":"a","expected_revision":null,"content":"x"}]}`,
		`{"path":"a","expected_revision":"0123456789abcdef","edits":[{"old_text":"a","new_text":"b"}]}`,
		`{"patch":"*** Begin Patch\n*** Update File: a\n@@\n a\n-b\n+c\n*** End Patch\n","revisions":{"a":"0123456789abcdef"}}`,
		`{"patch":"*** Begin Patch\n*** Add File: a\n+b\n*** End Patch\n","revisions":{"a":null}}`,
	} {
		f.Add(s, "a\nb\nc\n")
	}
	f.Fuzz(func(t *testing.T, req, orig string) {
		r, err := Decode([]byte(req))
		if err != nil {
			// The walk over the wire types must refuse whatever encoding/json refuses (with
			// the place named), so the decoder's own error is never what a model sees.
			if strings.HasPrefix(err.Error(), "request: json:") {
				t.Fatalf("walk accepted what encoding/json refused: %v", err)
			}
			return
		}
		for i := range r.Files {
			r.Files[i].Apply([]byte(orig))
		}
	})
}

// FuzzDecodeString checks the fast string decoder against encoding/json.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\nb"`, `"\u00e9\t"`, `"\\\"/"`, "\"\xff\"", `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		got, err := decodeString([]byte(lit))
		if werr != nil {
			return // Decode validates the whole request first; invalid literals never get here
		}
		if err != nil || got != want {
			t.Fatalf("decodeString(%q) = %q, %v; encoding/json says %q", lit, got, err, want)
		}
	})
}

// FuzzParsePatch checks that ParsePatch never panics and that what it accepts keeps the
// subset's promises: Add files have content, Update files have anchored, changing hunks.
func FuzzParsePatch(f *testing.F) {
	w := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	for _, s := range []string{
		w("*** Update File: a\n@@\n a\n-b\n+c\n"),
		w("*** Add File: a\n+x\n+\n"),
		w("*** Update File: a\n@@ -1,2 +1,2 @@\n-a\n+b\n"),
		w("*** Delete File: a\n"),
		w("*** Update File: a\n*** Move to: b\n@@\n-a\n+b\n"),
		w("*** Update File: a\n@@\n-a\n+b\n*** End of File\n"),
		w("*** Update File: a\n@@\n-a\n\n+b\n"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		files, err := ParsePatch(text)
		if err != nil {
			return
		}
		for _, fl := range files {
			if fl.New != (fl.Content != nil) {
				t.Fatalf("%s: New %v but content %v", fl.Path, fl.New, fl.Content != nil)
			}
			for _, h := range fl.Hunks {
				if h.Old == "" || h.Old == h.New {
					t.Fatalf("%s: hunk at line %d is unanchored or changes nothing", fl.Path, h.Line)
				}
			}
		}
	})
}

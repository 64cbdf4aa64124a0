package patch

import (
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
			return
		}
		for i := range r.Files {
			r.Files[i].Apply([]byte(orig))
		}
	})
}

package patch

import (
	"errors"
	"strings"
	"testing"
)

func TestApplyLines(t *testing.T) {
	const orig = "one\ntwo\nthree\nfour\n"
	tests := []struct {
		name  string
		orig  string
		edits []LineEdit
		want  string
	}{
		{"replace one line", orig, []LineEdit{{2, 2, "TWO\n"}}, "one\nTWO\nthree\nfour\n"},
		{"newline added", orig, []LineEdit{{2, 2, "TWO"}}, "one\nTWO\nthree\nfour\n"},
		{"delete range", orig, []LineEdit{{2, 3, ""}}, "one\nfour\n"},
		{"insert before", orig, []LineEdit{{1, 0, "zero"}}, "zero\none\ntwo\nthree\nfour\n"},
		{"append at end", orig, []LineEdit{{5, 4, "five\n"}}, orig + "five\n"},
		{"append after a last line without newline", "a\nb", []LineEdit{{3, 2, "c"}}, "a\nb\nc"},
		{"replace last line without newline", "a\nb", []LineEdit{{2, 2, "B"}}, "a\nB"},
		{"several against the original numbering", orig, []LineEdit{{4, 4, "FOUR\n"}, {1, 1, "ONE\nONE-B\n"}}, "ONE\nONE-B\ntwo\nthree\nFOUR\n"},
		{"crlf kept", "a\r\nb\r\n", []LineEdit{{1, 1, "A"}}, "A\r\nb\r\n"},
		{"empty file insert", "", []LineEdit{{1, 0, "x\n"}}, "x\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Path: "f", LineEdits: tc.edits}
			got, err := f.Apply([]byte(tc.orig))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApplyText(t *testing.T) {
	tests := []struct {
		name  string
		orig  string
		edits []TextEdit
		want  string
	}{
		{"single", "a b c", []TextEdit{{"b", "B"}}, "a B c"},
		{"in order, later sees earlier", "x = 1\n", []TextEdit{{"x = 1", "y = 1"}, {"y = 1", "y = 2"}}, "y = 2\n"},
		{"delete", "keep\ndrop\n", []TextEdit{{"drop\n", ""}}, "keep\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Path: "f", TextEdits: tc.edits}
			got, err := f.Apply([]byte(tc.orig))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApplyRefusals(t *testing.T) {
	tests := []struct {
		name string
		orig string
		file File
		want error
	}{
		{"line past end", "a\n", File{LineEdits: []LineEdit{{2, 2, "x"}}}, ErrLineRange},
		{"insert past end", "a\n", File{LineEdits: []LineEdit{{3, 2, "x"}}}, ErrLineRange},
		{"text no match", "abc", File{TextEdits: []TextEdit{{"zzz", "y"}}}, ErrNoMatch},
		{"text crlf hint", "a\r\nb\r\n", File{TextEdits: []TextEdit{{"a\nb", "y"}}}, ErrNoMatch},
		{"text fuzzy", "\tif x {\n\t\treturn\n\t}\n", File{TextEdits: []TextEdit{{"if x {\n  return\n}\n", "y"}}}, ErrFuzzy},
		{"text ambiguous", "x x", File{TextEdits: []TextEdit{{"x", "y"}}}, ErrAmbiguous},
		{"text ambiguous overlapping", "aaa", File{TextEdits: []TextEdit{{"aa", "b"}}}, ErrAmbiguous},
		{"text no match after earlier edit", "a b", File{TextEdits: []TextEdit{{"a", "c"}, {"a", "d"}}}, ErrNoMatch},
		{"hunk no match", "a\nb\n", File{Hunks: []Hunk{{Old: "c\n", New: "d\n"}}}, ErrNoMatch},
		{"hunk fuzzy", "a  \nb\n", File{Hunks: []Hunk{{Old: "a\n", New: "x\n"}}}, ErrFuzzy},
		{"hunk ambiguous", "a\nb\na\n", File{Hunks: []Hunk{{Old: "a\n", New: "x\n"}}}, ErrAmbiguous},
		{"hunk partial line", "xa\nb\n", File{Hunks: []Hunk{{Old: "a\n", New: "x\n"}}}, ErrNoMatch},
		{"hunks out of order", "a\nb\nc\n", File{Hunks: []Hunk{{Old: "c\n", New: "C\n"}, {Old: "a\n", New: "A\n"}}}, ErrHunkOrder},
		{"update without trailing newline", "a\nb", File{Hunks: []Hunk{{Old: "a\n", New: "x\n"}}}, ErrNeedsContent},
		{"update of crlf", "a\r\nb\r\n", File{Hunks: []Hunk{{Old: "a\r\n", New: "x\r\n"}}}, ErrNeedsContent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.file.Path = "f"
			got, err := tc.file.Apply([]byte(tc.orig))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Apply = %q, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParsePatch(t *testing.T) {
	ok := "*** Begin Patch\n*** Update File: a.go\n@@\n func f() {\n-\treturn 1\n+\treturn 2\n }\n@@\n x\n+y\n*** Add File: b/c.txt\n+line 1\n+\n*** End Patch\n"
	files, err := ParsePatch(ok)
	if err != nil {
		t.Fatalf("ParsePatch: %v", err)
	}
	if len(files) != 2 || len(files[0].Hunks) != 2 || files[1].Path != "b/c.txt" || *files[1].Content != "line 1\n\n" {
		t.Fatalf("files = %+v", files)
	}
	got, err := files[0].Apply([]byte("package a\nfunc f() {\n\treturn 1\n}\nx\nz\n"))
	if err != nil || string(got) != "package a\nfunc f() {\n\treturn 2\n}\nx\ny\nz\n" {
		t.Fatalf("Apply = %q, %v", got, err)
	}

	wrap := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	tests := []struct {
		name string
		text string
		want error
	}{
		{"no begin", "*** Update File: a\n@@\n-a\n+b\n*** End Patch\n", ErrPatchSyntax},
		{"no end", "*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\n", ErrPatchSyntax},
		{"numbered hunk header", wrap("*** Update File: a\n@@ -1,2 +1,2 @@\n-a\n+b\n"), ErrHunkHeader},
		{"named hunk header", wrap("*** Update File: a\n@@ func main() {\n-a\n+b\n"), ErrHunkHeader},
		{"delete", wrap("*** Delete File: a\n"), ErrDeleteFile},
		{"move", wrap("*** Update File: a\n*** Move to: b\n@@\n-a\n+b\n"), ErrMoveFile},
		{"end of file", wrap("*** Update File: a\n@@\n-a\n+b\n*** End of File\n"), ErrEndOfFile},
		{"unknown directive", wrap("*** Rename File: a\n"), ErrPatchSyntax},
		{"hunk without @@", wrap("*** Update File: a\n-a\n+b\n"), ErrPatchSyntax},
		{"update without hunks", wrap("*** Update File: a\n"), ErrPatchSyntax},
		{"bad hunk line", wrap("*** Update File: a\n@@\n-a\n+b\n?c\n"), ErrPatchSyntax},
		{"empty hunk line", wrap("*** Update File: a\n@@\n-a\n\n+b\n"), ErrPatchSyntax},
		{"add with context line", wrap("*** Add File: a\n+x\n y\n"), ErrPatchSyntax},
		{"hunk without anchor", wrap("*** Update File: a\n@@\n+b\n"), ErrPatchSyntax},
		{"hunk changing nothing", wrap("*** Update File: a\n@@\n a\n"), ErrNoop},
		{"hunk removing and adding the same line", wrap("*** Update File: a\n@@\n-x\n+x\n"), ErrNoop},
		{"same file twice", wrap("*** Update File: a\n@@\n-a\n+b\n*** Update File: a\n@@\n-c\n+d\n"), ErrDuplicatePath},
		{"empty patch", wrap(""), ErrPatchSyntax},
		{"text before a header", wrap("+x\n"), ErrPatchSyntax},
		{"too many hunks", wrap("*** Update File: a\n" + strings.Repeat("@@\n-a\n+b\n", MaxEdits+1)), ErrLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := ParsePatch(tc.text)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParsePatch = %+v, %v; want %v", files, err, tc.want)
			}
		})
	}
}

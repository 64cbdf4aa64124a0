package patch

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is; every refusal is an *Error wrapping one.
var (
	// ErrMalformed: the request is not valid JSON, has a value of the wrong type, lacks a
	// required field or combines fields that exclude each other.
	ErrMalformed = errors.New("malformed request")
	// ErrUnknownField: an object of the request carries a field this format does not define.
	ErrUnknownField = errors.New("unknown field")
	// ErrDuplicateField: an object of the request names the same field twice (parsers
	// disagree on which value wins, so neither is taken).
	ErrDuplicateField = errors.New("duplicate field")
	// ErrLimit: a request over MaxPaths paths, MaxEdits edits in a file or MaxBytes bytes.
	ErrLimit = errors.New("limit exceeded")
	// ErrDuplicatePath: the same path twice in one batch.
	ErrDuplicatePath = errors.New("path listed twice")
	// ErrMixedEdits: line edits and exact text edits in one file.
	ErrMixedEdits = errors.New("line and text edits mixed in one file")
	// ErrLineRange: a line edit outside the file or with end_line < start_line-1.
	ErrLineRange = errors.New("line range out of bounds")
	// ErrOverlap: two line edits of one file cover the same lines (or insert at one point).
	ErrOverlap = errors.New("overlapping line edits")
	// ErrNumberedText: new_text carries read_file's line-number prefixes.
	ErrNumberedText = errors.New("new_text carries line-number prefixes")
	// ErrNoMatch: an old_text or hunk matches nowhere.
	ErrNoMatch = errors.New("no exact match")
	// ErrFuzzy: an old_text or hunk matches only when whitespace is ignored; fuzzy matches
	// are refused.
	ErrFuzzy = errors.New("only a fuzzy match")
	// ErrAmbiguous: an old_text or hunk matches more than once.
	ErrAmbiguous = errors.New("ambiguous match")
	// ErrHunkOrder: a hunk matches before the previous hunk's change.
	ErrHunkOrder = errors.New("hunks out of order")
	// ErrPatchSyntax: a line of a "*** Begin Patch" text outside the strict subset.
	ErrPatchSyntax = errors.New("patch syntax")
	// ErrHunkHeader: a numbered ("@@ -1,3 +1,4 @@") or named ("@@ def f") hunk header; only
	// a bare "@@" is accepted.
	ErrHunkHeader = errors.New("hunk header must be a bare @@")
	// ErrDeleteFile: "*** Delete File:" is not part of the accepted subset.
	ErrDeleteFile = errors.New("delete is not supported")
	// ErrMoveFile: "*** Move to:" is not part of the accepted subset.
	ErrMoveFile = errors.New("move is not supported")
	// ErrEndOfFile: "*** End of File" is not part of the accepted subset.
	ErrEndOfFile = errors.New("end-of-file marker is not supported")
	// ErrNeedsContent: an Update of a file without a trailing newline or with CRLF line
	// endings; the whole content must be replaced instead.
	ErrNeedsContent = errors.New("file must be replaced as whole content")
	// ErrNoop: a hunk or edit that changes nothing.
	ErrNoop = errors.New("edit changes nothing")
)

// Error is one refusal: where in the request it is (e.g. "files[1].edits[3]"), the path it
// concerns, and a message meant to tell a model what to send instead.
type Error struct {
	Where string // location in the request; empty for the request as a whole
	Path  string // the file path concerned, when known
	Msg   string
	Err   error // one of the sentinels above
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Path != "" {
		s = fmt.Sprintf("%s: %s", e.Path, s)
	}
	if e.Where != "" {
		s = fmt.Sprintf("%s: %s", e.Where, s)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errf(sentinel error, where, path, format string, args ...any) *Error {
	return &Error{Where: where, Path: path, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

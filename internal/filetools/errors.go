package filetools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Sentinel errors of a batch, matched with errors.Is.
var (
	// ErrStale: a file's current revision is not the expected one (or a file expected new
	// exists, or a file expected to exist does not).
	ErrStale = errors.New("stale revision")
	// ErrHardLink: two paths of one batch are the same existing file (same device and inode).
	ErrHardLink = errors.New("hard-link alias")
	// ErrCaseAlias: two paths of one batch differ only in letter case and would name one file
	// on a case-insensitive volume (always refused for new files).
	ErrCaseAlias = errors.New("case alias")
	// ErrWrite: a write failed after preflight; BatchError lists what was applied.
	ErrWrite = errors.New("write failed")
	// ErrNotUndone: undo left a file alone (changed since the turn) or failed on it.
	ErrNotUndone = errors.New("not every file of the turn was undone")
)

// BatchError is an apply_patch failure: a stable code, the cause, and, when writes had
// begun, the paths already applied and the one that failed (later paths were not tried).
type BatchError struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Applied []Applied `json:"applied"`
	Failed  string    `json:"failed,omitempty"`
	// Written reports that the failed path's new content was renamed into place (only its
	// directory fsync failed): it is listed in Applied too, and undo covers it.
	Written bool `json:"written,omitempty"`
	// Unconfirmed lists the applied paths whose directory fsync failed: written, but
	// maybe not durable.
	Unconfirmed []string `json:"unconfirmed,omitempty"`
	Err         error    `json:"-"`
}

func (e *BatchError) Error() string {
	if e.Failed == "" {
		return e.Message
	}
	var ap []string
	for _, a := range e.Applied {
		ap = append(ap, a.Path)
	}
	return fmt.Sprintf("%s (applied: [%s]; failed: %s; later files not attempted)", e.Message, strings.Join(ap, ", "), e.Failed)
}

func (e *BatchError) Unwrap() error { return e.Err }

// codes maps sentinels to the stable codes of BatchError (and the CLI's JSON), first match
// wins.
var codes = []struct {
	err  error
	code string
}{
	{patch.ErrUnknownField, "unknown_field"},
	{patch.ErrDuplicateField, "duplicate_field"},
	{patch.ErrMalformed, "malformed"},
	{patch.ErrLimit, "limit"},
	{patch.ErrDuplicatePath, "duplicate_path"},
	{patch.ErrMixedEdits, "mixed_edits"},
	{patch.ErrLineRange, "line_range"},
	{patch.ErrOverlap, "overlap"},
	{patch.ErrNumberedText, "numbered_text"},
	{patch.ErrNoMatch, "no_match"},
	{patch.ErrFuzzy, "fuzzy_match"},
	{patch.ErrAmbiguous, "ambiguous_match"},
	{patch.ErrHunkOrder, "hunk_order"},
	{patch.ErrHunkHeader, "hunk_header"},
	{patch.ErrDeleteFile, "delete_unsupported"},
	{patch.ErrMoveFile, "move_unsupported"},
	{patch.ErrEndOfFile, "end_of_file_unsupported"},
	{patch.ErrPatchSyntax, "patch_syntax"},
	{patch.ErrNeedsContent, "needs_content"},
	{patch.ErrNoop, "noop"},
	{wsfs.ErrSymlink, "symlink"},
	{wsfs.ErrEscape, "outside_workspace"},
	{wsfs.ErrProtected, "protected_path"},
	{wsfs.ErrInvalidPath, "invalid_path"},
	{wsfs.ErrNotRegular, "not_regular_file"},
	{wsfs.ErrTooLarge, "too_large"},
	{wsfs.ErrNotExist, "not_found"},
	{ErrStale, "stale_revision"},
	{ErrHardLink, "hard_link_alias"},
	{ErrCaseAlias, "case_alias"},
	{ErrBinary, "binary"},
	{ErrOffset, "offset"},
	{turns.ErrNoTurn, "no_turn"},
	{turns.ErrInvalidID, "invalid_turn"},
	{ErrNotUndone, "not_undone"},
}

// StaleError is the refusal of a batch whose file does not exist but was given a revision
// (Missing), or exists but was expected new (ExpectedNew, Current its revision). It wraps
// ErrStale; callers use the fields to say what to do in the form the request used.
type StaleError struct {
	Path        string
	Current     string // the existing file's revision, with ExpectedNew
	Missing     bool
	ExpectedNew bool
	msg         string
}

// Error returns the refusal with what to do in the envelope form.
func (e *StaleError) Error() string { return e.msg + ": " + ErrStale.Error() }

// Unwrap returns ErrStale.
func (e *StaleError) Unwrap() error { return ErrStale }

// Code returns the stable code of err ("unknown_field", "stale_revision", "symlink", …),
// "durability_unconfirmed" for a write whose directory sync failed, "workspace_refused" for a
// workspace workspace.Validate refuses, "write_failed" for any
// other write error, or "error".
func Code(err error) string {
	var be *BatchError
	if errors.As(err, &be) && be.Code != "" {
		return be.Code
	}
	var de *wsfs.DurabilityError
	if errors.As(err, &de) {
		return "durability_unconfirmed"
	}
	var we *workspace.Error
	if errors.As(err, &we) {
		return "workspace_refused" // we.Rule names the rule, in the message
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	if errors.Is(err, ErrWrite) {
		return "write_failed"
	}
	return "error"
}

// Malformed reports whether err is the caller's malformed input (bad JSON, unknown or
// repeated fields, a request over the size limit) rather than a refused change.
func Malformed(err error) bool {
	return errors.Is(err, patch.ErrMalformed) || errors.Is(err, patch.ErrUnknownField) ||
		errors.Is(err, patch.ErrDuplicateField) || errors.Is(err, turns.ErrInvalidID)
}

// refusalRules maps the codes of a batch target's refusal (CheckWritable) to the rule ids of
// an edit plan's deny findings (the helper's plans, docs/dispatch.md).
var refusalRules = map[string]string{
	"protected_path":    "write.protected",
	"outside_workspace": "write.outside-workspace",
	"symlink":           "write.symlink",
	"invalid_path":      "edit.invalid-path",
}

// RuleOfCode returns the plan rule id of a target refusal code ("edit.refused" for a code
// without its own rule).
func RuleOfCode(code string) string {
	if r, ok := refusalRules[code]; ok {
		return r
	}
	return "edit.refused"
}

// CodeOfRule returns the error code (as --json and the tools print it) of a plan rule id:
// the inverse of RuleOfCode, "no_turn" for undo.no-turn, "workspace_refused" for a
// workspace.* rule, else "refused".
func CodeOfRule(rule string) string {
	for c, r := range refusalRules {
		if r == rule {
			return c
		}
	}
	switch {
	case rule == "undo.no-turn":
		return "no_turn"
	case strings.HasPrefix(rule, "workspace."):
		return "workspace_refused"
	}
	return "refused"
}

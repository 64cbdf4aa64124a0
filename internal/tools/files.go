package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/turns"
)

// ReadFileInput is read_file's arguments.
type ReadFileInput struct {
	Path   string `json:"path" jsonschema:"file path relative to the workspace root"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"lines to show at most (default: all)"`
}

// ReadFileResult is read_file's answer (docs/patch.md "read_file"); numbered_content is
// the field the edit formats refer to.
type ReadFileResult struct {
	Path            string `json:"path"`
	NumberedContent string `json:"numbered_content"` // "%6d\t<line>\n" per line
	SHA256          string `json:"sha256"`
	Revision        string `json:"revision"` // first 16 hex characters of sha256: what apply_patch expects back
	TotalLines      int    `json:"total_lines"`
	Offset          int    `json:"offset"`
	Lines           int    `json:"lines"`
	Truncated       bool   `json:"truncated"`
	CutLines        int    `json:"cut_lines,omitempty"`
}

// ReadFile runs read_file (exported for the CLI's `s-code read`).
func ReadFile(_ context.Context, env *Env, in ReadFileInput) (ReadFileResult, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return ReadFileResult{}, &Error{Code: "invalid_arguments", Message: "offset and limit must not be negative"}
	}
	if in.Path == "" {
		return ReadFileResult{}, &Error{Code: "invalid_arguments", Message: "path is empty: give a file path relative to the workspace root"}
	}
	r, err := filetools.Read(env.Root, in.Path, filetools.ReadOptions{Offset: in.Offset, Limit: in.Limit})
	if err != nil {
		if errors.Is(err, filetools.ErrOffset) {
			return ReadFileResult{}, &Error{Code: filetools.Code(err), Message: err.Error() + "; read from offset 1 to see how many lines it has", Err: err}
		}
		return ReadFileResult{}, pathErr(err)
	}
	return ReadFileResult{
		Path: r.Path, NumberedContent: r.Content, SHA256: r.SHA256, Revision: r.Revision,
		TotalLines: r.TotalLines, Offset: r.Offset, Lines: r.Lines, Truncated: r.Truncated, CutLines: r.CutLines,
	}, nil
}

var readFileTool = Must(Spec[ReadFileInput, ReadFileResult]{
	Name: "read_file",
	Description: "Read a workspace file: numbered_content (each line as its number right-aligned in 6 columns, a tab, the line), " +
		"its sha256 and 16-character revision (send the revision back to apply_patch), with offset and limit for long files. " +
		"Symlinks, binary files and files over 16 MiB are refused.",
	ReadOnly: true,
	Call:     ReadFile,
})

// EditFormat selects which apply_patch request form a model is shown (every form stays
// accepted).
type EditFormat string

// The edit formats.
const (
	EditLines EditFormat = "lines" // envelope with line edits
	EditText  EditFormat = "text"  // envelope with exact text edits
	EditPatch EditFormat = "patch" // "*** Begin Patch" text with revisions
)

// ParseEditFormat returns the edit format named s ("" means lines).
func ParseEditFormat(s string) (EditFormat, error) {
	switch EditFormat(s) {
	case "", EditLines:
		return EditLines, nil
	case EditText, EditPatch:
		return EditFormat(s), nil
	}
	return "", fmt.Errorf("edit format %q: want lines, text or patch", s)
}

// ApplyPatchResult is apply_patch's answer.
type ApplyPatchResult struct {
	Turn    string              `json:"turn"` // undo_turn reverts it
	Applied []filetools.Applied `json:"applied"`
}

// applyPatchSchema returns the input schema a model is shown for edit format f, generated
// from the wire types of internal/patch: patch.PatchText for patch, patch.Envelope for lines
// and text, with each edit narrowed to the fields of that kind (patch.Edit carries both).
func applyPatchSchema(f EditFormat) *jsonschema.Schema {
	if f == EditPatch {
		s, err := schemaFor[patch.PatchText]()
		if err != nil {
			panic(fmt.Sprintf("apply_patch schema: %v", err))
		}
		return s
	}
	s, err := schemaFor[patch.Envelope]()
	if err != nil {
		panic(fmt.Sprintf("apply_patch schema: %v", err))
	}
	keep := []string{"start_line", "end_line", "new_text"}
	if f == EditText {
		keep = []string{"old_text", "new_text"}
	}
	edit := s.Properties["files"].Items.Properties["edits"].Items
	for name := range edit.Properties {
		if !slices.Contains(keep, name) {
			delete(edit.Properties, name)
		}
	}
	edit.PropertyOrder = keep
	edit.Required = keep
	noNull(s)
	return s
}

// noNull drops "null" from the types of s and its properties and items, but not of
// expected_revision (where null means a new file): patch.Decode refuses null for the Go
// pointers and slices jsonschema.For marks nullable.
func noNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		for _, t := range s.Types {
			if t != "null" {
				s.Type, s.Types = t, nil
			}
		}
	}
	for name, p := range s.Properties {
		if name != "expected_revision" {
			noNull(p)
		}
	}
	noNull(s.Items)
}

// ApplyPatchDescription returns apply_patch's description for an edit format.
func ApplyPatchDescription(f EditFormat) string {
	common := " Every path, revision and edit is checked before the first write; each file is written atomically and the batch is one turn that undo_turn reverts. " +
		".git and agent/IDE control files are never written. Every form is accepted whatever the format shown."
	switch f {
	case EditText:
		return `Change workspace files with exact text edits: {"files":[{"path":P,"expected_revision":REV,"edits":[{"old_text":T,"new_text":N}]}]}. ` +
			`Each old_text must occur exactly once, copied exactly from read_file's numbered_content without the line-number prefixes; nothing fuzzy is applied. ` +
			`A new file: "expected_revision": null with "content".` + common
	case EditPatch:
		return `Change workspace files with a patch: {"patch":"*** Begin Patch\n*** Update File: P\n@@\n context\n-old\n+new\n*** End Patch\n","revisions":{"P":REV}}. ` +
			`Each hunk starts with a bare @@ line; its lines start with a space (context), - or +; context and removed lines must match the file exactly once. ` +
			`*** Add File: P is followed by + lines, with "revisions": {"P": null}. No Delete, Move or End of File markers.` + common
	}
	return `Change workspace files with line edits: {"files":[{"path":P,"expected_revision":REV,"edits":[{"start_line":A,"end_line":B,"new_text":T}]}]}. ` +
		`Lines are numbered as in read_file's numbered_content; all edits of a file refer to the file as read and must not overlap; end_line = start_line-1 inserts. ` +
		`A new file: "expected_revision": null with "content".` + common
}

// patchCall is apply_patch's decoded arguments with the bytes the model sent (what the user
// helper is given: it decodes and plans them itself).
type patchCall struct {
	req *patch.Request
	raw json.RawMessage
}

func decodePatch(args json.RawMessage) (*patchCall, error) {
	req, err := patch.Decode(args)
	if err != nil {
		return nil, &Error{Code: filetools.Code(err), Message: err.Error()}
	}
	return &patchCall{req: req, raw: append(json.RawMessage(nil), args...)}, nil
}

// EditRequest is one batch of file edits, or one undo, for an Editor.
type EditRequest struct {
	Workspace string // absolute: the workspace root the session serves
	Mode      permission.Mode
	// Patch is the apply_patch arguments exactly as the model sent them (nil for an undo).
	Patch []byte
	// Turn is the turn an undo reverts (empty: the latest not yet undone).
	Turn string
}

// EditOutcome is how an Editor's batch or undo ended.
type EditOutcome struct {
	RequestID string
	// Denied: the helper refused the plan (a protected or escaping target, an unset mode, no
	// turn to undo); nothing was written.
	Denied *Denial
	// NotApproved: the plan needed a person and approve did not accept (Answer says what
	// came back); nothing was written. Card is the card shown (or that would have been).
	NotApproved bool
	Answer      Answer
	Card        *Card
	AskErr      error
	// Result is the file tools' JSON answer (docs/patch.md): the result when Applied, else
	// the error object of a refused or partly applied batch.
	Result  []byte
	Applied bool
}

// Editor applies file edits through the user helper: it asks the helper for its plan of the
// batch, asks approve (with the card of exactly that plan) when the plan needs a person, and
// sends the approval of that plan only; the helper applies the batch and records it. An
// *ApprovalPending error from approve is returned unchanged.
type Editor interface {
	ApplyPatch(ctx context.Context, req EditRequest, approve ApproveFunc) (*EditOutcome, error)
	Undo(ctx context.Context, req EditRequest, approve ApproveFunc) (*EditOutcome, error)
}

// helperEditError is the user helper's error object of an edit that did not apply, with the
// fields the model-facing messages need (docs/patch.md "Errors").
type helperEditError struct {
	Code         string              `json:"code"`
	Message      string              `json:"message"`
	Applied      []filetools.Applied `json:"applied"`
	Failed       string              `json:"failed,omitempty"`
	Written      bool                `json:"written,omitempty"`
	Unconfirmed  []string            `json:"unconfirmed,omitempty"`
	Stale        *filetools.Stale    `json:"stale,omitempty"`
	NeedsContent bool                `json:"needs_content,omitempty"`
}

// editOutcomeErr is the tool error of an edit the helper did not apply (nil when out holds
// the file tools' answer): an approval still pending is returned unchanged, a refusal or a
// missing approval names its rule, and a helper failure says the edit's fate is in the audit
// log.
func editOutcomeErr(env *Env, out *EditOutcome, err error, what string) error {
	var pending *ApprovalPending
	switch {
	case errors.As(err, &pending):
		return err
	case errors.Is(err, context.Canceled):
		return &Error{Code: "cancelled", Message: "the call was cancelled", Err: err}
	case err != nil:
		return &Error{Code: "helper_failed", Message: err.Error() + "; every edit goes through the user helper, which decides and records it", Err: err}
	case out.NotApproved:
		rule := permission.RuleEditWorkspace
		if out.Card != nil && len(out.Card.Rules) > 0 {
			rule = out.Card.Rules[0]
		}
		return &Error{Code: "not_approved", Rule: rule, Message: notApprovedMessage(out.Answer, what, "nothing was written") + " (mode " + env.Mode.String() + ")"}
	case out.Denied != nil:
		return &Error{Code: filetools.CodeOfRule(out.Denied.Rule), Rule: out.Denied.Rule, Message: out.Denied.Reason + "; nothing was written"}
	}
	return nil
}

// applyPatch runs apply_patch through the user helper (env.Edit), which decides the batch in
// the session's mode (Manual asks a person, Accept-edits and Workspace apply edits inside the
// workspace, an unset mode refuses), applies it and records it.
func applyPatch(ctx context.Context, env *Env, in *patchCall) (ApplyPatchResult, error) {
	if env.Edit == nil {
		return ApplyPatchResult{}, &Error{Code: "unavailable", Message: "apply_patch has no user helper in this session, so nothing can decide or record the edit; nothing was written"}
	}
	approve := func(ctx context.Context, card *Card) (Answer, error) {
		card.Mode = env.Mode.String()
		return askApproval(ctx, env, card)
	}
	out, err := env.Edit.ApplyPatch(ctx, EditRequest{Workspace: env.Root.Path(), Mode: env.Mode, Patch: in.raw}, approve)
	if err := editOutcomeErr(env, out, err, "the patch"); err != nil {
		return ApplyPatchResult{}, err
	}
	if !out.Applied {
		return ApplyPatchResult{}, patchErrObject(in.req, out.Result)
	}
	var res ApplyPatchResult
	if err := json.Unmarshal(out.Result, &res); err != nil {
		return ApplyPatchResult{}, &Error{Code: "helper_failed", Message: "the helper's result: " + err.Error(), Err: err}
	}
	if res.Applied == nil {
		res.Applied = []filetools.Applied{}
	}
	return res, nil
}

// patchErrObject is patchErr for the helper's error object b.
func patchErrObject(req *patch.Request, b []byte) error {
	var e helperEditError
	if err := json.Unmarshal(b, &e); err != nil || e.Code == "" {
		return &Error{Code: "helper_failed", Message: "the helper's error object is unreadable: " + string(b)}
	}
	msg := e.Message
	if e.Stale != nil {
		if m := staleMessage(req.Form, e.Stale); m != "" {
			msg = m
		}
	}
	if e.NeedsContent && req.Form == patch.FormPatch {
		msg += needsContentHint
	}
	var detail any
	if e.Failed != "" || len(e.Applied) > 0 {
		detail = &filetools.BatchError{Code: e.Code, Message: e.Message, Applied: e.Applied, Failed: e.Failed, Written: e.Written, Unconfirmed: e.Unconfirmed}
	}
	return &Error{Code: e.Code, Message: msg, Detail: detail}
}

const needsContentHint = `; the patch form cannot replace a whole file: send {"files":[{"path":...,"expected_revision":REV,"content":"<the whole new content>"}]} to apply_patch instead`

// staleMessage says what to do about a stale revision in the request's form ("" when the
// generic message says it).
func staleMessage(form patch.Form, se *filetools.Stale) string {
	if form == patch.FormPatch {
		switch {
		case se.Missing:
			return fmt.Sprintf("*** Update File: %s: the file does not exist; to create it use *** Add File: %s (+ lines) with \"revisions\": {%q: null}", se.Path, se.Path, se.Path)
		case se.ExpectedNew:
			return fmt.Sprintf("*** Add File: %s: the file already exists (revision %s); to change it use *** Update File: %s with \"revisions\": {%q: %q}, after reading it", se.Path, se.Current, se.Path, se.Path, se.Current)
		}
		return ""
	}
	switch {
	case se.Missing:
		return fmt.Sprintf("%s: the file does not exist; to create it send \"expected_revision\": null with \"content\"", se.Path)
	case se.ExpectedNew:
		return fmt.Sprintf("%s: the file already exists (revision %s); to change it send \"expected_revision\": %q with edits, after reading it", se.Path, se.Current, se.Current)
	}
	return ""
}

// UndoTurnInput is undo_turn's arguments.
type UndoTurnInput struct {
	Turn string `json:"turn,omitempty" jsonschema:"turn id from apply_patch (default: the latest turn not yet undone)"`
}

func undoTurn(ctx context.Context, env *Env, in UndoTurnInput) (filetools.UndoResult, error) {
	if env.Edit == nil {
		return filetools.UndoResult{}, &Error{Code: "unavailable", Message: "undo_turn has no user helper in this session, so nothing can decide or record the undo"}
	}
	if in.Turn != "" {
		if err := turns.ValidID(in.Turn); err != nil {
			return filetools.UndoResult{}, &Error{Code: "invalid_arguments", Message: err.Error()}
		}
	}
	approve := func(ctx context.Context, card *Card) (Answer, error) {
		card.Mode = env.Mode.String()
		return askApproval(ctx, env, card)
	}
	out, err := env.Edit.Undo(ctx, EditRequest{Workspace: env.Root.Path(), Mode: env.Mode, Turn: in.Turn}, approve)
	if err := editOutcomeErr(env, out, err, "the undo"); err != nil {
		var te *Error
		if errors.As(err, &te) && te.Code == "no_turn" {
			te.Message = strings.TrimSuffix(te.Message, "; nothing was written") + ": nothing to undo"
		}
		return filetools.UndoResult{}, err
	}
	var res filetools.UndoResult
	if !out.Applied {
		var e helperEditError
		if err := json.Unmarshal(out.Result, &e); err != nil || e.Code == "" {
			return res, &Error{Code: "helper_failed", Message: "the helper's error object is unreadable: " + string(out.Result)}
		}
		return res, &Error{Code: e.Code, Message: e.Message}
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		return res, &Error{Code: "helper_failed", Message: "the helper's result: " + err.Error(), Err: err}
	}
	if res.Restored == nil {
		res.Restored = []string{}
	}
	if res.Deleted == nil {
		res.Deleted = []string{}
	}
	if res.Skipped == nil {
		res.Skipped = []filetools.Skipped{}
	}
	return res, nil
}

// ApplyPatchTool returns apply_patch showing the schema and description of format f.
func ApplyPatchTool(f EditFormat) Tool {
	return Must(Spec[*patchCall, ApplyPatchResult]{
		Name:        "apply_patch",
		Description: ApplyPatchDescription(f),
		Summary:     "Change workspace files (line edits, exact text edits, patch text or whole content), checked against revisions",
		Input:       applyPatchSchema(f),
		Decode:      decodePatch,
		Call:        applyPatch,
	})
}

var undoTurnTool = Must(Spec[UndoTurnInput, filetools.UndoResult]{
	Name:        "undo_turn",
	Description: "Revert the files an apply_patch turn changed (the latest turn, or the one named), where they still hold what the turn wrote; files changed since are left alone and reported.",
	Call:        undoTurn,
})

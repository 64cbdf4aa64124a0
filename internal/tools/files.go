package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/safety"
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

func decodePatch(args json.RawMessage) (*patch.Request, error) {
	req, err := patch.Decode(args)
	if err != nil {
		return nil, &Error{Code: filetools.Code(err), Message: err.Error()}
	}
	return req, nil
}

// applyPatch runs apply_patch; in Manual mode the batch needs a person's approval first.
func applyPatch(ctx context.Context, env *Env, req *patch.Request) (ApplyPatchResult, error) {
	if env.Turns == nil {
		return ApplyPatchResult{}, &Error{Code: "unavailable", Message: "apply_patch has no undo store in this session, so it cannot record turns; nothing was written"}
	}
	target, err := filetools.ApprovalTarget(env.Root, req)
	if err != nil {
		return ApplyPatchResult{}, patchErr(req, err)
	}
	// The permission model decides edits as it decides commands: Accept-edits and Workspace
	// approve edits inside the workspace, Manual asks, an unset mode refuses.
	paths := patchPaths(req)
	ws := env.Root.Path()
	out := permission.Decide(env.Mode, permission.Plan{Kind: permission.KindEdit, Role: "user", Workspace: ws, Cwd: ws, Targets: paths, Mode: env.Mode,
		Verdict: safety.Verdict{Decision: safety.Ask, Findings: []safety.Finding{{Rule: permission.RuleEditWorkspace, Decision: safety.Ask, Command: target,
			Message: "This changes files inside the workspace; a person approves it unless the mode accepts edits."}}}})
	switch out.Result {
	case permission.Run:
	case permission.NeedsApproval:
		batch, err := json.Marshal(req)
		if err != nil {
			return ApplyPatchResult{}, err
		}
		sum := sha256.Sum256(batch)
		ans, askErr := askApproval(ctx, env, &Card{Kind: "apply_patch", Title: "Apply a patch to " + target, Workspace: ws,
			Paths: paths, Batch: hex.EncodeToString(sum[:]), Mode: env.Mode.String(), Rules: out.Rules, Reason: out.Reason})
		var pending *ApprovalPending
		if errors.As(askErr, &pending) {
			return ApplyPatchResult{}, askErr
		}
		if ans != AnswerAccept {
			return ApplyPatchResult{}, &Error{Code: "not_approved", Rule: permission.RuleEditWorkspace, Message: notApprovedMessage(ans, "the patch", "nothing was written") + " (mode " + env.Mode.String() + ")"}
		}
	default:
		rule := permission.RuleModeUnset
		if len(out.Rules) > 0 {
			rule = out.Rules[0]
		}
		return ApplyPatchResult{}, &Error{Code: "refused", Rule: rule, Message: out.Reason + "; nothing was written"}
	}
	turn, err := turns.NewID()
	if err != nil {
		return ApplyPatchResult{}, err
	}
	res, err := (&filetools.Applier{Root: env.Root, Turns: env.Turns}).Apply(req, turn)
	if err != nil {
		return ApplyPatchResult{}, patchErr(req, err)
	}
	return ApplyPatchResult{Turn: res.Turn, Applied: res.Applied}, nil
}

func patchPaths(req *patch.Request) []string {
	out := make([]string, len(req.Files))
	for i, f := range req.Files {
		out[i] = f.Path
	}
	return out
}

// patchErr turns an apply_patch failure into an *Error whose message says what to do in the
// form the request used.
func patchErr(req *patch.Request, err error) error {
	code, msg := filetools.Code(err), err.Error()
	var detail any
	var be *filetools.BatchError
	if errors.As(err, &be) {
		detail = be
		msg = be.Error()
	}
	var se *filetools.StaleError
	if errors.As(err, &se) && req.Form == patch.FormPatch {
		switch {
		case se.Missing:
			msg = fmt.Sprintf("*** Update File: %s: the file does not exist; to create it use *** Add File: %s (+ lines) with \"revisions\": {%q: null}", se.Path, se.Path, se.Path)
		case se.ExpectedNew:
			msg = fmt.Sprintf("*** Add File: %s: the file already exists (revision %s); to change it use *** Update File: %s with \"revisions\": {%q: %q}, after reading it", se.Path, se.Current, se.Path, se.Path, se.Current)
		}
	} else if errors.As(err, &se) {
		switch {
		case se.Missing:
			msg = fmt.Sprintf("%s: the file does not exist; to create it send \"expected_revision\": null with \"content\"", se.Path)
		case se.ExpectedNew:
			msg = fmt.Sprintf("%s: the file already exists (revision %s); to change it send \"expected_revision\": %q with edits, after reading it", se.Path, se.Current, se.Current)
		}
	}
	if errors.Is(err, patch.ErrNeedsContent) && req.Form == patch.FormPatch {
		msg += `; the patch form cannot replace a whole file: send {"files":[{"path":...,"expected_revision":REV,"content":"<the whole new content>"}]} to apply_patch instead`
	}
	if !errors.Is(err, patch.ErrMalformed) && code == "error" {
		return pathErr(err)
	}
	return &Error{Code: code, Message: msg, Detail: detail}
}

// UndoTurnInput is undo_turn's arguments.
type UndoTurnInput struct {
	Turn string `json:"turn,omitempty" jsonschema:"turn id from apply_patch (default: the latest turn not yet undone)"`
}

func undoTurn(_ context.Context, env *Env, in UndoTurnInput) (filetools.UndoResult, error) {
	if env.Turns == nil {
		return filetools.UndoResult{}, &Error{Code: "unavailable", Message: "this session has no undo store"}
	}
	if in.Turn != "" {
		if err := turns.ValidID(in.Turn); err != nil {
			return filetools.UndoResult{}, &Error{Code: "invalid_arguments", Message: err.Error()}
		}
	}
	res, err := filetools.Undo(env.Root, env.Turns, in.Turn)
	if res == nil {
		if errors.Is(err, turns.ErrNoTurn) {
			return filetools.UndoResult{}, &Error{Code: "no_turn", Message: err.Error() + ": nothing to undo"}
		}
		return filetools.UndoResult{}, pathErr(err)
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
	return *res, nil
}

// ApplyPatchTool returns apply_patch showing the schema and description of format f.
func ApplyPatchTool(f EditFormat) Tool {
	return Must(Spec[*patch.Request, ApplyPatchResult]{
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

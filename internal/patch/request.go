package patch

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Limits of one request.
const (
	MaxPaths = 32       // unique paths in one batch
	MaxEdits = 100      // edits (or hunks) of one file
	MaxBytes = 16 << 20 // bytes of the serialized request; also of snapshots and of results
)

// Form names the shape a request arrived in.
type Form string

// The accepted request forms.
const (
	FormEnvelope Form = "envelope" // {"files": [...]}
	FormPatch    Form = "patch"    // {"patch": "*** Begin Patch...", "revisions": {...}}
	FormLegacy   Form = "legacy"   // {"path", "expected_revision", "expected_sha256", "edits"|"content"}
)

// Request is a decoded, validated apply_patch batch.
type Request struct {
	Form  Form
	Files []File
}

// File is the change to one path.
type File struct {
	Path string
	// New reports that the file must not exist yet (expected_revision null).
	New bool
	// Revision is the expected 16-hex-character revision of an existing file ("" when only
	// SHA256 is given, legacy form).
	Revision string
	// SHA256 is the full expected SHA-256 (hex) of an existing file, legacy form only.
	SHA256 string
	// Exactly one of the following is set.
	Content   *string
	LineEdits []LineEdit
	TextEdits []TextEdit
	Hunks     []Hunk
}

// LineEdit replaces lines StartLine..EndLine (1-based, inclusive, against the original
// file) with NewText; EndLine = StartLine-1 inserts before StartLine.
type LineEdit struct {
	StartLine, EndLine int
	NewText            string
}

// TextEdit replaces the one occurrence of OldText with NewText.
type TextEdit struct {
	OldText, NewText string
}

// Hunk is one "@@" section of an Update File: Old is the context and removed lines, New
// the context and added lines, each line with its "\n".
type Hunk struct {
	Old, New string
	Line     int // line of the "@@" in the patch text, for messages
}

// EditCount returns the number of edits (or hunks) the file carries; whole content is one.
func (f *File) EditCount() int {
	switch {
	case f.Content != nil:
		return 1
	case f.LineEdits != nil:
		return len(f.LineEdits)
	case f.TextEdits != nil:
		return len(f.TextEdits)
	}
	return len(f.Hunks)
}

var (
	revisionRE = regexp.MustCompile(`^[0-9a-f]{16}$`)
	sha256RE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Decode parses one apply_patch request: an envelope, a patch-text request or a legacy
// single-file request, whose wire types are Envelope, PatchText and Legacy. Every object is
// decoded strictly: an unknown field (ErrUnknownField) or a repeated one (ErrDuplicateField)
// is refused naming it and its place; wrong types and missing fields are ErrMalformed;
// requests over the limits are ErrLimit. Decode checks everything that does not need the
// files themselves.
func Decode(data []byte) (*Request, error) {
	if len(data) > MaxBytes {
		return nil, errf(ErrLimit, "", "", "request is %d bytes, over the limit of %d", len(data), MaxBytes)
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, errf(ErrMalformed, "request", "", "invalid JSON: %v", err)
	}
	keys, _, ok := scanObject(data)
	if !ok {
		return nil, errf(ErrMalformed, "request", "", "must be a JSON object")
	}
	has := func(k string) bool { return slices.Contains(keys, k) }
	var req *Request
	var err error
	switch {
	case has("files"):
		var w Envelope
		if err := decodeWire(data, &w); err != nil {
			return nil, err
		}
		req, err = fromEnvelope(&w)
	case has("patch"):
		var w PatchText
		if err := decodeWire(data, &w); err != nil {
			return nil, err
		}
		req, err = fromPatchText(&w, has("revisions"))
	case has("path"):
		var w Legacy
		if err := decodeWire(data, &w); err != nil {
			return nil, err
		}
		var f *File
		f, err = fromFile("request", w.Path, w.ExpectedRevision, w.ExpectedSHA256, w.Edits, w.Content, true)
		if f != nil {
			req = &Request{Form: FormLegacy, Files: []File{*f}}
		}
	default:
		return nil, errf(ErrMalformed, "request", "", `needs "files" (a batch), "patch" (patch text) or "path" (a single file)`)
	}
	if err != nil {
		return nil, err
	}
	if len(req.Files) == 0 {
		return nil, errf(ErrMalformed, "request", "", "changes no file")
	}
	if len(req.Files) > MaxPaths {
		return nil, errf(ErrLimit, "request", "", "%d files, over the limit of %d paths", len(req.Files), MaxPaths)
	}
	seen := map[string]int{}
	for i, f := range req.Files {
		if j, ok := seen[f.Path]; ok {
			return nil, errf(ErrDuplicatePath, fmt.Sprintf("files[%d]", i), f.Path, "already listed as files[%d]; put all edits of a file in one entry", j)
		}
		seen[f.Path] = i
		if n := f.EditCount(); n > MaxEdits {
			return nil, errf(ErrLimit, fmt.Sprintf("files[%d]", i), f.Path, "%d edits, over the limit of %d per file", n, MaxEdits)
		}
	}
	return req, nil
}

func fromEnvelope(w *Envelope) (*Request, error) {
	if w.Files == nil {
		return nil, errf(ErrMalformed, "files", "", "must be an array")
	}
	if len(w.Files) > MaxPaths {
		return nil, errf(ErrLimit, "files", "", "%d files, over the limit of %d paths", len(w.Files), MaxPaths)
	}
	req := &Request{Form: FormEnvelope}
	for i, wf := range w.Files {
		f, err := fromFile(fmt.Sprintf("files[%d]", i), wf.Path, wf.ExpectedRevision, "", wf.Edits, wf.Content, false)
		if err != nil {
			return nil, err
		}
		req.Files = append(req.Files, *f)
	}
	return req, nil
}

// fromFile checks one file of an envelope (legacy false) or the legacy request and
// returns it; where is its place ("files[2]", or "request").
func fromFile(where, path string, revision NullableText, sha string, edits []Edit, content *string, legacy bool) (*File, error) {
	f := &File{Path: path}
	if f.Path == "" {
		return nil, errf(ErrMalformed, child(where, "path"), "", "is empty or missing")
	}
	if revision.Set {
		if rev := revision.Value; rev == nil {
			f.New = true
		} else if !revisionRE.MatchString(*rev) {
			return nil, errf(ErrMalformed, child(where, "expected_revision"), f.Path, "%q is not a revision (16 lowercase hex characters from read_file); use null for a new file", *rev)
		} else {
			f.Revision = *rev
		}
	}
	if sha != "" {
		w := child(where, "expected_sha256")
		if !sha256RE.MatchString(sha) {
			return nil, errf(ErrMalformed, w, f.Path, "%q is not a SHA-256 (64 lowercase hex characters)", sha)
		}
		if f.New {
			return nil, errf(ErrMalformed, w, f.Path, "given with expected_revision null (a new file has no SHA-256)")
		}
		if f.Revision != "" && f.Revision != sha[:16] {
			return nil, errf(ErrMalformed, w, f.Path, "disagrees with expected_revision %s", f.Revision)
		}
		f.SHA256 = sha
	}
	if !revision.Set && f.SHA256 == "" {
		if legacy {
			return nil, errf(ErrMalformed, where, f.Path, "needs expected_revision (or expected_sha256); use expected_revision null for a new file")
		}
		return nil, errf(ErrMalformed, where, f.Path, "needs expected_revision (the revision from read_file, or null for a new file)")
	}
	switch {
	case edits != nil && content != nil:
		return nil, errf(ErrMalformed, where, f.Path, "has both edits and content; send one")
	case content != nil:
		f.Content = content
	case edits != nil:
		if err := fromEdits(f, edits, child(where, "edits")); err != nil {
			return nil, err
		}
		if f.New {
			return nil, errf(ErrMalformed, child(where, "edits"), f.Path, "a new file (expected_revision null) takes content, not edits")
		}
	default:
		return nil, errf(ErrMalformed, where, f.Path, "needs edits or content")
	}
	return f, nil
}

func fromEdits(f *File, edits []Edit, where string) error {
	if len(edits) == 0 {
		return errf(ErrMalformed, where, f.Path, "is empty")
	}
	if len(edits) > MaxEdits {
		return errf(ErrLimit, where, f.Path, "%d edits, over the limit of %d per file", len(edits), MaxEdits)
	}
	for i, e := range edits {
		w := fmt.Sprintf("%s[%d]", where, i)
		switch {
		case e.OldText != nil:
			if e.StartLine != nil || e.EndLine != nil {
				return errf(ErrMalformed, w, f.Path, "has old_text and start_line/end_line; a text edit is old_text and new_text, a line edit start_line, end_line and new_text")
			}
			if f.LineEdits != nil {
				return errf(ErrMixedEdits, w, f.Path, "is a text edit after line edits; use one kind of edit per file")
			}
			if e.NewText == nil {
				return errf(ErrMalformed, w, "", "missing new_text")
			}
			te := TextEdit{OldText: *e.OldText, NewText: *e.NewText}
			if te.OldText == "" {
				return errf(ErrMalformed, w+".old_text", f.Path, "is empty; an exact text edit needs text to find")
			}
			if te.OldText == te.NewText {
				return errf(ErrNoop, w, f.Path, "old_text and new_text are equal")
			}
			f.TextEdits = append(f.TextEdits, te)
		case e.StartLine != nil || e.EndLine != nil:
			if f.TextEdits != nil {
				return errf(ErrMixedEdits, w, f.Path, "is a line edit after text edits; use one kind of edit per file")
			}
			switch {
			case e.StartLine == nil:
				return errf(ErrMalformed, w, "", "missing start_line")
			case e.EndLine == nil:
				return errf(ErrMalformed, w, "", "missing end_line")
			case e.NewText == nil:
				return errf(ErrMalformed, w, "", "missing new_text")
			}
			le := LineEdit{StartLine: *e.StartLine, EndLine: *e.EndLine, NewText: *e.NewText}
			if le.StartLine < 1 {
				return errf(ErrLineRange, w, f.Path, "start_line %d: lines are numbered from 1", le.StartLine)
			}
			if le.EndLine < le.StartLine-1 {
				return errf(ErrLineRange, w, f.Path, "end_line %d is before start_line %d (end_line = start_line-1 inserts before start_line)", le.EndLine, le.StartLine)
			}
			if n, ok := numberedPrefixes(le.NewText); ok {
				lines := fmt.Sprintf("its %d lines start", n)
				if n == 1 {
					lines = "its line starts"
				}
				return errf(ErrNumberedText, w+".new_text", f.Path, "%s with read_file's line-number prefixes (\"%6d\\t\"); send the file's text without them", lines, le.StartLine)
			}
			f.LineEdits = append(f.LineEdits, le)
		default:
			return errf(ErrMalformed, w, f.Path, "needs old_text (an exact text edit) or start_line and end_line (a line edit)")
		}
	}
	if f.LineEdits != nil {
		if err := checkOverlap(f.Path, where, f.LineEdits); err != nil {
			return err
		}
	}
	return nil
}

// checkOverlap refuses line edits whose ranges share a line or insert at the same point.
func checkOverlap(path, where string, edits []LineEdit) error {
	idx := make([]int, len(edits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return edits[idx[a]].StartLine < edits[idx[b]].StartLine })
	for k := 1; k < len(idx); k++ {
		a, b := edits[idx[k-1]], edits[idx[k]]
		if b.StartLine <= a.EndLine || b.StartLine == a.StartLine {
			return errf(ErrOverlap, fmt.Sprintf("%s[%d]", where, idx[k]), path, "lines %d-%d overlap edits[%d] (lines %d-%d); merge them into one edit", b.StartLine, b.EndLine, idx[k-1], a.StartLine, a.EndLine)
		}
	}
	return nil
}

// numberedPrefixes reports whether every line of s starts with a read_file line-number
// prefix (the number right-aligned in 6 columns, then a tab) with consecutive numbers, and
// returns the number of lines. Tab-separated data with other numbers is not refused.
func numberedPrefixes(s string) (int, bool) {
	s = strings.TrimSuffix(s, "\n")
	// Fast reject: the first line must start with at least 6 columns of spaces and digits
	// and a tab.
	if len(s) < 7 || (s[5] < '0' || s[5] > '9') {
		return 0, false
	}
	lines := strings.Split(s, "\n")
	prev := -1
	for _, l := range lines {
		tab := strings.IndexByte(l, '\t')
		if tab < 6 {
			return 0, false
		}
		digits := strings.TrimLeft(l[:tab], " ")
		if digits == "" || (tab > 6 && len(digits) != tab) {
			return 0, false
		}
		n := 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
			if n > 1e9 {
				return 0, false
			}
		}
		if prev >= 0 && n != prev+1 {
			return 0, false
		}
		prev = n
	}
	return len(lines), true
}

func fromPatchText(w *PatchText, hasRevisions bool) (*Request, error) {
	if !hasRevisions {
		return nil, errf(ErrMalformed, "request", "", `needs "revisions": {path: revision, or null for a file the patch adds}`)
	}
	if w.Revisions == nil {
		return nil, errf(ErrMalformed, "revisions", "", "must be a JSON object")
	}
	if len(w.Revisions) > MaxPaths {
		return nil, errf(ErrLimit, "revisions", "", "%d entries, over the limit of %d paths", len(w.Revisions), MaxPaths)
	}
	files, err := ParsePatch(w.Patch)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for i := range files {
		f := &files[i]
		where := "revisions." + f.Path
		rev, ok := w.Revisions[f.Path]
		if !ok {
			if f.New {
				return nil, errf(ErrMalformed, "revisions", f.Path, "missing; give null for a file the patch adds")
			}
			return nil, errf(ErrMalformed, "revisions", f.Path, "missing; give the revision read_file returned")
		}
		used[f.Path] = true
		switch {
		case f.New && rev != nil:
			return nil, errf(ErrMalformed, where, f.Path, "*** Add File needs revision null (the file must not exist)")
		case !f.New && rev == nil:
			return nil, errf(ErrMalformed, where, f.Path, "*** Update File needs the file's revision from read_file, not null")
		case rev != nil && !revisionRE.MatchString(*rev):
			return nil, errf(ErrMalformed, where, f.Path, "%q is not a revision (16 lowercase hex characters from read_file)", *rev)
		case rev != nil:
			f.Revision = *rev
		}
	}
	extra := make([]string, 0)
	for k := range w.Revisions {
		if !used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, errf(ErrMalformed, "revisions", extra[0], "is not a file of the patch")
	}
	return &Request{Form: FormPatch, Files: files}, nil
}

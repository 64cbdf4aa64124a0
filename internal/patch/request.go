package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
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
// single-file request. Every object is decoded strictly: an unknown field (ErrUnknownField)
// or a repeated one (ErrDuplicateField) is refused naming it and its place; wrong types and
// missing fields are ErrMalformed; requests over the limits are ErrLimit. Decode checks
// everything that does not need the files themselves.
func Decode(data []byte) (*Request, error) {
	if len(data) > MaxBytes {
		return nil, errf(ErrLimit, "", "", "request is %d bytes, over the limit of %d", len(data), MaxBytes)
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, errf(ErrMalformed, "request", "", "invalid JSON: %v", err)
	}
	top, err := object(json.RawMessage(data), "request")
	if err != nil {
		return nil, err
	}
	var req *Request
	switch {
	case top.has("files"):
		req, err = decodeEnvelope(top)
	case top.has("patch"):
		req, err = decodePatchRequest(top)
	case top.has("path"):
		req, err = decodeLegacy(top)
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

func decodeEnvelope(top fields) (*Request, error) {
	if err := top.only("request", "files"); err != nil {
		return nil, err
	}
	items, err := array(top.val("files"), "files")
	if err != nil {
		return nil, err
	}
	if len(items) > MaxPaths {
		return nil, errf(ErrLimit, "files", "", "%d files, over the limit of %d paths", len(items), MaxPaths)
	}
	req := &Request{Form: FormEnvelope}
	for i, raw := range items {
		where := fmt.Sprintf("files[%d]", i)
		o, err := object(raw, where)
		if err != nil {
			return nil, err
		}
		if err := o.only(where, "path", "expected_revision", "edits", "content"); err != nil {
			return nil, err
		}
		f, err := decodeFile(o, where, false)
		if err != nil {
			return nil, err
		}
		req.Files = append(req.Files, *f)
	}
	return req, nil
}

func decodeLegacy(top fields) (*Request, error) {
	if err := top.only("request", "path", "expected_revision", "expected_sha256", "edits", "content"); err != nil {
		return nil, err
	}
	f, err := decodeFile(top, "request", true)
	if err != nil {
		return nil, err
	}
	return &Request{Form: FormLegacy, Files: []File{*f}}, nil
}

func decodeFile(o fields, where string, legacy bool) (*File, error) {
	f := &File{}
	var err error
	if f.Path, err = str(o.val("path"), where+".path"); err != nil {
		return nil, err
	}
	if f.Path == "" {
		return nil, errf(ErrMalformed, where+".path", "", "is empty")
	}
	revRaw, hasRev := o.get("expected_revision")
	if hasRev {
		rev, err := nullableStr(revRaw, where+".expected_revision")
		if err != nil {
			return nil, err
		}
		if rev == nil {
			f.New = true
		} else if !revisionRE.MatchString(*rev) {
			return nil, errf(ErrMalformed, where+".expected_revision", f.Path, "%q is not a revision (16 lowercase hex characters from read_file); use null for a new file", *rev)
		} else {
			f.Revision = *rev
		}
	}
	if raw, ok := o.get("expected_sha256"); ok {
		sum, err := str(raw, where+".expected_sha256")
		if err != nil {
			return nil, err
		}
		if !sha256RE.MatchString(sum) {
			return nil, errf(ErrMalformed, where+".expected_sha256", f.Path, "%q is not a SHA-256 (64 lowercase hex characters)", sum)
		}
		if f.New {
			return nil, errf(ErrMalformed, where+".expected_sha256", f.Path, "given with expected_revision null (a new file has no SHA-256)")
		}
		if f.Revision != "" && f.Revision != sum[:16] {
			return nil, errf(ErrMalformed, where+".expected_sha256", f.Path, "disagrees with expected_revision %s", f.Revision)
		}
		f.SHA256 = sum
	}
	if !hasRev && f.SHA256 == "" {
		if legacy {
			return nil, errf(ErrMalformed, where, f.Path, "needs expected_revision (or expected_sha256); use expected_revision null for a new file")
		}
		return nil, errf(ErrMalformed, where, f.Path, "needs expected_revision (the revision from read_file, or null for a new file)")
	}
	hasEdits, hasContent := o.has("edits"), o.has("content")
	switch {
	case hasEdits && hasContent:
		return nil, errf(ErrMalformed, where, f.Path, "has both edits and content; send one")
	case hasContent:
		c, err := str(o.val("content"), where+".content")
		if err != nil {
			return nil, err
		}
		f.Content = &c
	case hasEdits:
		if err := decodeEdits(f, o.val("edits"), where+".edits"); err != nil {
			return nil, err
		}
		if f.New {
			return nil, errf(ErrMalformed, where+".edits", f.Path, "a new file (expected_revision null) takes content, not edits")
		}
	default:
		return nil, errf(ErrMalformed, where, f.Path, "needs edits or content")
	}
	return f, nil
}

func decodeEdits(f *File, raw json.RawMessage, where string) error {
	items, err := array(raw, where)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return errf(ErrMalformed, where, f.Path, "is empty")
	}
	if len(items) > MaxEdits {
		return errf(ErrLimit, where, f.Path, "%d edits, over the limit of %d per file", len(items), MaxEdits)
	}
	for i, item := range items {
		w := fmt.Sprintf("%s[%d]", where, i)
		o, err := object(item, w)
		if err != nil {
			return err
		}
		switch {
		case o.has("old_text"):
			if err := o.only(w, "old_text", "new_text"); err != nil {
				return err
			}
			if f.LineEdits != nil {
				return errf(ErrMixedEdits, w, f.Path, "is a text edit after line edits; use one kind of edit per file")
			}
			var e TextEdit
			if e.OldText, err = str(o.val("old_text"), w+".old_text"); err != nil {
				return err
			}
			if e.NewText, err = requiredStr(o, "new_text", w); err != nil {
				return err
			}
			if e.OldText == "" {
				return errf(ErrMalformed, w+".old_text", f.Path, "is empty; an exact text edit needs text to find")
			}
			if e.OldText == e.NewText {
				return errf(ErrNoop, w, f.Path, "old_text and new_text are equal")
			}
			f.TextEdits = append(f.TextEdits, e)
		case o.has("start_line") || o.has("end_line"):
			if err := o.only(w, "start_line", "end_line", "new_text"); err != nil {
				return err
			}
			if f.TextEdits != nil {
				return errf(ErrMixedEdits, w, f.Path, "is a line edit after text edits; use one kind of edit per file")
			}
			var e LineEdit
			if e.StartLine, err = requiredInt(o, "start_line", w); err != nil {
				return err
			}
			if e.EndLine, err = requiredInt(o, "end_line", w); err != nil {
				return err
			}
			if e.NewText, err = requiredStr(o, "new_text", w); err != nil {
				return err
			}
			if e.StartLine < 1 {
				return errf(ErrLineRange, w, f.Path, "start_line %d: lines are numbered from 1", e.StartLine)
			}
			if e.EndLine < e.StartLine-1 {
				return errf(ErrLineRange, w, f.Path, "end_line %d is before start_line %d (end_line = start_line-1 inserts before start_line)", e.EndLine, e.StartLine)
			}
			if n, ok := numberedPrefixes(e.NewText); ok {
				lines := fmt.Sprintf("its %d lines start", n)
				if n == 1 {
					lines = "its line starts"
				}
				return errf(ErrNumberedText, w+".new_text", f.Path, "%s with read_file's line-number prefixes (\"%6d\\t\"); send the file's text without them", lines, e.StartLine)
			}
			f.LineEdits = append(f.LineEdits, e)
		default:
			if err := o.only(w, "old_text", "new_text", "start_line", "end_line"); err != nil {
				return err
			}
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

func decodePatchRequest(top fields) (*Request, error) {
	if err := top.only("request", "patch", "revisions"); err != nil {
		return nil, err
	}
	text, err := str(top.val("patch"), "patch")
	if err != nil {
		return nil, err
	}
	revRaw, ok := top.get("revisions")
	if !ok {
		return nil, errf(ErrMalformed, "request", "", `needs "revisions": {path: revision, or null for a file the patch adds}`)
	}
	revs, err := object(revRaw, "revisions")
	if err != nil {
		return nil, err
	}
	if len(revs.keys) > MaxPaths {
		return nil, errf(ErrLimit, "revisions", "", "%d entries, over the limit of %d paths", len(revs.keys), MaxPaths)
	}
	files, err := ParsePatch(text)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for i := range files {
		f := &files[i]
		w := "revisions." + f.Path
		raw, ok := revs.get(f.Path)
		if !ok {
			if f.New {
				return nil, errf(ErrMalformed, "revisions", f.Path, "missing; give null for a file the patch adds")
			}
			return nil, errf(ErrMalformed, "revisions", f.Path, "missing; give the revision read_file returned")
		}
		used[f.Path] = true
		rev, err := nullableStr(raw, w)
		if err != nil {
			return nil, err
		}
		switch {
		case f.New && rev != nil:
			return nil, errf(ErrMalformed, w, f.Path, "*** Add File needs revision null (the file must not exist)")
		case !f.New && rev == nil:
			return nil, errf(ErrMalformed, w, f.Path, "*** Update File needs the file's revision from read_file, not null")
		case rev != nil && !revisionRE.MatchString(*rev):
			return nil, errf(ErrMalformed, w, f.Path, "%q is not a revision (16 lowercase hex characters from read_file)", *rev)
		case rev != nil:
			f.Revision = *rev
		}
	}
	for _, k := range revs.keys {
		if !used[k] {
			return nil, errf(ErrMalformed, "revisions", k, "is not a file of the patch")
		}
	}
	return &Request{Form: FormPatch, Files: files}, nil
}

// fields is one JSON object: its keys in order, each once, and their raw values.
type fields struct {
	keys []string
	vals []json.RawMessage
}

// get returns the raw value of key k and reports whether the object has it.
func (f fields) get(k string) (json.RawMessage, bool) {
	for i, key := range f.keys {
		if key == k {
			return f.vals[i], true
		}
	}
	return nil, false
}

// val returns the raw value of key k, or nil.
func (f fields) val(k string) json.RawMessage { v, _ := f.get(k); return v }

func (f fields) has(k string) bool { _, ok := f.get(k); return ok }

// only refuses any member not in allowed, naming it.
func (f fields) only(where string, allowed ...string) error {
	for _, k := range f.keys {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return errf(ErrUnknownField, where, "", "unknown field %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// object splits raw (part of a request Decode validated) as a JSON object, refusing
// repeated keys.
func object(raw json.RawMessage, where string) (fields, error) {
	keys, vals, ok := scanObject(raw)
	if !ok {
		return fields{}, errf(ErrMalformed, where, "", "must be a JSON object")
	}
	if len(keys) <= 8 {
		for i := 1; i < len(keys); i++ {
			for j := 0; j < i; j++ {
				if keys[i] == keys[j] {
					return fields{}, errf(ErrDuplicateField, where, "", "field %q appears twice", keys[i])
				}
			}
		}
	} else {
		seen := make(map[string]bool, len(keys))
		for _, k := range keys {
			if seen[k] {
				return fields{}, errf(ErrDuplicateField, where, "", "field %q appears twice", k)
			}
			seen[k] = true
		}
	}
	return fields{keys: keys, vals: vals}, nil
}

func array(raw json.RawMessage, where string) ([]json.RawMessage, error) {
	out, ok := scanArray(raw)
	if !ok {
		return nil, errf(ErrMalformed, where, "", "must be an array")
	}
	return out, nil
}

func str(raw json.RawMessage, where string) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '"' {
		return "", errf(ErrMalformed, where, "", "must be a string")
	}
	s, err := decodeString(t)
	if err != nil {
		return "", errf(ErrMalformed, where, "", "must be a string: %v", err)
	}
	return s, nil
}

func nullableStr(raw json.RawMessage, where string) (*string, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	s, err := str(raw, where)
	if err != nil {
		return nil, errf(ErrMalformed, where, "", "must be a string or null")
	}
	return &s, nil
}

func requiredStr(o fields, k, where string) (string, error) {
	raw, ok := o.get(k)
	if !ok {
		return "", errf(ErrMalformed, where, "", "missing %s", k)
	}
	return str(raw, where+"."+k)
}

func requiredInt(o fields, k, where string) (int, error) {
	raw, ok := o.get(k)
	if !ok {
		return 0, errf(ErrMalformed, where, "", "missing %s", k)
	}
	t := bytes.TrimSpace(raw)
	v, ok := parseInt(t)
	if !ok || v > 1<<31 || v < -(1<<31) {
		return 0, errf(ErrMalformed, where+"."+k, "", "must be an integer, not %s", t)
	}
	return int(v), nil
}

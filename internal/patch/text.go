package patch

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

var numberedHeaderRE = regexp.MustCompile(`^@@ -[0-9]`)

// ParsePatch parses the strict "*** Begin Patch" subset: "*** Add File: PATH" followed by
// "+" lines only, and "*** Update File: PATH" followed by hunks, each opened by a bare
// "@@" and made of lines that start with " " (context), "-" (removed) or "+" (added).
// Delete, Move, "*** End of File", numbered or named hunk headers and any other line are
// refused with their own errors. The returned files have New set for Add File and either
// Content (Add) or Hunks (Update); revisions are left to the caller.
func ParsePatch(text string) ([]File, error) {
	lines := strings.Split(text, "\n")
	// One trailing newline after "*** End Patch" is usual; more is not.
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if len(lines) == 0 || lines[0] != "*** Begin Patch" {
		got := ""
		if len(lines) > 0 {
			got = "; it is " + showLine(lines[0])
		}
		return nil, errf(ErrPatchSyntax, "patch", "", `line 1: must be exactly "*** Begin Patch"%s`, got)
	}
	if len(lines) < 2 || lines[len(lines)-1] != "*** End Patch" {
		return nil, errf(ErrPatchSyntax, "patch", "", `line %d: the last line must be exactly "*** End Patch"; it is %s`, len(lines), showLine(lines[len(lines)-1]))
	}
	body := lines[1 : len(lines)-1]
	var files []File
	var cur *File
	var add *strings.Builder
	var hunk *Hunk
	var old, nw strings.Builder
	changed := false
	flushHunk := func(ln int) error {
		if hunk == nil {
			return nil
		}
		hunk.Old, hunk.New = old.String(), nw.String()
		old.Reset()
		nw.Reset()
		if hunk.Old == "" {
			return errf(ErrPatchSyntax, "patch", cur.Path, "line %d: the hunk has no context or removed line to anchor it; add the line before or after the change as context", hunk.Line)
		}
		if !changed || hunk.Old == hunk.New {
			return errf(ErrNoop, "patch", cur.Path, "line %d: the hunk changes nothing", hunk.Line)
		}
		cur.Hunks = append(cur.Hunks, *hunk)
		hunk, changed = nil, false
		return nil
	}
	flushFile := func(ln int) error {
		if cur == nil {
			return nil
		}
		if err := flushHunk(ln); err != nil {
			return err
		}
		if add != nil {
			c := add.String()
			cur.Content = &c
			add = nil
		} else if len(cur.Hunks) == 0 {
			return errf(ErrPatchSyntax, "patch", cur.Path, "*** Update File has no hunk; start each hunk with a bare @@ line")
		}
		files = append(files, *cur)
		cur = nil
		return nil
	}
	for i, l := range body {
		ln := i + 2
		switch {
		case strings.HasPrefix(l, "*** Add File: "), strings.HasPrefix(l, "*** Update File: "):
			if err := flushFile(ln); err != nil {
				return nil, err
			}
			isAdd := strings.HasPrefix(l, "*** Add File: ")
			p := strings.TrimPrefix(strings.TrimPrefix(l, "*** Add File: "), "*** Update File: ")
			if p == "" || strings.TrimSpace(p) != p {
				return nil, errf(ErrPatchSyntax, "patch", "", "line %d: a file header needs a path without surrounding spaces; it is %s", ln, showLine(l))
			}
			for _, f := range files {
				if f.Path == p {
					return nil, errf(ErrDuplicatePath, "patch", p, "line %d: the file appears twice in the patch; put all its hunks under one header", ln)
				}
			}
			if len(files) >= MaxPaths {
				return nil, errf(ErrLimit, "patch", p, "line %d: more than %d files", ln, MaxPaths)
			}
			cur = &File{Path: p, New: isAdd}
			if isAdd {
				add = &strings.Builder{}
			}
		case strings.HasPrefix(l, "*** Delete File:"):
			return nil, errf(ErrDeleteFile, "patch", strings.TrimSpace(strings.TrimPrefix(l, "*** Delete File:")), "line %d: *** Delete File is not supported; the file tools do not delete files", ln)
		case strings.HasPrefix(l, "*** Move to:"):
			return nil, errf(ErrMoveFile, "patch", strings.TrimSpace(strings.TrimPrefix(l, "*** Move to:")), "line %d: *** Move to is not supported; add the new file and leave the old one", ln)
		case l == "*** End of File" || strings.HasPrefix(l, "*** End of File"):
			return nil, errf(ErrEndOfFile, "patch", pathOf(cur), "line %d: *** End of File is not supported; hunks match complete lines anywhere in the file, so drop the marker", ln)
		case strings.HasPrefix(l, "***"):
			return nil, errf(ErrPatchSyntax, "patch", pathOf(cur), "line %d: unknown directive %q", ln, l)
		case cur == nil:
			return nil, errf(ErrPatchSyntax, "patch", "", "line %d: expected *** Add File: or *** Update File:, got %q", ln, l)
		case add != nil:
			if !strings.HasPrefix(l, "+") {
				return nil, errf(ErrPatchSyntax, "patch", cur.Path, "line %d: every line of *** Add File must start with +", ln)
			}
			add.WriteString(l[1:])
			add.WriteByte('\n')
		case l == "@@":
			if err := flushHunk(ln); err != nil {
				return nil, err
			}
			if len(cur.Hunks) >= MaxEdits {
				return nil, errf(ErrLimit, "patch", cur.Path, "line %d: more than %d hunks in one file", ln, MaxEdits)
			}
			hunk = &Hunk{Line: ln}
		case numberedHeaderRE.MatchString(l):
			return nil, errf(ErrHunkHeader, "patch", cur.Path, "line %d: numbered hunk header %q; use a bare @@ (hunks are found by their exact lines, not by line numbers)", ln, l)
		case strings.HasPrefix(l, "@@"):
			return nil, errf(ErrHunkHeader, "patch", cur.Path, "line %d: named hunk header %q; use a bare @@ and put the anchoring lines in the hunk as context", ln, l)
		case hunk == nil:
			return nil, errf(ErrPatchSyntax, "patch", cur.Path, "line %d: hunk line before any @@; start each hunk with a bare @@", ln)
		case l == "":
			return nil, errf(ErrPatchSyntax, "patch", cur.Path, "line %d: empty line in a hunk; an empty context line is a single space", ln)
		default:
			switch l[0] {
			case ' ':
				old.WriteString(l[1:])
				old.WriteByte('\n')
				nw.WriteString(l[1:])
				nw.WriteByte('\n')
			case '-':
				old.WriteString(l[1:])
				old.WriteByte('\n')
				changed = true
			case '+':
				nw.WriteString(l[1:])
				nw.WriteByte('\n')
				changed = true
			default:
				return nil, errf(ErrPatchSyntax, "patch", cur.Path, "line %d: a hunk line must start with space, - or +, got %q", ln, l)
			}
		}
	}
	if err := flushFile(len(lines)); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errf(ErrPatchSyntax, "patch", "", "the patch changes no file")
	}
	return files, nil
}

func pathOf(f *File) string {
	if f == nil {
		return ""
	}
	return f.Path
}

// Apply returns the file's new bytes given its original bytes: the whole content, or the
// edits applied as this package documents for each kind. It is pure and refuses (returns
// an *Error) any edit that does not match exactly.
func (f *File) Apply(orig []byte) ([]byte, error) {
	switch {
	case f.Content != nil:
		return []byte(*f.Content), nil
	case f.LineEdits != nil:
		return applyLines(f.Path, orig, f.LineEdits)
	case f.TextEdits != nil:
		return applyText(f.Path, orig, f.TextEdits)
	case f.Hunks != nil:
		return applyHunks(f.Path, orig, f.Hunks)
	}
	return nil, errf(ErrMalformed, "", f.Path, "no change")
}

// splitLines returns the lines of b, each with its terminator ("\n"; the last may have
// none).
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

func terminator(line []byte) string {
	switch {
	case bytes.HasSuffix(line, []byte("\r\n")):
		return "\r\n"
	case bytes.HasSuffix(line, []byte("\n")):
		return "\n"
	}
	return ""
}

// applyLines replaces line ranges of the original. A new_text without a final newline gets
// the terminator of the last line it replaces (none at the end of a file without one).
func applyLines(path string, orig []byte, edits []LineEdit) ([]byte, error) {
	lines := splitLines(orig)
	n := len(lines)
	order := make([]int, len(edits))
	for i := range order {
		order[i] = i
	}
	// Edits are few (<= MaxEdits); an insertion sort keeps the original index for messages.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && edits[order[j]].StartLine < edits[order[j-1]].StartLine; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	defaultEOL := "\n"
	if n > 0 && terminator(lines[0]) == "\r\n" {
		defaultEOL = "\r\n"
	}
	var out bytes.Buffer
	out.Grow(len(orig) + 64*len(edits))
	next := 1 // next original line to copy
	for _, k := range order {
		e := edits[k]
		if e.StartLine > n+1 || e.EndLine > n {
			return nil, errf(ErrLineRange, fmt.Sprintf("edits[%d]", k), path, "lines %d-%d: the file has %d lines (start_line may be at most %d to append)", e.StartLine, e.EndLine, n, n+1)
		}
		for ; next < e.StartLine; next++ {
			out.Write(lines[next-1])
		}
		text := e.NewText
		if text != "" && !strings.HasSuffix(text, "\n") {
			switch {
			case e.EndLine >= e.StartLine:
				text += terminator(lines[e.EndLine-1])
			case e.StartLine <= n:
				text += defaultEOL
			}
		}
		// Appending after a last line that has no newline: end that line first.
		if e.StartLine == n+1 && n > 0 && e.EndLine < e.StartLine && terminator(lines[n-1]) == "" && text != "" {
			out.WriteString(defaultEOL)
		}
		out.WriteString(text)
		if e.EndLine >= e.StartLine {
			next = e.EndLine + 1
		}
	}
	for ; next <= n; next++ {
		out.Write(lines[next-1])
	}
	return out.Bytes(), nil
}

// countAt returns the offsets where sub occurs in b (overlapping occurrences included), at
// most limit of them; with lineStart, only offsets at the start of a line count.
func countAt(b []byte, sub []byte, lineStart bool, limit int) []int {
	var at []int
	for from := 0; from <= len(b)-len(sub); {
		i := bytes.Index(b[from:], sub)
		if i < 0 {
			break
		}
		pos := from + i
		if !lineStart || pos == 0 || b[pos-1] == '\n' {
			at = append(at, pos)
			if len(at) >= limit {
				break
			}
		}
		from = pos + 1
	}
	return at
}

func lineOf(b []byte, off int) int { return bytes.Count(b[:off], []byte("\n")) + 1 }

// applyText applies exact text edits in order, each old_text matching exactly once in the
// text as earlier edits left it.
func applyText(path string, orig []byte, edits []TextEdit) ([]byte, error) {
	cur := orig
	for i, e := range edits {
		where := fmt.Sprintf("edits[%d]", i)
		old := []byte(e.OldText)
		at := countAt(cur, old, false, 2)
		switch len(at) {
		case 0:
			if bytes.Contains(cur, []byte("\r\n")) && !strings.Contains(e.OldText, "\r\n") && strings.Contains(e.OldText, "\n") &&
				len(countAt(cur, []byte(strings.ReplaceAll(e.OldText, "\n", "\r\n")), false, 1)) > 0 {
				return nil, errf(ErrNoMatch, where, path, "old_text does not match: the file uses CRLF line endings; send old_text with \\r\\n")
			}
			if fz := fuzzyLine(cur, e.OldText); fz > 0 {
				return nil, errf(ErrFuzzy, where, path, "old_text matches only when whitespace is ignored (near line %d); fuzzy matches are refused: copy the exact text from read_file", fz)
			}
			return nil, errf(ErrNoMatch, where, path, "old_text matches nowhere in the file (after the edits before it); read the file again and copy the exact text")
		case 1:
		default:
			return nil, errf(ErrAmbiguous, where, path, "old_text matches more than once (lines %d and %d); include more surrounding text so it matches exactly once", lineOf(cur, at[0]), lineOf(cur, at[1]))
		}
		next := make([]byte, 0, len(cur)-len(old)+len(e.NewText))
		next = append(next, cur[:at[0]]...)
		next = append(next, e.NewText...)
		next = append(next, cur[at[0]+len(old):]...)
		cur = next
	}
	return cur, nil
}

// applyHunks applies "@@" hunks in order; each hunk's old lines must occur exactly once, as
// complete lines, at or after the end of the previous hunk's change.
func applyHunks(path string, orig []byte, hunks []Hunk) ([]byte, error) {
	if len(orig) > 0 && orig[len(orig)-1] != '\n' {
		return nil, errf(ErrNeedsContent, "patch", path, "the file does not end with a newline, so hunks cannot match its last line exactly; replace the whole content instead (\"content\")")
	}
	if bytes.Contains(orig, []byte("\r\n")) {
		return nil, errf(ErrNeedsContent, "patch", path, "the file has CRLF line endings; replace the whole content instead (\"content\")")
	}
	cur := orig
	minPos := 0
	for i, h := range hunks {
		where := fmt.Sprintf("patch hunk %d (line %d)", i+1, h.Line)
		at := countAt(cur, []byte(h.Old), true, 2)
		switch len(at) {
		case 0:
			if fz := fuzzyLine(cur, h.Old); fz > 0 {
				return nil, errf(ErrFuzzy, where, path, "matches only when whitespace is ignored (near line %d); fuzzy matches are refused: copy the exact lines from read_file", fz)
			}
			return nil, errf(ErrNoMatch, where, path, "its context and removed lines match nowhere as complete lines; read the file again and copy them exactly")
		case 1:
		default:
			return nil, errf(ErrAmbiguous, where, path, "matches more than once (lines %d and %d); add context lines so it matches exactly once", lineOf(cur, at[0]), lineOf(cur, at[1]))
		}
		if at[0] < minPos {
			return nil, errf(ErrHunkOrder, where, path, "matches at line %d, before the previous hunk's change; list hunks in file order", lineOf(cur, at[0]))
		}
		next := make([]byte, 0, len(cur)-len(h.Old)+len(h.New))
		next = append(next, cur[:at[0]]...)
		next = append(next, h.New...)
		next = append(next, cur[at[0]+len(h.Old):]...)
		cur = next
		minPos = at[0] + len(h.New)
	}
	return cur, nil
}

// fuzzyLine returns the line (1-based) where want matches b when runs of whitespace are
// ignored line by line, or 0. Used only to explain a refusal, never to apply.
func fuzzyLine(b []byte, want string) int {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	wl := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	for i := range wl {
		wl[i] = norm(wl[i])
	}
	if len(wl) == 0 || (len(wl) == 1 && wl[0] == "") {
		return 0
	}
	hl := strings.Split(string(b), "\n")
	if len(hl)*len(wl) > 4_000_000 {
		return 0 // explaining is not worth a quadratic scan of a huge file
	}
	for i := 0; i+len(wl) <= len(hl); i++ {
		ok := true
		for j := range wl {
			if norm(hl[i+j]) != wl[j] {
				ok = false
				break
			}
		}
		if ok {
			return i + 1
		}
	}
	return 0
}

// showLine quotes a line of patch text for a refusal, naming what is invisible in it: a
// trailing space or tab, a carriage return, a byte-order mark.
func showLine(l string) string {
	q := fmt.Sprintf("%q", l)
	var notes []string
	switch {
	case strings.HasSuffix(l, "\r"):
		notes = append(notes, "a carriage return at the end (CRLF line endings)")
	case strings.HasSuffix(l, " "):
		notes = append(notes, "a trailing space")
	case strings.HasSuffix(l, "\t"):
		notes = append(notes, "a trailing tab")
	}
	if strings.HasPrefix(l, "\uFEFF") {
		notes = append(notes, "a byte-order mark at the start")
	}
	if strings.HasPrefix(l, " ") {
		notes = append(notes, "a leading space")
	}
	if len(notes) == 0 {
		return q
	}
	return q + " (with " + strings.Join(notes, " and ") + ")"
}

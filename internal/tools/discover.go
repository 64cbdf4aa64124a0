package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Discovery limits.
const (
	DefaultMaxEntries = 500  // list_dir and glob entries returned by default
	MaxEntriesLimit   = 5000 // the most a caller may ask for
	MaxListDepth      = 10
	DefaultMaxMatches = 200      // grep matches (or files) returned by default
	MaxMatchesLimit   = 2000     // the most a caller may ask for
	MaxContextLines   = 10       // grep context lines each side
	MaxOutputBytes    = 64 << 10 // text bytes a discovery result carries at most
	grepMaxFileBytes  = filetools.MaxReadBytes
	binarySniffBytes  = 8000 // git's rule: a NUL in the first 8000 bytes means binary
)

// ListDirInput is list_dir's arguments.
type ListDirInput struct {
	Path           string `json:"path,omitempty" jsonschema:"directory relative to the workspace root (default: the root)"`
	Depth          int    `json:"depth,omitempty" jsonschema:"levels to descend, 1 = only the directory's own entries (default 1, at most 10)"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also list what .gitignore and .git/info/exclude ignore"`
	MaxEntries     int    `json:"max_entries,omitempty" jsonschema:"entries returned at most (default 500)"`
}

// DirEntry is one entry of list_dir or glob.
type DirEntry struct {
	Path string `json:"path"`           // relative to the workspace root
	Type string `json:"type"`           // file, dir, symlink (never followed) or other
	Size int64  `json:"size,omitempty"` // bytes, for files
}

// ListDirResult is list_dir's answer.
type ListDirResult struct {
	Path      string     `json:"path"`
	Entries   []DirEntry `json:"entries"`
	Truncated bool       `json:"truncated"` // more entries than max_entries
}

func clampMax(n, def, limit int) int {
	if n <= 0 {
		return def
	}
	return min(n, limit)
}

func listDir(ctx context.Context, env *Env, in ListDirInput) (ListDirResult, error) {
	if in.Depth < 0 || in.Depth > MaxListDepth {
		return ListDirResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("depth %d: use 1 to %d", in.Depth, MaxListDepth)}
	}
	depth := max(in.Depth, 1)
	maxN := clampMax(in.MaxEntries, DefaultMaxEntries, MaxEntriesLimit)
	res := ListDirResult{Path: displayDir(in.Path), Entries: []DirEntry{}}
	err := walkTree(ctx, env.Root, in.Path, walkOptions{MaxDepth: depth, IncludeIgnored: in.IncludeIgnored, Stat: true}, func(e walkEntry) error {
		if len(res.Entries) == maxN {
			res.Truncated = true
			return errStop
		}
		de := DirEntry{Path: e.Rel, Type: e.Kind}
		if e.Kind == KindFile {
			de.Size = e.Info.Size
		}
		res.Entries = append(res.Entries, de)
		return nil
	})
	return res, pathErr(err)
}

func displayDir(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// pathErr turns a workspace path refusal into an *Error the model can act on.
func pathErr(err error) error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return err
	}
	code := filetools.Code(err)
	msg := err.Error()
	switch {
	case errors.Is(err, wsfs.ErrSymlink):
		msg += ": symlinks are never followed; name the path the link points to, if it is inside the workspace"
	case errors.Is(err, wsfs.ErrEscape):
		msg += ": only paths inside the workspace can be used; give a path relative to the workspace root"
	case errors.Is(err, wsfs.ErrNotExist):
		msg += ": list_dir or glob show what exists"
	}
	return &Error{Code: code, Message: msg, Err: err}
}

// GlobInput is glob's arguments.
type GlobInput struct {
	Pattern        string `json:"pattern" jsonschema:"doublestar pattern relative to path, e.g. **/*.go or cmd/*/main.go"`
	Path           string `json:"path,omitempty" jsonschema:"directory the pattern is relative to (default: the workspace root)"`
	Sort           string `json:"sort,omitempty" jsonschema:"newest (most recently modified first, the default) or path"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also match what .gitignore and .git/info/exclude ignore"`
	MaxResults     int    `json:"max_results,omitempty" jsonschema:"paths returned at most (default 500)"`
}

// GlobResult is glob's answer.
type GlobResult struct {
	Pattern   string     `json:"pattern"`
	Matches   []DirEntry `json:"matches"`
	Total     int        `json:"total"`     // matches found before truncation
	Truncated bool       `json:"truncated"` // more than max_results matched
}

func globTool(ctx context.Context, env *Env, in GlobInput) (GlobResult, error) {
	if in.Pattern == "" {
		return GlobResult{}, &Error{Code: "invalid_arguments", Message: `pattern is empty: give a doublestar pattern such as "**/*.go"`}
	}
	if !doublestar.ValidatePattern(in.Pattern) {
		return GlobResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("pattern %q is not a valid doublestar pattern (check brackets and braces)", in.Pattern)}
	}
	sortBy := in.Sort
	if sortBy == "" {
		sortBy = "newest"
	}
	if sortBy != "newest" && sortBy != "path" {
		return GlobResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("sort %q: use newest or path", in.Sort)}
	}
	maxN := clampMax(in.MaxResults, DefaultMaxEntries, MaxEntriesLimit)
	base := strings.TrimSuffix(in.Path, "/")
	if base == "." {
		base = ""
	}
	type hit struct {
		e   DirEntry
		mod int64
	}
	var hits []hit
	err := walkTree(ctx, env.Root, in.Path, walkOptions{IncludeIgnored: in.IncludeIgnored, Stat: true}, func(e walkEntry) error {
		rel := e.Rel
		if base != "" {
			rel = strings.TrimPrefix(rel, base+"/")
		}
		if ok, _ := doublestar.Match(in.Pattern, rel); ok {
			de := DirEntry{Path: e.Rel, Type: e.Kind}
			if e.Kind == KindFile {
				de.Size = e.Info.Size
			}
			hits = append(hits, hit{de, e.Info.ModTime})
			if len(hits) > 20*MaxEntriesLimit {
				return errStop
			}
		}
		return nil
	})
	if err != nil {
		return GlobResult{}, pathErr(err)
	}
	if sortBy == "newest" {
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].mod > hits[j].mod })
	}
	res := GlobResult{Pattern: in.Pattern, Matches: []DirEntry{}, Total: len(hits)}
	for _, h := range hits {
		if len(res.Matches) == maxN {
			res.Truncated = true
			break
		}
		res.Matches = append(res.Matches, h.e)
	}
	return res, nil
}

// GrepInput is grep's arguments.
type GrepInput struct {
	Pattern         string `json:"pattern" jsonschema:"RE2 regular expression (Go syntax), matched against each line"`
	Path            string `json:"path,omitempty" jsonschema:"file or directory to search (default: the workspace root)"`
	Glob            string `json:"glob,omitempty" jsonschema:"only files whose workspace-relative path matches this doublestar pattern, e.g. **/*.go"`
	Context         int    `json:"context,omitempty" jsonschema:"lines of context before and after each match (0 to 10)"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"match letters of either case"`
	FilesOnly       bool   `json:"files_only,omitempty" jsonschema:"return only the paths of files with a match"`
	IncludeIgnored  bool   `json:"include_ignored,omitempty" jsonschema:"also search what .gitignore and .git/info/exclude ignore"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"matches (or files, with files_only) returned at most (default 200)"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"` // 1-based
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// GrepResult is grep's answer.
type GrepResult struct {
	Pattern       string      `json:"pattern"`
	Matches       []GrepMatch `json:"matches,omitempty"`
	Files         []string    `json:"files,omitempty"` // with files_only
	FilesSearched int         `json:"files_searched"`
	FilesSkipped  int         `json:"files_skipped,omitempty"` // binary, over 16 MiB, unreadable
	Truncated     bool        `json:"truncated"`               // more matches than max_results, or the output budget ran out
}

func grepTool(ctx context.Context, env *Env, in GrepInput) (GrepResult, error) {
	if in.Pattern == "" {
		return GrepResult{}, &Error{Code: "invalid_arguments", Message: "pattern is empty: give an RE2 regular expression"}
	}
	if in.Context < 0 || in.Context > MaxContextLines {
		return GrepResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("context %d: use 0 to %d", in.Context, MaxContextLines)}
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return GrepResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("glob %q is not a valid doublestar pattern", in.Glob)}
	}
	flags := "(?m)"
	if in.CaseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + in.Pattern)
	if err != nil {
		return GrepResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("pattern: %v (RE2 syntax: no backreferences or lookaround; escape literal characters such as ( [ . with \\)", err)}
	}
	maxN := clampMax(in.MaxResults, DefaultMaxMatches, MaxMatchesLimit)
	m := newMatcher(re)

	// The files to search: one named file, or a walk.
	var files []string
	if in.Path != "" {
		if _, _, err := env.Root.ReadFile(in.Path, 1); err == nil || errors.Is(err, wsfs.ErrTooLarge) {
			rel, _ := env.Root.Rel(in.Path)
			files = []string{rel}
		}
	}
	if files == nil {
		err := walkTree(ctx, env.Root, in.Path, walkOptions{IncludeIgnored: in.IncludeIgnored}, func(e walkEntry) error {
			if e.Kind != KindFile {
				return nil
			}
			if in.Glob != "" {
				if ok, _ := doublestar.Match(in.Glob, e.Rel); !ok {
					return nil
				}
			}
			files = append(files, e.Rel)
			return nil
		})
		if err != nil {
			return GrepResult{}, pathErr(err)
		}
	}

	type fileResult struct {
		matches []GrepMatch
		skipped bool
	}
	results := make([]fileResult, len(files))
	var next sync.Mutex
	idx := 0
	var wg sync.WaitGroup
	// Twice as many readers as processors: a reader waiting in read(2) leaves its processor
	// to another.
	for w := 0; w < 2*runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // reused: only the matches (copied into strings) outlive a file
			for ctx.Err() == nil {
				next.Lock()
				i := idx
				idx++
				next.Unlock()
				if i >= len(files) {
					return
				}
				data, _, err := env.Root.ReadFileInto(files[i], grepMaxFileBytes, buf)
				if cap(data) > cap(buf) && cap(data) <= 1<<20 {
					buf = data
				}
				if err != nil || bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
					results[i].skipped = true
					continue
				}
				results[i].matches = grepLines(files[i], data, m, in.Context, in.FilesOnly, maxN)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return GrepResult{}, err
	}

	res := GrepResult{Pattern: in.Pattern, FilesSearched: len(files)}
	budget := MaxOutputBytes
	for _, fr := range results {
		if fr.skipped {
			res.FilesSkipped++
		}
		if len(fr.matches) == 0 || res.Truncated {
			continue
		}
		if in.FilesOnly {
			if len(res.Files) == maxN || budget < len(fr.matches[0].Path) {
				res.Truncated = true
				continue
			}
			budget -= len(fr.matches[0].Path)
			res.Files = append(res.Files, fr.matches[0].Path)
			continue
		}
		for _, m := range fr.matches {
			size := len(m.Path) + len(m.Text) + 16
			for _, l := range m.Before {
				size += len(l)
			}
			for _, l := range m.After {
				size += len(l)
			}
			if len(res.Matches) == maxN || budget < size {
				res.Truncated = true
				break
			}
			budget -= size
			res.Matches = append(res.Matches, m)
		}
	}
	if in.FilesOnly && res.Files == nil {
		res.Files = []string{}
	}
	if !in.FilesOnly && res.Matches == nil {
		res.Matches = []GrepMatch{}
	}
	return res, nil
}

// matcher finds the leftmost match of a grep pattern: a compiled RE2 regular expression, or,
// when the pattern is a plain literal, bytes.Index (Go's regexp runs its automaton after
// finding a literal prefix; a complete literal needs nothing more).
type matcher struct {
	re  *regexp.Regexp
	lit []byte // the whole pattern, when it is a literal
}

func newMatcher(re *regexp.Regexp) *matcher {
	m := &matcher{re: re}
	if lit, complete := re.LiteralPrefix(); complete && lit != "" && !strings.Contains(lit, "\n") {
		m.lit = []byte(lit)
	}
	return m
}

func (m *matcher) find(b []byte) []int {
	if m.lit != nil {
		i := bytes.Index(b, m.lit)
		if i < 0 {
			return nil
		}
		return []int{i, i + len(m.lit)}
	}
	return m.re.FindIndex(b)
}

func (m *matcher) match(b []byte) bool {
	if m.lit != nil {
		return bytes.Contains(b, m.lit)
	}
	return m.re.Match(b)
}

// grepLines returns the matching lines of data (at most maxN+1, so the caller sees that
// more exist), each with ctxLines of context; with filesOnly, one entry naming the file.
// Matching runs over the whole buffer (re has (?m), so ^ and $ are line anchors) and maps
// each match to its line; a match that spans a newline (a class such as \s or [^x] can
// match one) is checked again line by line, so the result is that of matching each line.
func grepLines(p string, data []byte, re *matcher, ctxLines int, filesOnly bool, maxN int) []GrepMatch {
	var out []GrepMatch
	var lines []string
	lineNo, lineStart := 1, 0 // the line holding offset lineStart
	lastLine := 0
	emit := func(n, start int) bool {
		if n == lastLine {
			return false
		}
		lastLine = n
		if filesOnly {
			out = append(out, GrepMatch{Path: p})
			return true
		}
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		m := GrepMatch{Path: p, Line: n, Text: cutLine(strings.TrimSuffix(string(data[start:end]), "\r"))}
		if ctxLines > 0 {
			if lines == nil {
				lines = strings.Split(string(data), "\n")
			}
			for i := max(0, n-1-ctxLines); i < n-1; i++ {
				m.Before = append(m.Before, cutLine(strings.TrimSuffix(lines[i], "\r")))
			}
			for i := n; i < min(len(lines), n+ctxLines); i++ {
				if i == len(lines)-1 && lines[i] == "" {
					break
				}
				m.After = append(m.After, cutLine(strings.TrimSuffix(lines[i], "\r")))
			}
		}
		out = append(out, m)
		return len(out) > maxN
	}
	pos := 0
	for pos <= len(data) {
		loc := re.find(data[pos:])
		if loc == nil {
			break
		}
		ms, me := pos+loc[0], pos+loc[1]
		// Advance to the line holding ms.
		for {
			nl := bytes.IndexByte(data[lineStart:ms], '\n')
			if nl < 0 {
				break
			}
			lineStart += nl + 1
			lineNo++
		}
		lineEnd := bytes.IndexByte(data[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(data)
		} else {
			lineEnd += lineStart
		}
		if me <= lineEnd {
			if emit(lineNo, lineStart) || filesOnly {
				return out
			}
		} else if re.match(data[lineStart:lineEnd]) {
			// The match spans a newline, but its first line matches on its own.
			if emit(lineNo, lineStart) || filesOnly {
				return out
			}
		}
		// Continue on the next line: a line is reported once.
		if lineEnd == len(data) {
			break
		}
		pos, lineStart, lineNo = lineEnd+1, lineEnd+1, lineNo+1
	}
	return out
}

// cutLine shortens a line over filetools.MaxLineBytes, with a visible marker.
func cutLine(s string) string {
	if len(s) <= filetools.MaxLineBytes {
		return s
	}
	cut := filetools.MaxLineBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … [line cut: %d bytes]", len(s))
}

var listDirTool = Must(Spec[ListDirInput, ListDirResult]{
	Name: "list_dir",
	Description: "List a workspace directory: each entry's path, type (file, dir, symlink, other) and size, to a depth. " +
		"Symlinks are listed, never followed; what .gitignore and .git/info/exclude ignore is left out unless include_ignored.",
	ReadOnly: true,
	Call:     listDir,
})

var globTool_ = Must(Spec[GlobInput, GlobResult]{
	Name: "glob",
	Description: "Find workspace paths matching a doublestar pattern (** matches any number of directories), newest first or sorted by path. " +
		"Ignored files are left out unless include_ignored; symlinks are never followed.",
	ReadOnly: true,
	Call:     globTool,
})

var grepTool_ = Must(Spec[GrepInput, GrepResult]{
	Name: "grep",
	Description: "Search workspace files for lines matching an RE2 regular expression, with optional context lines, a case flag, " +
		"a doublestar path filter and a files-only mode. Binary files are skipped; ignored files are left out unless include_ignored.",
	ReadOnly: true,
	Call:     grepTool,
})

package gitsafe

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LineRange is an inclusive range of 1-based line numbers.
type LineRange struct {
	Start, End int
}

// BlameOptions selects what Blame annotates (git-blame(1)).
type BlameOptions struct {
	// Revision to blame at; empty means the working tree file.
	Revision string
	// Path of the file, relative to the workspace root.
	Path string
	// Lines limits the annotation to these ranges (-L START,END); all lines when empty.
	Lines []LineRange
}

// BlameCommit is the commit a line came from.
type BlameCommit struct {
	Author      Person `json:"author"`
	Committer   Person `json:"committer"`
	Summary     string `json:"summary"`
	Filename    string `json:"filename"`           // the file's name in that commit
	Previous    string `json:"previous,omitempty"` // "HASH PATH" of the version before
	Boundary    bool   `json:"boundary,omitempty"` // the commit is a boundary of the walk
	Uncommitted bool   `json:"uncommitted,omitempty"`
}

// BlameLine is one annotated line.
type BlameLine struct {
	Line     int    `json:"line"`      // in the blamed version
	OrigLine int    `json:"orig_line"` // in the commit it came from
	Commit   string `json:"commit"`
	Content  string `json:"content"`
}

// Blame is the parsed `git blame --porcelain`.
type Blame struct {
	Path      string                 `json:"path"`
	Lines     []BlameLine            `json:"lines"`
	Commits   map[string]BlameCommit `json:"commits"`
	Truncated bool                   `json:"truncated"`
}

// Blame annotates each line of a file with the commit that last changed it. Errors: the
// Check's refusal, *ArgError, *GitError.
func (r *Repo) Blame(ctx context.Context, opts BlameOptions) (*Blame, error) {
	if err := checkPaths([]string{opts.Path}); err != nil {
		return nil, err
	}
	args := []string{"blame", "--porcelain"}
	for _, lr := range opts.Lines {
		if lr.Start < 1 || lr.End < lr.Start {
			return nil, &ArgError{What: "line range", Value: fmt.Sprintf("%d,%d", lr.Start, lr.End), Why: "must be START,END with 1 <= START <= END"}
		}
		args = append(args, "-L", fmt.Sprintf("%d,%d", lr.Start, lr.End))
	}
	if opts.Revision != "" {
		// git 2.39's blame has no --end-of-options; checkRevision keeps '-' out.
		if err := checkRevision(opts.Revision); err != nil {
			return nil, err
		}
		args = append(args, opts.Revision)
	}
	args = append(args, "--", opts.Path)
	out, err := r.run(ctx, nil, args)
	if err != nil {
		return nil, err
	}
	b, err := parseBlame(string(out.stdout), out.truncated)
	if err != nil {
		return nil, err
	}
	b.Path = opts.Path
	return b, nil
}

// parseBlame parses --porcelain output (git-blame(1) "THE PORCELAIN FORMAT").
func parseBlame(data string, truncated bool) (*Blame, error) {
	b := &Blame{Lines: []BlameLine{}, Commits: map[string]BlameCommit{}, Truncated: truncated}
	lines := strings.Split(data, "\n")
	lines = lines[:len(lines)-1] // after the final '\n', or the partial line
	var (
		cur  BlameLine
		c    BlameCommit
		have bool
	)
	var at, ct [2]string // author and committer time and tz
	for _, ln := range lines {
		if strings.HasPrefix(ln, "\t") {
			if !have {
				return nil, fmt.Errorf("git blame: content before a header")
			}
			cur.Content = ln[1:]
			b.Lines = append(b.Lines, cur)
			if _, seen := b.Commits[cur.Commit]; !seen {
				c.Author.Date = blameTime(at)
				c.Committer.Date = blameTime(ct)
				c.Uncommitted = strings.Trim(cur.Commit, "0") == ""
				b.Commits[cur.Commit] = c
			}
			have = false
			continue
		}
		key, val, _ := strings.Cut(ln, " ")
		if !have {
			f := strings.Fields(ln)
			if len(f) < 3 || !isHex(f[0]) {
				return nil, fmt.Errorf("git blame: unexpected line %q", ln)
			}
			cur = BlameLine{Commit: f[0]}
			cur.OrigLine, _ = strconv.Atoi(f[1])
			cur.Line, _ = strconv.Atoi(f[2])
			have = true
			if _, seen := b.Commits[cur.Commit]; !seen {
				c, at, ct = BlameCommit{}, [2]string{}, [2]string{}
			}
			continue
		}
		switch key {
		case "author":
			c.Author.Name = val
		case "author-mail":
			c.Author.Email = strings.Trim(val, "<>")
		case "author-time":
			at[0] = val
		case "author-tz":
			at[1] = val
		case "committer":
			c.Committer.Name = val
		case "committer-mail":
			c.Committer.Email = strings.Trim(val, "<>")
		case "committer-time":
			ct[0] = val
		case "committer-tz":
			ct[1] = val
		case "summary":
			c.Summary = val
		case "filename":
			c.Filename = val
		case "previous":
			c.Previous = val
		case "boundary":
			c.Boundary = true
		}
	}
	if have {
		b.Truncated = true
	}
	return b, nil
}

// blameTime turns porcelain "author-time" seconds and "author-tz" (+hhmm) into a time.
func blameTime(v [2]string) time.Time {
	secs, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return time.Time{}
	}
	t := time.Unix(secs, 0).UTC()
	if tz, err := time.Parse("-0700", v[1]); err == nil {
		t = t.In(tz.Location())
	}
	return t
}

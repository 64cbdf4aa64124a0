package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/s-code-dev/s-code/internal/wsfs"
)

// maxIgnoreBytes caps one .gitignore or info/exclude file read by the walker.
const maxIgnoreBytes = 1 << 20

// Entry kinds in discovery results.
const (
	KindFile    = "file"
	KindDir     = "dir"
	KindSymlink = "symlink" // listed, never followed
	KindOther   = "other"   // devices, sockets, FIFOs
)

// walkEntry is one entry met by walkTree.
type walkEntry struct {
	Rel   string // relative to the workspace root
	Kind  string
	Depth int // 1 for entries of the start directory
	Info  wsfs.Info
}

// errSkipDir, returned by a visit function for a directory, skips its contents.
var errSkipDir = errors.New("skip directory")

// errStop, returned by a visit function, ends the walk without an error.
var errStop = errors.New("stop walk")

type walkOptions struct {
	MaxDepth       int  // 0: unlimited
	IncludeIgnored bool // do not apply .gitignore and .git/info/exclude
	Stat           bool // fill Info (one fstatat per entry)
}

// walkTree visits the entries below the directory start of root, depth first, entries of a
// directory in name order. Every directory is opened from its parent's handle without
// following a symlink (wsfs.Dir); symlinks are reported, never followed. ".git" is never
// entered. Unless IncludeIgnored, what .gitignore files (of start's ancestors and of each
// directory walked) and .git/info/exclude ignore is left out, as git would (a directory
// ignored is not entered, so nothing below it can be re-included). A directory that cannot
// be read is skipped silently, as `git ls-files` does not fail on it either.
func walkTree(ctx context.Context, root *wsfs.Root, start string, opts walkOptions, visit func(e walkEntry) error) error {
	dir, err := root.OpenDir(start)
	if err != nil {
		return err
	}
	var patterns []gitignore.Pattern
	if !opts.IncludeIgnored {
		patterns = ancestorPatterns(root, dir.Rel())
	}
	err = walkDir(ctx, dir, 1, patterns, opts, visit)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// ancestorPatterns returns the patterns of .git/info/exclude and of the .gitignore files
// from the root down to the directory rel (itself excluded: walkDir reads its own).
func ancestorPatterns(root *wsfs.Root, rel string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	if b, _, err := root.ReadFile(".git/info/exclude", maxIgnoreBytes); err == nil {
		ps = append(ps, parseIgnore(b, nil)...)
	}
	if rel == "" {
		return ps
	}
	comps := strings.Split(rel, "/")
	for i := range comps {
		domain := comps[:i]
		p := path.Join(append(append([]string{}, domain...), ".gitignore")...)
		if b, _, err := root.ReadFile(p, maxIgnoreBytes); err == nil {
			ps = append(ps, parseIgnore(b, domain)...)
		}
	}
	return ps
}

// parseIgnore parses the lines of one ignore file whose directory is domain
// (gitignore(5): blank lines and "#" comments skipped, trailing spaces trimmed unless escaped).
func parseIgnore(b []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if t := strings.TrimRight(line, " "); !strings.HasSuffix(t, "\\") {
			line = t
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

func walkDir(ctx context.Context, dir *wsfs.Dir, depth int, patterns []gitignore.Pattern, opts walkOptions, visit func(e walkEntry) error) error {
	defer dir.Close()
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := dir.ReadDir()
	if err != nil && len(ents) == 0 {
		return nil
	}
	var domain []string
	if dir.Rel() != "" {
		domain = strings.Split(dir.Rel(), "/")
	}
	if !opts.IncludeIgnored {
		if b, _, err := dir.ReadFile(".gitignore", maxIgnoreBytes); err == nil {
			patterns = append(patterns[:len(patterns):len(patterns)], parseIgnore(b, domain)...)
		}
	}
	var m gitignore.Matcher
	if len(patterns) > 0 {
		m = gitignore.NewMatcher(patterns)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, d := range ents {
		name := d.Name()
		if name == ".git" {
			continue
		}
		kind := kindOf(d.Type())
		rel := dir.Join(name)
		if m != nil && m.Match(append(domain[:len(domain):len(domain)], name), kind == KindDir) {
			continue
		}
		e := walkEntry{Rel: rel, Kind: kind, Depth: depth}
		if opts.Stat {
			info, mode, err := dir.Lstat(name)
			if err != nil {
				continue // gone since the listing
			}
			e.Info, e.Kind = info, kindOf(mode)
		}
		err := visit(e)
		if errors.Is(err, errSkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if e.Kind == KindDir && (opts.MaxDepth == 0 || depth < opts.MaxDepth) {
			sub, err := dir.OpenDir(name)
			if err != nil {
				continue // replaced by a symlink or removed since the listing
			}
			if err := walkDir(ctx, sub, depth+1, patterns, opts, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func kindOf(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return KindSymlink
	case t.IsDir():
		return KindDir
	case t.IsRegular():
		return KindFile
	}
	return KindOther
}

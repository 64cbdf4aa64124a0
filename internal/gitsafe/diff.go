package gitsafe

import (
	"bytes"
	"context"
	"strconv"
	"strings"
)

// DiffOptions selects what Diff compares (git-diff(1)).
type DiffOptions struct {
	// Staged compares the index with HEAD (or with Revisions[0]) instead of the working
	// tree with the index.
	Staged bool
	// Revisions holds zero, one or two revisions: none compares the working tree (or index,
	// see Staged); one compares the working tree (or index) with it; two compare the
	// revisions with each other. One may also be a range "A..B" or "A...B".
	Revisions []string
	// Paths limits the diff to these pathspecs.
	Paths []string
}

// FileStat is the line count of one changed file (git-diff(1) --numstat).
type FileStat struct {
	Path     string `json:"path"`
	OrigPath string `json:"orig_path,omitempty"` // the source of a rename or copy
	Added    int    `json:"added"`
	Deleted  int    `json:"deleted"`
	Binary   bool   `json:"binary,omitempty"` // counts are unknown ("-")
}

// Diff is a patch with its per-file statistics.
type Diff struct {
	Files     []FileStat `json:"files"`
	Patch     string     `json:"patch"`
	Truncated bool       `json:"truncated"` // the output cap cut the patch (and maybe Files) short
}

// Diff returns the patch and per-file statistics of `git diff --numstat --patch`, run
// with --no-ext-diff and --no-textconv. Errors: the Check's refusal, *ArgError for a
// revision that could be read as an option, *GitError (e.g. an unknown revision).
func (r *Repo) Diff(ctx context.Context, opts DiffOptions) (*Diff, error) {
	if len(opts.Revisions) > 2 {
		return nil, &ArgError{What: "revisions", Value: strings.Join(opts.Revisions, " "), Why: "at most two"}
	}
	for _, rev := range opts.Revisions {
		if err := checkRevision(rev); err != nil {
			return nil, err
		}
	}
	if err := checkPaths(opts.Paths); err != nil {
		return nil, err
	}
	// --ignore-submodules=dirty: as in Status, git never runs inside a submodule.
	args := []string{"diff", "--no-color", "--numstat", "--patch", "-z", "--ignore-submodules=dirty"}
	if opts.Staged {
		args = append(args, "--cached")
	}
	args = append(args, "--end-of-options")
	args = append(args, opts.Revisions...)
	args = append(args, "--")
	args = append(args, opts.Paths...)
	out, err := r.run(ctx, nil, args)
	if err != nil {
		return nil, err
	}
	return parseNumstatPatch(out.stdout, out.truncated), nil
}

// parseNumstatPatch splits `--numstat --patch -z` output: NUL-terminated numstat records
// ("A\tD\tPATH", or "A\tD\t" then OLD and NEW for a rename), an empty record, the patch.
func parseNumstatPatch(data []byte, truncated bool) *Diff {
	d := &Diff{Files: []FileStat{}, Truncated: truncated}
	rest := data
	next := func() (string, bool) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return "", false
		}
		s := string(rest[:i])
		rest = rest[i+1:]
		return s, true
	}
	for {
		rec, ok := next()
		if !ok {
			// Truncated inside the statistics, or no changes at all.
			return d
		}
		if rec == "" {
			break
		}
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		fs := FileStat{Path: f[2]}
		if f[0] == "-" && f[1] == "-" {
			fs.Binary = true
		} else {
			fs.Added, _ = strconv.Atoi(f[0])
			fs.Deleted, _ = strconv.Atoi(f[1])
		}
		if fs.Path == "" {
			orig, ok1 := next()
			path, ok2 := next()
			if !ok1 || !ok2 {
				return d
			}
			fs.OrigPath, fs.Path = orig, path
		}
		d.Files = append(d.Files, fs)
	}
	d.Patch = string(rest)
	return d
}

package gitsafe

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// StatusOptions selects what Status reports.
type StatusOptions struct {
	// Untracked is "no", "normal" (the default when empty) or "all" (git-status(1)
	// --untracked-files).
	Untracked string
	// Ignored also lists ignored files.
	Ignored bool
	// Paths limits the report to these pathspecs.
	Paths []string
}

// Branch is the branch header of a status (git-status(1) "Branch Headers").
type Branch struct {
	OID      string `json:"oid"`                // commit of HEAD, or "(initial)"
	Head     string `json:"head"`               // branch name, or "(detached)"
	Upstream string `json:"upstream,omitempty"` // e.g. "origin/main"
	Ahead    int    `json:"ahead"`
	Behind   int    `json:"behind"`
}

// Entry kinds of a status (git-status(1) porcelain v2 line types).
const (
	KindChanged   = "changed"   // "1": ordinary change
	KindRenamed   = "renamed"   // "2" with R score
	KindCopied    = "copied"    // "2" with C score
	KindUnmerged  = "unmerged"  // "u"
	KindUntracked = "untracked" // "?"
	KindIgnored   = "ignored"   // "!"
)

// StatusEntry is one path of a status.
type StatusEntry struct {
	Kind string `json:"kind"` // one of the Kind* constants
	// XY is the index (X) and worktree (Y) status, '.' for unchanged, e.g. ".M", "A.".
	XY string `json:"xy,omitempty"`
	// Submodule is "N..." for a non-submodule, else "S<c><m><u>".
	Submodule string `json:"submodule,omitempty"`
	// Modes holds the octal file modes: HEAD, index, worktree (unmerged: stage 1, 2, 3,
	// worktree).
	Modes []string `json:"modes,omitempty"`
	// Objects holds the object names: HEAD, index (unmerged: stage 1, 2, 3).
	Objects []string `json:"objects,omitempty"`
	// Score is the rename or copy similarity in percent.
	Score    int    `json:"score,omitempty"`
	Path     string `json:"path"`
	OrigPath string `json:"orig_path,omitempty"` // the source of a rename or copy
}

// Status is the parsed `git status --porcelain=v2`.
type Status struct {
	Branch    Branch        `json:"branch"`
	Entries   []StatusEntry `json:"entries"`
	Truncated bool          `json:"truncated"` // the output cap cut the list short
}

// Status returns the working tree status, parsed from `git status --porcelain=v2 -z
// --branch`. Errors: the Check's refusal, *ArgError for bad options, *GitError.
func (r *Repo) Status(ctx context.Context, opts StatusOptions) (*Status, error) {
	untracked := opts.Untracked
	switch untracked {
	case "":
		untracked = "normal"
	case "no", "normal", "all":
	default:
		return nil, &ArgError{What: "untracked-files mode", Value: untracked, Why: "must be no, normal or all"}
	}
	if err := checkPaths(opts.Paths); err != nil {
		return nil, err
	}
	// --ignore-submodules=dirty: never run git inside a submodule's working tree (its own
	// configuration is not checked); a submodule whose HEAD moved is still reported.
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--ignore-submodules=dirty", "--untracked-files=" + untracked}
	if opts.Ignored {
		args = append(args, "--ignored=traditional")
	} else {
		args = append(args, "--ignored=no")
	}
	args = append(args, "--")
	args = append(args, opts.Paths...)
	out, err := r.run(ctx, nil, args)
	if err != nil {
		return nil, err
	}
	st, err := parseStatus(out.stdout, out.truncated)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// parseStatus parses porcelain v2 -z output. When truncated, the last, possibly partial
// record is dropped.
func parseStatus(data []byte, truncated bool) (*Status, error) {
	st := &Status{Entries: []StatusEntry{}, Truncated: truncated}
	recs := bytes.Split(data, []byte{0})
	// A complete output ends in NUL, so the last element is empty; a truncated one ends
	// in the partial record, which is dropped.
	recs = recs[:len(recs)-1]
	for i := 0; i < len(recs); i++ {
		rec := string(recs[i])
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			parseBranchHeader(&st.Branch, rec)
		case '1':
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 {
				return nil, fmt.Errorf("git status: bad record %q", rec)
			}
			st.Entries = append(st.Entries, StatusEntry{Kind: KindChanged, XY: f[1], Submodule: f[2],
				Modes: f[3:6], Objects: f[6:8], Path: f[8]})
		case '2':
			f := strings.SplitN(rec, " ", 10)
			if len(f) != 10 || len(f[8]) < 2 {
				return nil, fmt.Errorf("git status: bad record %q", rec)
			}
			if i+1 >= len(recs) {
				st.Truncated = true
				return st, nil
			}
			i++
			kind := KindRenamed
			if f[8][0] == 'C' {
				kind = KindCopied
			}
			score, _ := strconv.Atoi(f[8][1:])
			st.Entries = append(st.Entries, StatusEntry{Kind: kind, XY: f[1], Submodule: f[2],
				Modes: f[3:6], Objects: f[6:8], Score: score, Path: f[9], OrigPath: string(recs[i])})
		case 'u':
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return nil, fmt.Errorf("git status: bad record %q", rec)
			}
			st.Entries = append(st.Entries, StatusEntry{Kind: KindUnmerged, XY: f[1], Submodule: f[2],
				Modes: f[3:7], Objects: f[7:10], Path: f[10]})
		case '?', '!':
			if len(rec) < 3 {
				return nil, fmt.Errorf("git status: bad record %q", rec)
			}
			kind := KindUntracked
			if rec[0] == '!' {
				kind = KindIgnored
			}
			st.Entries = append(st.Entries, StatusEntry{Kind: kind, Path: rec[2:]})
		default:
			return nil, fmt.Errorf("git status: unknown record %q", rec)
		}
	}
	return st, nil
}

func parseBranchHeader(b *Branch, rec string) {
	key, val, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
	switch key {
	case "branch.oid":
		b.OID = val
	case "branch.head":
		b.Head = val
	case "branch.upstream":
		b.Upstream = val
	case "branch.ab":
		a, bh, _ := strings.Cut(val, " ")
		b.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
		b.Behind, _ = strconv.Atoi(strings.TrimPrefix(bh, "-"))
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/s-code-dev/s-code/internal/gitsafe"
)

// openRepo opens the workspace's repository with gitsafe's checks (configuration that could
// run a program, foreign owners, parts outside the workspace), again on every call.
func openRepo(env *Env) (*gitsafe.Repo, error) {
	r, err := gitsafe.Open(env.Root.Path(), env.Git)
	if err != nil {
		return nil, gitErr(err)
	}
	return r, nil
}

// gitErr turns a gitsafe refusal into an *Error naming its rule, wrapping err (the CLI
// renders err itself and maps its type to an exit status).
func gitErr(err error) error {
	var ce *gitsafe.ConfigError
	if errors.As(err, &ce) && len(ce.Findings) > 0 {
		return &Error{Code: "refused", Rule: ce.Findings[0].Rule, Message: err.Error() + "; the git tools do not run in this repository until a person removes that setting", Detail: ce.Findings, Err: err}
	}
	var le *gitsafe.LayoutError
	if errors.As(err, &le) {
		return &Error{Code: "refused", Rule: le.Rule, Message: err.Error(), Err: err}
	}
	var ae *gitsafe.ArgError
	if errors.As(err, &ae) {
		return &Error{Code: "invalid_arguments", Message: err.Error(), Err: err}
	}
	if errors.Is(err, gitsafe.ErrTimeout) {
		return &Error{Code: "timeout", Message: err.Error() + "; narrow the request (paths, a revision range, a smaller count)", Err: err}
	}
	return &Error{Code: "git_failed", Message: err.Error(), Err: err}
}

// GitStatusInput is git_status's arguments.
type GitStatusInput struct {
	Paths     []string `json:"paths,omitempty" jsonschema:"limit to these pathspecs"`
	Untracked string   `json:"untracked,omitempty" jsonschema:"no, normal (the default) or all"`
	Ignored   bool     `json:"ignored,omitempty" jsonschema:"also list ignored files"`
}

// GitStatus runs git_status (exported for the CLI).
func GitStatus(ctx context.Context, env *Env, in GitStatusInput) (*gitsafe.Status, error) {
	r, err := openRepo(env)
	if err != nil {
		return nil, err
	}
	s, err := r.Status(ctx, gitsafe.StatusOptions{Untracked: in.Untracked, Ignored: in.Ignored, Paths: in.Paths})
	if err != nil {
		return nil, gitErr(err)
	}
	return s, nil
}

// GitDiffInput is git_diff's arguments.
type GitDiffInput struct {
	Staged    bool     `json:"staged,omitempty" jsonschema:"compare the index with HEAD instead of the working tree with the index"`
	Revisions []string `json:"revisions,omitempty" jsonschema:"zero, one or two revisions (or one range A..B)"`
	Paths     []string `json:"paths,omitempty" jsonschema:"limit to these pathspecs"`
}

// GitDiff runs git_diff.
func GitDiff(ctx context.Context, env *Env, in GitDiffInput) (*gitsafe.Diff, error) {
	r, err := openRepo(env)
	if err != nil {
		return nil, err
	}
	d, err := r.Diff(ctx, gitsafe.DiffOptions{Staged: in.Staged, Revisions: in.Revisions, Paths: in.Paths})
	if err != nil {
		return nil, gitErr(err)
	}
	return d, nil
}

// GitLogInput is git_log's arguments.
type GitLogInput struct {
	Count     int      `json:"count,omitempty" jsonschema:"commits returned at most (default 20)"`
	Skip      int      `json:"skip,omitempty" jsonschema:"commits skipped first"`
	Revisions []string `json:"revisions,omitempty" jsonschema:"revisions or ranges to walk (default HEAD)"`
	Paths     []string `json:"paths,omitempty" jsonschema:"only commits touching these pathspecs"`
}

// GitLog runs git_log.
func GitLog(ctx context.Context, env *Env, in GitLogInput) (*gitsafe.Log, error) {
	r, err := openRepo(env) // gitsafe refuses a negative count or skip (*gitsafe.ArgError)
	if err != nil {
		return nil, err
	}
	l, err := r.Log(ctx, gitsafe.LogOptions{Count: in.Count, Skip: in.Skip, Revisions: in.Revisions, Paths: in.Paths})
	if err != nil {
		return nil, gitErr(err)
	}
	return l, nil
}

// GitShowInput is git_show's arguments.
type GitShowInput struct {
	Object string `json:"object,omitempty" jsonschema:"a commit (with its patch), REVISION:PATH (a file or directory at a revision), a tree or a tag; HEAD when empty, as git show does"`
}

// GitShow runs git_show; an empty object means HEAD (git-show(1): "defaults to HEAD").
func GitShow(ctx context.Context, env *Env, in GitShowInput) (*gitsafe.Shown, error) {
	obj := in.Object
	if obj == "" {
		obj = "HEAD"
	}
	r, err := openRepo(env)
	if err != nil {
		return nil, err
	}
	s, err := r.Show(ctx, obj)
	if err != nil {
		return nil, gitErr(err)
	}
	return s, nil
}

// GitBlameInput is git_blame's arguments.
type GitBlameInput struct {
	Path      string `json:"path" jsonschema:"file to annotate"`
	Revision  string `json:"revision,omitempty" jsonschema:"blame the file as of this revision (default: the working tree)"`
	StartLine int    `json:"start_line,omitempty" jsonschema:"first line annotated, 1-based (with end_line)"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"last line annotated, inclusive"`
	// Ranges are more line ranges (the CLI's repeated -L START,END).
	Ranges []BlameRange `json:"ranges,omitempty" jsonschema:"more line ranges to annotate, besides start_line and end_line"`
}

// BlameRange is lines Start..End (1-based, inclusive) of a git_blame.
type BlameRange struct {
	Start int `json:"start" jsonschema:"first line, 1-based"`
	End   int `json:"end" jsonschema:"last line, inclusive"`
}

// GitBlame runs git_blame.
func GitBlame(ctx context.Context, env *Env, in GitBlameInput) (*gitsafe.Blame, error) {
	if in.Path == "" {
		return nil, &Error{Code: "invalid_arguments", Message: "path is empty: name the file to annotate"}
	}
	opts := gitsafe.BlameOptions{Revision: in.Revision, Path: in.Path}
	switch {
	case in.StartLine == 0 && in.EndLine == 0:
	case in.StartLine < 1 || in.EndLine < in.StartLine:
		return nil, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("lines %d-%d: give 1 <= start_line <= end_line", in.StartLine, in.EndLine)}
	default:
		opts.Lines = []gitsafe.LineRange{{Start: in.StartLine, End: in.EndLine}}
	}
	for _, lr := range in.Ranges { // gitsafe refuses a bad range (*gitsafe.ArgError)
		opts.Lines = append(opts.Lines, gitsafe.LineRange{Start: lr.Start, End: lr.End})
	}
	r, err := openRepo(env)
	if err != nil {
		return nil, err
	}
	b, err := r.Blame(ctx, opts)
	if err != nil {
		return nil, gitErr(err)
	}
	return b, nil
}

var gitTools = []Tool{
	Must(Spec[GitStatusInput, *gitsafe.Status]{
		Name:        "git_status",
		Description: "Show the working tree status of the workspace's repository (branch, ahead/behind, changed, renamed, unmerged, untracked entries).",
		ReadOnly:    true, Call: GitStatus,
	}),
	Must(Spec[GitDiffInput, *gitsafe.Diff]{
		Name:        "git_diff",
		Description: "Show changes as a patch with per-file statistics: working tree vs index (default), index vs HEAD (staged), or between revisions.",
		ReadOnly:    true, Call: GitDiff,
	}),
	Must(Spec[GitLogInput, *gitsafe.Log]{
		Name:        "git_log",
		Description: "List commits newest first (hash, parents, author, committer, subject, body), optionally for revisions and paths.",
		ReadOnly:    true, Call: GitLog,
	}),
	Must(Spec[GitShowInput, *gitsafe.Shown]{
		Name:        "git_show",
		Description: "Show a commit with its patch, a file or directory at a revision (REVISION:PATH), a tree or a tag; HEAD when no object is given.",
		ReadOnly:    true, Call: GitShow,
	}),
	Must(Spec[GitBlameInput, *gitsafe.Blame]{
		Name:        "git_blame",
		Description: "Show which commit last changed each line of a file (optionally a line range, at a revision).",
		ReadOnly:    true, Call: GitBlame,
	}),
}

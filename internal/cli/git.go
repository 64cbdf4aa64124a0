package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/gitsafe"
	"github.com/s-code-dev/s-code/internal/tools"
)

// gitFlags are the flags shared by every `s-code git` subcommand.
type gitFlags struct {
	workspace string
	json      bool
	maxBytes  int
	timeout   time.Duration
}

func newGitCmd(streams IO) *cobra.Command {
	f := &gitFlags{}
	cmd := &cobra.Command{
		Use:   "git",
		Short: "Inspect the workspace's Git repository through a hardened host git",
		Long: `Inspect the workspace's Git repository (status, diff, log, show, blame) with a host git
that cannot start any program the repository or the environment configures. Before every
git command the repository's configuration is checked; a setting that could start a program
(core.fsmonitor, filters, diff drivers, pagers, hooks path, includes, ...) refuses the
repository with exit status 126, naming the key and the file.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.workspace, "workspace", "", "workspace root holding the repository (default: the nearest directory above holding .git)")
	pf.BoolVar(&f.json, "json", false, "print the structured result as JSON")
	pf.IntVar(&f.maxBytes, "max-bytes", gitsafe.DefaultMaxOutput, "print at most this many bytes, in whole lines, and say how many lines were dropped (with --json: keep at most this many bytes of git's output; the result is marked truncated)")
	pf.DurationVar(&f.timeout, "timeout", gitsafe.DefaultTimeout, "stop each git command after this long")
	cmd.AddCommand(
		newGitStatusCmd(streams, f),
		newGitDiffCmd(streams, f),
		newGitLogCmd(streams, f),
		newGitShowCmd(streams, f),
		newGitBlameCmd(streams, f),
	)
	return cmd
}

// env returns the tool environment of the workspace the flags name: --workspace, or the
// directory holding .git nearest above the working directory (as for read and patch), or
// the working directory, opened as a directory handle. The verbs are renderers over the
// git_* tools of internal/tools, so `s-code git` and the MCP server cannot disagree. The
// caller closes the returned root.
func (f *gitFlags) env() (*tools.Env, error) {
	if f.maxBytes <= 0 {
		return nil, usagef("--max-bytes must be positive")
	}
	if f.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	root, err := openWorkspace(f.workspace)
	if err != nil {
		return nil, err
	}
	// Plain output is cut to --max-bytes after it is formatted, at a line boundary (emit),
	// so git keeps its own default cap there; JSON results are capped at the source.
	limit := f.maxBytes
	if !f.json {
		limit = max(limit, gitsafe.DefaultMaxOutput)
	}
	return &tools.Env{Root: root, Git: gitsafe.Options{MaxOutput: limit, Timeout: f.timeout}}, nil
}

// gitError maps a gitsafe error to the command's exit status: refusals exit 126 (naming
// every finding), bad arguments 2, anything else 1.
func gitError(streams IO, err error) error {
	if errors.As(err, new(usageError)) {
		return err
	}
	var te *tools.Error
	if errors.As(err, &te) && te.Err == nil && te.Code == "invalid_arguments" {
		return usageError{errors.New(te.Message)}
	}
	// The CLI prints the cause in its own words; the advice written for a model stays in
	// the MCP server.
	err = cliError(err)
	var ce *gitsafe.ConfigError
	if errors.As(err, &ce) {
		for _, f := range ce.Findings[1:] {
			fmt.Fprintf(streams.Err, "s-code: also: %s: %s in %s:%d: %s\n", f.Rule, f.Key, f.File, f.Line, f.Reason)
		}
		return &ExitError{Code: ExitDenied, Err: err}
	}
	var le *gitsafe.LayoutError
	if errors.As(err, &le) {
		return &ExitError{Code: ExitDenied, Err: err}
	}
	var ae *gitsafe.ArgError
	if errors.As(err, &ae) {
		return usageError{err}
	}
	return &ExitError{Code: ExitFailure, Err: err}
}

// emit prints v as JSON, or calls human; a truncated result adds a note on stderr. Plain
// output is cut to --max-bytes at the end of the last whole line that fits (a line is never
// printed in part), and the note says how many lines were dropped.
func emit(streams IO, f *gitFlags, v any, truncated bool, human func(w io.Writer) error) error {
	if f.json {
		if err := writeJSON(streams.Out, v); err != nil {
			return err
		}
		if truncated {
			fmt.Fprintf(streams.Err, "s-code: output truncated at %d bytes (see --max-bytes)\n", f.maxBytes)
		}
		return nil
	}
	var buf strings.Builder
	if err := human(&buf); err != nil {
		return err
	}
	kept, dropped := cutLines(buf.String(), f.maxBytes)
	if _, err := io.WriteString(streams.Out, kept); err != nil {
		return err
	}
	gitCap := max(f.maxBytes, gitsafe.DefaultMaxOutput)
	switch {
	case dropped > 0 && truncated:
		fmt.Fprintf(streams.Err, "s-code: output cut at %d bytes: %s not shown, and git's output beyond %d bytes dropped (see --max-bytes)\n", f.maxBytes, lineCount(dropped), gitCap)
	case dropped > 0:
		fmt.Fprintf(streams.Err, "s-code: output cut at %d bytes: %s not shown (see --max-bytes)\n", f.maxBytes, lineCount(dropped))
	case truncated:
		fmt.Fprintf(streams.Err, "s-code: git's output beyond %d bytes was dropped (see --max-bytes)\n", gitCap)
	}
	return nil
}

// cutLines returns the longest prefix of text of at most limit bytes that ends at a line
// end (or is all of text), and the number of lines (a last line without a newline counts)
// that did not fit.
func cutLines(text string, limit int) (kept string, dropped int) {
	if len(text) <= limit {
		return text, 0
	}
	end := strings.LastIndexByte(text[:limit], '\n') + 1 // 0 when not even one line fits
	rest := text[end:]
	dropped = strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		dropped++
	}
	return text[:end], dropped
}

// lineCount returns "1 line" or "N lines".
func lineCount(n int) string {
	if n == 1 {
		return "1 line"
	}
	return strconv.Itoa(n) + " lines"
}

// splitDash splits args at the "--" the user typed: before are revisions, after are paths.
func splitDash(c *cobra.Command, args []string) (revs, paths []string) {
	if i := c.ArgsLenAtDash(); i >= 0 {
		return args[:i], args[i:]
	}
	return args, nil
}

func newGitStatusCmd(streams IO, f *gitFlags) *cobra.Command {
	var in tools.GitStatusInput
	cmd := &cobra.Command{
		Use:   "status [--] [PATH...]",
		Short: "Show the working tree status (git status --porcelain=v2, parsed)",
		RunE: func(c *cobra.Command, args []string) error {
			env, err := f.env()
			if err != nil {
				return gitError(streams, err)
			}
			defer env.Root.Close()
			in.Paths = args
			st, err := tools.GitStatus(c.Context(), env, in)
			if err != nil {
				return gitError(streams, err)
			}
			return emit(streams, f, st, st.Truncated, func(w io.Writer) error { return writeStatus(w, st) })
		},
	}
	cmd.Flags().StringVar(&in.Untracked, "untracked-files", "normal", "untracked files to list: no, normal or all")
	cmd.Flags().BoolVar(&in.Ignored, "ignored", false, "also list ignored files")
	return cmd
}

// writeStatus prints st like `git status --short --branch`.
// gitPath returns a path from the repository for plain output, quoted as a string literal
// when it holds a control character, invalid UTF-8, a space, a double quote or a backslash,
// as git status --short quotes such names (git-status(1) "Short Format"): a file named
// "a\n?? b" shows as one quoted line, not a forged entry.
func gitPath(p string) string {
	if q := displayPath(p); q != p || strings.ContainsAny(p, " \"\\") {
		return strconv.Quote(p)
	}
	return p
}

func writeStatus(w io.Writer, st *gitsafe.Status) error {
	b := st.Branch
	head := "## " + b.Head
	if b.OID == "(initial)" {
		head = "## No commits yet on " + b.Head
	}
	if b.Upstream != "" {
		head += "..." + b.Upstream
		var ab []string
		if b.Ahead > 0 {
			ab = append(ab, "ahead "+strconv.Itoa(b.Ahead))
		}
		if b.Behind > 0 {
			ab = append(ab, "behind "+strconv.Itoa(b.Behind))
		}
		if len(ab) > 0 {
			head += " [" + strings.Join(ab, ", ") + "]"
		}
	}
	var sb strings.Builder
	sb.WriteString(head + "\n")
	for _, e := range st.Entries {
		switch e.Kind {
		case gitsafe.KindUntracked:
			sb.WriteString("?? " + gitPath(e.Path) + "\n")
		case gitsafe.KindIgnored:
			sb.WriteString("!! " + gitPath(e.Path) + "\n")
		default:
			xy := strings.ReplaceAll(e.XY, ".", " ")
			if e.OrigPath != "" {
				sb.WriteString(xy + " " + gitPath(e.OrigPath) + " -> " + gitPath(e.Path) + "\n")
			} else {
				sb.WriteString(xy + " " + gitPath(e.Path) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func newGitDiffCmd(streams IO, f *gitFlags) *cobra.Command {
	var staged bool
	cmd := &cobra.Command{
		Use:   "diff [--staged] [REVISION [REVISION]] [-- PATH...]",
		Short: "Show changes: working tree, staged, or between revisions (with per-file statistics)",
		RunE: func(c *cobra.Command, args []string) error {
			revs, paths := splitDash(c, args)
			if len(revs) > 2 {
				return usagef("git diff: at most two revisions (put paths after --)")
			}
			env, err := f.env()
			if err != nil {
				return gitError(streams, err)
			}
			defer env.Root.Close()
			d, err := tools.GitDiff(c.Context(), env, tools.GitDiffInput{Staged: staged, Revisions: revs, Paths: paths})
			if err != nil {
				return gitError(streams, err)
			}
			return emit(streams, f, d, d.Truncated, func(w io.Writer) error {
				_, err := io.WriteString(w, d.Patch)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&staged, "staged", false, "compare the index (staged changes) instead of the working tree")
	cmd.Flags().BoolVar(&staged, "cached", false, "same as --staged")
	return cmd
}

func newGitLogCmd(streams IO, f *gitFlags) *cobra.Command {
	var in tools.GitLogInput
	cmd := &cobra.Command{
		Use:   "log [-n COUNT] [--skip N] [REVISION...] [-- PATH...]",
		Short: "Show commits (hash, parents, author, committer, subject, body)",
		RunE: func(c *cobra.Command, args []string) error {
			in.Revisions, in.Paths = splitDash(c, args)
			if in.Count < 1 {
				return usagef("git log: --max-count must be at least 1")
			}
			env, err := f.env()
			if err != nil {
				return gitError(streams, err)
			}
			defer env.Root.Close()
			l, err := tools.GitLog(c.Context(), env, in)
			if err != nil {
				return gitError(streams, err)
			}
			return emit(streams, f, l, l.Truncated, func(w io.Writer) error {
				var sb strings.Builder
				for i, cm := range l.Commits {
					if i > 0 {
						sb.WriteString("\n")
					}
					writeCommit(&sb, &cm)
				}
				_, err := io.WriteString(w, sb.String())
				return err
			})
		},
	}
	cmd.Flags().IntVarP(&in.Count, "max-count", "n", gitsafe.DefaultLogCount, "show at most this many commits")
	cmd.Flags().IntVar(&in.Skip, "skip", 0, "skip this many commits first")
	return cmd
}

// gitDate is git's default date format (git-log(1) --date=default).
const gitDate = "Mon Jan 2 15:04:05 2006 -0700"

// writeCommit prints c like git log's medium format.
func writeCommit(sb *strings.Builder, c *gitsafe.Commit) {
	sb.WriteString("commit " + c.Hash + "\n")
	if len(c.Parents) > 1 {
		var short []string
		for _, p := range c.Parents {
			short = append(short, p[:7])
		}
		sb.WriteString("Merge: " + strings.Join(short, " ") + "\n")
	}
	fmt.Fprintf(sb, "Author: %s <%s>\nDate:   %s\n\n", c.Author.Name, c.Author.Email, c.Author.Date.Format(gitDate))
	sb.WriteString("    " + c.Subject + "\n")
	if c.Body != "" {
		sb.WriteString("\n")
		for _, line := range strings.Split(c.Body, "\n") {
			sb.WriteString(strings.TrimRight("    "+line, " ") + "\n")
		}
	}
}

func newGitShowCmd(streams IO, f *gitFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "show [OBJECT]",
		Short: "Show a commit with its patch, or a file or directory at a revision (REVISION:PATH); default HEAD",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"HEAD"} // as git show does (and git_show)
			}
			env, err := f.env()
			if err != nil {
				return gitError(streams, err)
			}
			defer env.Root.Close()
			s, err := tools.GitShow(c.Context(), env, tools.GitShowInput{Object: args[0]})
			if err != nil {
				return gitError(streams, err)
			}
			return emit(streams, f, s, s.Truncated, func(w io.Writer) error {
				var sb strings.Builder
				switch {
				case s.Commit != nil:
					writeCommit(&sb, s.Commit)
					if s.Diff.Patch != "" {
						sb.WriteString("\n" + s.Diff.Patch)
					}
				case s.Type == gitsafe.TypeTree:
					sb.WriteString("tree " + args[0] + "\n\n")
					for _, e := range s.Entries {
						name := e.Name
						if e.Mode == "40000" {
							name += "/"
						}
						sb.WriteString(gitPath(name) + "\n")
					}
				default:
					sb.WriteString(s.Content)
				}
				_, err := io.WriteString(w, sb.String())
				return err
			})
		},
	}
}

func newGitBlameCmd(streams IO, f *gitFlags) *cobra.Command {
	var ranges []string
	cmd := &cobra.Command{
		Use:   "blame [-L START,END]... [REVISION] [--] PATH",
		Short: "Show which commit last changed each line of a file",
		RunE: func(c *cobra.Command, args []string) error {
			in, err := blameArgs(c, args, ranges)
			if err != nil {
				return err
			}
			env, err := f.env()
			if err != nil {
				return gitError(streams, err)
			}
			defer env.Root.Close()
			b, err := tools.GitBlame(c.Context(), env, in)
			if err != nil {
				return gitError(streams, err)
			}
			return emit(streams, f, b, b.Truncated, func(w io.Writer) error { return writeBlame(w, b) })
		},
	}
	cmd.Flags().StringArrayVarP(&ranges, "lines", "L", nil, "annotate only lines START,END (repeatable)")
	return cmd
}

// blameArgs reads `[REVISION] [--] PATH` and the -L ranges.
func blameArgs(c *cobra.Command, args, ranges []string) (tools.GitBlameInput, error) {
	var opts tools.GitBlameInput
	revs, paths := splitDash(c, args)
	switch {
	case len(paths) == 1 && len(revs) <= 1:
		opts.Path = paths[0]
		if len(revs) == 1 {
			opts.Revision = revs[0]
		}
	case len(paths) == 0 && len(revs) == 1:
		opts.Path = revs[0]
	case len(paths) == 0 && len(revs) == 2:
		opts.Revision, opts.Path = revs[0], revs[1]
	default:
		return opts, usagef("git blame: want [REVISION] [--] PATH")
	}
	for _, r := range ranges {
		a, b, ok := strings.Cut(r, ",")
		start, err1 := strconv.Atoi(a)
		end, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return opts, usagef("git blame: -L %q: want START,END (line numbers)", r)
		}
		opts.Ranges = append(opts.Ranges, tools.BlameRange{Start: start, End: end})
	}
	return opts, nil
}

// writeBlame prints b like git blame's default output.
func writeBlame(w io.Writer, b *gitsafe.Blame) error {
	width, numWidth := 0, 1
	for _, l := range b.Lines {
		width = max(width, len(b.Commits[l.Commit].Author.Name))
		numWidth = max(numWidth, len(strconv.Itoa(l.Line)))
	}
	var sb strings.Builder
	for _, l := range b.Lines {
		c := b.Commits[l.Commit]
		hash := l.Commit[:8]
		if c.Boundary {
			hash = "^" + l.Commit[:7]
		}
		fmt.Fprintf(&sb, "%s (%-*s %s %*d) %s\n", hash, width, c.Author.Name,
			c.Author.Date.Format("2006-01-02 15:04:05 -0700"), numWidth, l.Line, l.Content)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

func newCacheCmd(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List and prune the sandbox's per-workspace dependency caches",
		Long: `Each workspace gets its own dependency caches (Go, Cargo, npm) and temporary directory for
the commands the user helper runs in its sandbox, beneath $S_CODE_TOOL_CACHE_DIR, else
$XDG_CACHE_HOME/s-code/tool-dependencies (~/.cache/s-code/tool-dependencies). list shows
them with their size, last use and workspace; prune removes the ones you select.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newCacheListCmd(streams), newCachePruneCmd(streams))
	return cmd
}

// cacheRoot returns the directory holding the caches, as the user helper computes it.
func cacheRoot() (string, error) {
	root, err := sandbox.CacheRoot(os.Getenv)
	if err != nil {
		return "", &ExitError{Code: ExitFailure, Err: err}
	}
	return root, nil
}

// cacheListJSON is the --json output of cache list and cache prune: the cache root, the
// caches (listed, or selected by prune), and for prune what was removed, what failed, and
// whether it only listed them (dry_run: no terminal and no --yes).
type cacheListJSON struct {
	Root    string               `json:"root"`
	Caches  []sandbox.CacheEntry `json:"caches"`
	Removed []sandbox.CacheEntry `json:"removed,omitempty"`
	Failed  []cachePruneFailure  `json:"failed,omitempty"`
	DryRun  *bool                `json:"dry_run,omitempty"`
}

// cachePruneFailure is a cache prune could not remove.
type cachePruneFailure struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

func newCacheListCmd(streams IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List each workspace's dependency caches: size, last use, workspace (marking those whose workspace is gone)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			root, err := cacheRoot()
			if err != nil {
				return err
			}
			caches, err := sandbox.ListCaches(root)
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if asJSON {
				return writeJSON(streams.Out, cacheListJSON{Root: root, Caches: caches})
			}
			return writeCacheTable(streams.Out, root, caches)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {root, caches: [{name, path, workspace, missing, bytes, last_used}]}")
	return cmd
}

// writeCacheTable prints the caches, then their total.
func writeCacheTable(w io.Writer, root string, caches []sandbox.CacheEntry) error {
	fmt.Fprintf(w, "caches in %s\n", displayPath(root))
	if len(caches) == 0 {
		_, err := fmt.Fprintln(w, "(none)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CACHE\tSIZE\tLAST USED\tWORKSPACE")
	var total int64
	for _, c := range caches {
		ws := displayPath(c.Workspace)
		switch {
		case c.Workspace == "":
			ws = "(unknown)"
		case c.Missing:
			ws += " (missing)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", displayPath(c.Name), humanBytes(c.Bytes), c.LastUsed.Local().Format("2006-01-02 15:04"), ws)
		total += c.Bytes
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d cache(s), %s\n", len(caches), humanBytes(total))
	return err
}

// humanBytes returns n in B, KiB, MiB or GiB with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + suffix
}

// parseAge reads a duration as time.ParseDuration does, plus a whole number of days ("30d").
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a duration such as 30d, 72h or 90m, not %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a duration such as 30d, 72h or 90m, not %q", s)
	}
	return v, nil
}

func newCachePruneCmd(streams IO) *cobra.Command {
	var (
		olderThan string
		missing   bool
		yes       bool
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "prune (--missing | --older-than D)... [--yes]",
		Short: "Remove the caches of workspaces that are gone, or not used for a while",
		Long: `prune selects the caches whose workspace no longer exists (--missing), or that no command has
used for at least D (--older-than 30d; days, or Go durations such as 72h), or both at once
(a cache must then match both). It lists them, asks on a terminal, and removes them with
--yes or a yes; without a terminal and without --yes it only lists them (nothing removed).
A cache whose workspace is unknown (made by an older S-Code) is never --missing.
Remove a workspace's cache only when no command runs in it; the next command rebuilds it
(a first go test then rebuilds the standard library into it).

Exit status: 0 done (or nothing selected, or only listed); 1 a cache could not be removed or
the answer was no; 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var age time.Duration
			if olderThan != "" {
				var err error
				if age, err = parseAge(olderThan); err != nil {
					return usagef("--older-than: %v", err)
				}
			}
			if olderThan == "" && !missing {
				return usagef("say which caches to prune: --missing, --older-than D, or both")
			}
			root, err := cacheRoot()
			if err != nil {
				return err
			}
			caches, err := sandbox.ListCaches(root)
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			now := time.Now()
			var sel []sandbox.CacheEntry
			for _, c := range caches {
				if missing && !c.Missing {
					continue
				}
				if olderThan != "" && now.Sub(c.LastUsed) < age {
					continue
				}
				sel = append(sel, c)
			}
			return pruneCaches(streams, root, sel, yes, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&olderThan, "older-than", "", "select caches not used for at least `D` (e.g. 30d, 72h)")
	fl.BoolVar(&missing, "missing", false, "select caches whose workspace no longer exists")
	fl.BoolVar(&yes, "yes", false, "remove the selected caches without asking")
	fl.BoolVar(&asJSON, "json", false, "print {root, caches (selected), removed, failed, dry_run}")
	return cmd
}

// pruneCaches lists sel, gets the person's yes (or --yes) and removes them.
func pruneCaches(streams IO, root string, sel []sandbox.CacheEntry, yes, asJSON bool) error {
	out := cacheListJSON{Root: root, Caches: sel}
	if out.Caches == nil {
		out.Caches = []sandbox.CacheEntry{}
	}
	if !asJSON {
		if len(sel) == 0 {
			_, err := fmt.Fprintf(streams.Out, "no cache in %s matches: nothing to remove\n", displayPath(root))
			return err
		}
		if err := writeCacheTable(streams.Out, root, sel); err != nil {
			return err
		}
	}
	if len(sel) > 0 && !yes {
		ok, asked, err := confirm(streams, fmt.Sprintf("Remove these %d cache(s)? [y/N] ", len(sel)))
		if err != nil {
			return err
		}
		if !asked {
			dry := true
			out.DryRun = &dry
			if asJSON {
				return writeJSON(streams.Out, out)
			}
			_, err := fmt.Fprintln(streams.Out, "nothing removed: no terminal to ask on; rerun with --yes to remove them")
			return err
		}
		if !ok {
			return &ExitError{Code: ExitFailure, Err: errors.New("not removed")}
		}
	}
	for _, c := range sel {
		if err := sandbox.RemoveCache(root, c.Name); err != nil {
			out.Failed = append(out.Failed, cachePruneFailure{Name: c.Name, Error: err.Error()})
			if !asJSON {
				fmt.Fprintf(streams.Err, "s-code: %v\n", err)
			}
			continue
		}
		out.Removed = append(out.Removed, c)
		if !asJSON {
			fmt.Fprintf(streams.Out, "removed %s (%s)\n", displayPath(c.Name), humanBytes(c.Bytes))
		}
	}
	if asJSON {
		if err := writeJSON(streams.Out, out); err != nil {
			return err
		}
	}
	if len(out.Failed) > 0 {
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

// confirm asks question on the terminal and reports the answer; asked is false when stdin
// or stderr is not a terminal (nothing was asked).
func confirm(streams IO, question string) (ok, asked bool, err error) {
	in, inOK := streams.In.(*os.File)
	errf, errOK := streams.Err.(*os.File)
	if !inOK || !errOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(errf.Fd())) {
		return false, false, nil
	}
	fmt.Fprint(streams.Err, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, true, fmt.Errorf("read answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, true, nil
	}
	return false, true, nil
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/audit"
)

// auditDirFlags are the flags every audit subcommand takes to find the log.
type auditDirFlags struct {
	dir    string
	helper string
}

func (f *auditDirFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "dir", "", "audit log directory (default: the user helper's, $XDG_STATE_HOME/s-code/audit)")
	cmd.Flags().StringVar(&f.helper, "helper", "", "read the log of this helper: user or root (/var/log/s-code)")
}

// resolve returns the log directory, checking that it exists.
func (f *auditDirFlags) resolve() (string, error) {
	dir := f.dir
	if dir == "" {
		if f.helper != "" && f.helper != "user" && f.helper != "root" {
			return "", usagef("--helper must be user or root, not %q", f.helper)
		}
		d, err := audit.DefaultDir(f.helper)
		if err != nil {
			return "", err
		}
		dir = d
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("audit log directory %s does not exist: no helper has written a log there (use --dir DIR or --helper root)", dir)
	}
	if err != nil {
		return "", fmt.Errorf("audit log directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("audit log directory %s is not a directory", dir)
	}
	return dir, nil
}

// auditFilterFlags are the review filters of list, tail and stats.
type auditFilterFlags struct {
	since, until string
	uid          int64
	kind         []string
	decision     string
	rule         string
	grep         string
	cmd          *cobra.Command // the command, to tell a given --uid from the default
}

func (f *auditFilterFlags) register(cmd *cobra.Command, all bool) {
	cmd.Flags().StringVar(&f.since, "since", "", "records at or after T (RFC 3339, YYYY-MM-DD[ HH:MM[:SS]] local time, or a duration ago like 2h, 3d)")
	cmd.Flags().StringVar(&f.until, "until", "", "records before T (same forms as --since)")
	f.uid = -1
	f.cmd = cmd
	if !all {
		return
	}
	cmd.Flags().Int64Var(&f.uid, "uid", -1, "records of this peer uid")
	cmd.Flags().StringSliceVar(&f.kind, "kind", nil, "records of these kinds (request, denied, start, exit, refused, code_mode, rotate, seal, recover)")
	cmd.Flags().StringVar(&f.decision, "decision", "", "records with this decision (allow, ask, deny)")
	cmd.Flags().StringVar(&f.rule, "rule", "", "records with a finding of this rule id")
	cmd.Flags().StringVar(&f.grep, "grep", "", "records whose command, cwd, workspace, reason or request id contains TEXT (any case)")
}

func (f *auditFilterFlags) filter(now time.Time, helper string) (audit.Filter, error) {
	var out audit.Filter
	var err error
	if out.Since, err = parseWhen(f.since, now); err != nil {
		return out, usagef("--since: %v", err)
	}
	if out.Until, err = parseWhen(f.until, now); err != nil {
		return out, usagef("--until: %v", err)
	}
	if f.cmd != nil && f.cmd.Flags().Changed("uid") && f.uid < 0 {
		return out, usagef("--uid %d is not a uid", f.uid)
	}
	if f.uid >= 0 {
		if f.uid > 1<<32-1 {
			return out, usagef("--uid %d is out of range", f.uid)
		}
		u := uint32(f.uid)
		out.UID = &u
	}
	for _, k := range f.kind {
		out.Kinds = append(out.Kinds, audit.Kind(k))
	}
	out.Decision, out.Rule, out.Text = f.decision, f.rule, f.grep
	if helper != "" && helper != "root" {
		out.Helper = helper
	}
	return out, nil
}

// parseWhen reads a time: RFC 3339, a local date or date and time, or a duration before now
// (Go's syntax, plus d for days).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(d, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time (RFC 3339, YYYY-MM-DD[ HH:MM[:SS]], or a duration ago like 90m, 2h, 3d)", s)
}

func newAuditCmd(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify and review the helpers' tamper-evident audit log",
		Long: `The helpers record every request, decision, start and exit in a hash-chained, sealed
audit log (docs/audit.md). verify proves it whole or names the first bad record; list, show,
tail and stats serve review. The default log is the user helper's
($XDG_STATE_HOME/s-code/audit); --helper root reads /var/log/s-code.`,
	}
	cmd.AddCommand(
		newAuditVerifyCmd(streams),
		newAuditListCmd(streams),
		newAuditShowCmd(streams),
		newAuditTailCmd(streams),
		newAuditStatsCmd(streams),
	)
	return cmd
}

func newAuditVerifyCmd(streams IO) *cobra.Command {
	var (
		where   auditDirFlags
		keyFile string
		state   string
		witness string
		jdir    string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the chain (and, with --key, the seals); exit 0 when whole, 1 naming the first bad record",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := where.resolve()
			if err != nil {
				return err
			}
			opts := audit.VerifyOptions{StateFile: state}
			if keyFile != "" {
				if opts.Key, err = audit.ReadVerifyKey(keyFile); err != nil {
					return err
				}
			}
			switch witness {
			case "":
			case "journal":
				opts.Witness = audit.JournalWitness{Directory: jdir}
			default:
				return fmt.Errorf("--witness %q: the only witness is journal", witness)
			}
			rep, err := audit.VerifyWith(dir, opts)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(streams.Out, rep); err != nil {
					return err
				}
				if !rep.Whole {
					return &ExitError{Code: ExitFailure}
				}
				return nil
			}
			seals := "seals not checked (no --key)"
			switch {
			case rep.SealsChecked:
				seals = "seals checked with the key"
			case opts.Key != nil:
				seals = "seals not checked: verification stopped at the first bad record"
			}
			if !rep.Whole {
				fmt.Fprintf(streams.Out, "audit log %s: NOT WHOLE\n", audit.Escape(dir))
				fmt.Fprintf(streams.Out, "first bad record: %s\n", audit.Escape(rep.Problem.String()))
				fmt.Fprintf(streams.Out, "verified before it: %d record(s), last seq %d; %s\n", rep.Records, rep.LastSeq, seals)
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("audit log is not whole: %s", audit.Escape(rep.Problem.String()))}
			}
			fmt.Fprintf(streams.Out, "audit log %s: whole\n", audit.Escape(dir))
			fmt.Fprintf(streams.Out, "%d record(s) in %d file(s), seq %d..%d, %d seal(s), %s\n", rep.Records, rep.Files, rep.FirstSeq, rep.LastSeq, rep.Seals, seals)
			if rep.SealEpoch != nil {
				fmt.Fprintf(streams.Out, "key state epoch %d: every seal it passed is in the log\n", *rep.SealEpoch)
			}
			if rep.UnsealedTail > 0 {
				since := ""
				if !rep.UnsealedSince.IsZero() {
					since = ", the oldest written " + rep.UnsealedSince.Local().Format(time.DateTime)
				}
				fmt.Fprintf(streams.Out, "unsealed: %d record(s) after the last seal%s\n", rep.UnsealedTail, since)
			} else {
				fmt.Fprintf(streams.Out, "unsealed: none (the last record is a seal)\n")
			}
			if w := rep.Witness; w != nil {
				fmt.Fprintf(streams.Out, "witness %s: %d seal(s) seen, %d match the log, %d older than the log (retention)\n", w.Source, w.Seals, w.Matched, w.Pruned)
			}
			for _, n := range rep.Notes {
				fmt.Fprintf(streams.Out, "note: %s\n", audit.Escape(n))
			}
			return nil
		},
	}
	where.register(cmd)
	cmd.Flags().StringVar(&keyFile, "key", "", "verification key file (K_0, the verify.key written when the log was created)")
	cmd.Flags().StringVar(&state, "state", "", "seal key state file to check the log's end against (default DIR/seal.key)")
	cmd.Flags().StringVar(&witness, "witness", "", "compare the seals with a witness outside the log: journal (the journald mirror), to catch a rollback of the whole directory")
	cmd.Flags().StringVar(&jdir, "journal-dir", "", "with --witness journal: read the journal files in this `DIR` instead of the system journal")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newAuditListCmd(streams IO) *cobra.Command {
	var (
		where  auditDirFlags
		filt   auditFilterFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List audit records, filtered (a table in local time, or JSON Lines in UTC)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := where.resolve()
			if err != nil {
				return err
			}
			f, err := filt.filter(time.Now(), "")
			if err != nil {
				return err
			}
			t := newRecordTable(streams.Out, asJSON)
			if err := audit.Read(dir, f, t.add); err != nil {
				return err
			}
			return t.flush()
		},
	}
	where.register(cmd)
	filt.register(cmd, true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print records as JSON Lines (UTC)")
	return cmd
}

func newAuditShowCmd(streams IO) *cobra.Command {
	var (
		where  auditDirFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show SEQ|REQUEST_ID",
		Short: "Show one record by seq, or every record of a request id, in full",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if args[0] == "" {
				return usagef("show: SEQ or REQUEST_ID is empty")
			}
			dir, err := where.resolve()
			if err != nil {
				return err
			}
			var recs []*audit.Record
			seq, serr := strconv.ParseUint(args[0], 10, 64)
			err = audit.Read(dir, audit.Filter{}, func(r *audit.Record) error {
				if (serr == nil && r.Seq == seq) || r.RequestID == args[0] {
					recs = append(recs, r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("no audit record with seq or request id %q in %s", audit.Escape(args[0]), audit.Escape(dir))}
			}
			for i, r := range recs {
				if asJSON {
					if err := writeJSON(streams.Out, r); err != nil {
						return err
					}
					continue
				}
				if i > 0 {
					fmt.Fprintln(streams.Out)
				}
				showRecord(streams.Out, r)
			}
			return nil
		},
	}
	where.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as JSON (UTC)")
	return cmd
}

func newAuditTailCmd(streams IO) *cobra.Command {
	var (
		where  auditDirFlags
		filt   auditFilterFlags
		follow bool
		n      int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the last records; with -f, keep printing new ones as the helper writes them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 {
				return usagef("-n must be 0 or more")
			}
			dir, err := where.resolve()
			if err != nil {
				return err
			}
			f, err := filt.filter(time.Now(), "")
			if err != nil {
				return err
			}
			var last []*audit.Record
			var lastSeq uint64
			if err := audit.Read(dir, audit.Filter{}, func(r *audit.Record) error {
				lastSeq = r.Seq
				if f.Match(r) {
					last = append(last, r)
					if len(last) > n {
						last = last[1:]
					}
				}
				return nil
			}); err != nil {
				return err
			}
			// -f streams records as they come: no table alignment across records.
			t := newRecordTable(streams.Out, asJSON)
			t.stream = follow
			for _, r := range last {
				if err := t.add(r); err != nil {
					return err
				}
			}
			if err := t.flush(); err != nil || !follow {
				return err
			}
			return audit.Follow(cmd.Context(), dir, lastSeq, 250*time.Millisecond, f, func(r *audit.Record) error {
				if err := t.add(r); err != nil {
					return err
				}
				return t.flush()
			})
		},
	}
	where.register(cmd)
	filt.register(cmd, true)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new records until interrupted")
	cmd.Flags().IntVarP(&n, "lines", "n", 10, "print the last N records")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print records as JSON Lines (UTC)")
	return cmd
}

func newAuditStatsCmd(streams IO) *cobra.Command {
	var (
		where  auditDirFlags
		filt   auditFilterFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count records by kind, decision, rule id and uid over a period",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := where.resolve()
			if err != nil {
				return err
			}
			f, err := filt.filter(time.Now(), "")
			if err != nil {
				return err
			}
			st := audit.NewStats()
			if err := audit.Read(dir, f, func(r *audit.Record) error { st.Add(r); return nil }); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(streams.Out, st)
			}
			fmt.Fprintf(streams.Out, "records: %d\n", st.Records)
			for _, g := range []struct {
				title string
				m     map[string]int
			}{{"by kind", st.ByKind}, {"by decision", st.ByDecision}, {"by rule", st.ByRule}, {"by uid", st.ByUID}} {
				fmt.Fprintf(streams.Out, "\n%s:\n", g.title)
				if len(g.m) == 0 {
					fmt.Fprintln(streams.Out, "  (none)")
				}
				keys := make([]string, 0, len(g.m))
				for k := range g.m {
					keys = append(keys, k)
				}
				sort.Slice(keys, func(i, j int) bool {
					if g.m[keys[i]] != g.m[keys[j]] {
						return g.m[keys[i]] > g.m[keys[j]]
					}
					return keys[i] < keys[j]
				})
				for _, k := range keys {
					fmt.Fprintf(streams.Out, "  %7d  %s\n", g.m[k], audit.Escape(k))
				}
			}
			return nil
		},
	}
	where.register(cmd)
	filt.register(cmd, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	return cmd
}

// recordTable prints records as an aligned table that fits the terminal, or as JSON Lines.
type recordTable struct {
	w      io.Writer
	json   bool
	stream bool
	width  int
	rows   [][]string

	headerDone bool
}

func newRecordTable(w io.Writer, asJSON bool) *recordTable {
	return &recordTable{w: w, json: asJSON, width: terminalWidth(w)}
}

// maxCell is the widest a table column other than the last may be, in runes.
const maxCell = 24

var tableHeader = []string{"SEQ", "TIME", "KIND", "HELPER", "UID", "DECISION", "RULE/STATUS", "COMMAND"}

func (t *recordTable) add(r *audit.Record) error {
	if t.json {
		return writeJSON(t.w, r)
	}
	uid := "-"
	if r.Peer != nil {
		uid = strconv.FormatUint(uint64(r.Peer.UID), 10)
	}
	status := strings.Join(audit.Rules(r), ",")
	switch {
	case r.ExitCode != nil:
		status = "exit " + strconv.Itoa(*r.ExitCode)
	case r.Signal != "":
		status = "signal " + r.Signal
	case r.Kind == audit.KindSeal && r.SealIndex != nil:
		status = fmt.Sprintf("seal %d", *r.SealIndex)
	case r.Kind == audit.KindRotate:
		status = "after seq " + strconv.FormatUint(r.Seq-1, 10)
	}
	what := r.Command
	switch {
	case r.Kind == audit.KindRefused:
		// A refused call is refused before any command is read: no command to show. Its
		// reason is the rule in RULE/STATUS, in full with `audit show SEQ`.
		what = "-"
	case what == "":
		what = r.Reason // a record of the log itself, e.g. a torn final record cut off
	}
	row := []string{
		strconv.FormatUint(r.Seq, 10),
		r.Time.Local().Format("2006-01-02 15:04:05"),
		string(r.Kind), dash(r.Helper), uid, dash(audit.Decision(r)), dash(status), what,
	}
	for i := range row {
		row[i] = audit.Escape(row[i])
		if rs := []rune(row[i]); i < len(row)-1 && len(rs) > maxCell {
			row[i] = string(rs[:maxCell-1]) + "…"
		}
	}
	t.rows = append(t.rows, row)
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// streamWidths are the column widths of tail -f, which cannot align on records to come.
var streamWidths = []int{7, 19, 7, 6, 5, 8, 24}

// flush writes the rows gathered so far (after the header, once), cutting the last column to
// the terminal's width.
func (t *recordTable) flush() error {
	if t.json {
		return nil
	}
	rows := t.rows
	t.rows = nil
	if !t.headerDone {
		if len(rows) == 0 && !t.stream {
			return nil
		}
		rows = append([][]string{tableHeader}, rows...)
		t.headerDone = true
	}
	widths := make([]int, len(tableHeader)-1)
	if t.stream {
		copy(widths, streamWidths)
	}
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	used := 0
	for _, w := range widths {
		used += w + 2
	}
	// On a narrow terminal the helper column goes first; a line still too wide is cut.
	drop := -1
	if t.width > 0 && t.width-used < 24 {
		drop = 3
		used -= widths[drop] + 2
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r[:len(r)-1] {
			if i == drop {
				continue
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		line.WriteString(r[len(r)-1])
		out := strings.TrimRight(line.String(), " ")
		if rs := []rune(out); t.width > 0 && len(rs) > t.width {
			out = string(rs[:t.width-1]) + "…"
		}
		b.WriteString(out)
		b.WriteString("\n")
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// showRecord prints every field of r, one "name: value" line each, in local time.
func showRecord(w io.Writer, r *audit.Record) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-15s %s\n", k+":", audit.Escape(v))
		}
	}
	line("seq", strconv.FormatUint(r.Seq, 10))
	line("time", r.Time.Local().Format("2006-01-02 15:04:05.000000000 -0700 MST"))
	line("kind", string(r.Kind))
	line("request id", r.RequestID)
	line("helper", r.Helper)
	if p := r.Peer; p != nil {
		line("peer", fmt.Sprintf("uid %d gid %d pid %d", p.UID, p.GID, p.PID))
		line("executable", p.Exe)
	}
	line("command", r.Command)
	line("cwd", r.Cwd)
	line("workspace", r.Workspace)
	verdict := func(v *audit.VerdictSummary) string {
		if v == nil {
			return ""
		}
		if len(v.Rules) == 0 {
			return v.Decision
		}
		return v.Decision + " (" + strings.Join(v.Rules, ", ") + ")"
	}
	line("client verdict", verdict(r.Client))
	line("helper verdict", verdict(r.Verdict))
	if r.Approved {
		line("approved", "yes")
	}
	line("reason", r.Reason)
	if r.ExitCode != nil {
		line("exit code", strconv.Itoa(*r.ExitCode))
	}
	line("signal", r.Signal)
	if r.Duration != 0 {
		line("duration", strconv.FormatFloat(r.Duration, 'f', -1, 64)+"s")
	}
	if r.Stdout != 0 || r.Stderr != 0 {
		line("output", fmt.Sprintf("%d bytes stdout, %d bytes stderr", r.Stdout, r.Stderr))
	}
	line("file", r.File)
	if r.PrunedThrough != 0 {
		line("pruned through", strconv.FormatUint(r.PrunedThrough, 10))
	}
	if r.TornBytes != 0 {
		line("torn bytes", strconv.FormatInt(r.TornBytes, 10))
	}
	if r.SealIndex != nil {
		line("seal index", strconv.FormatUint(*r.SealIndex, 10))
	}
	line("seal", r.Seal)
	line("prev", r.Prev)
	line("hash", r.Hash)
}

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/hostdef"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// newTermCmd is `s-code term`: background terminals in the user helper.
func newTermCmd(streams IO) *cobra.Command {
	var socket string
	cmd := &cobra.Command{
		Use:   "term",
		Short: "Start, list, read, write and stop background terminals (host processes in a PTY)",
		Long: `A background terminal runs a command in a PTY in the user helper, outside the sandbox, as
you: a dev server or a watcher that keeps running between tool calls. Starting one shows its
permission preview card and asks you to confirm it (--yes in automation). Its output is kept
redacted; read returns what is new since the last read. A terminal stops with its session
(s-code term stop --session S), and when the helper stops, unless started with --detached.`,
	}
	cmd.PersistentFlags().StringVar(&socket, "socket", "", "the user helper's socket `PATH` (default: $XDG_RUNTIME_DIR/s-code/user.sock)")
	dial := func(ctx context.Context) (*helperclient.Client, error) {
		s := socket
		if s == "" {
			var err error
			if s, err = helperclient.DefaultSocket(helperclient.User); err != nil {
				return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
			}
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := helperclient.Dial(dctx, helperclient.User, s)
		if err != nil {
			return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
		}
		return c, nil
	}
	cmd.AddCommand(newTermStartCmd(streams, dial), newTermListCmd(streams, dial), newTermReadCmd(streams, dial),
		newTermWriteCmd(streams, dial), newTermStopCmd(streams, dial))
	return cmd
}

type dialFunc func(context.Context) (*helperclient.Client, error)

func sessionDefault() string {
	if s := os.Getenv("S_CODE_SESSION"); s != "" {
		return s
	}
	return "cli"
}

func newTermStartCmd(streams IO, dial dialFunc) *cobra.Command {
	var name, dir, session string
	var env []string
	var yes, detached bool
	cmd := &cobra.Command{
		Use:   "start [--name NAME] [--dir DIR] [--env K=HANDLE]... [--detached] [--yes] -- COMMAND [ARG...]",
		Short: "Show a terminal's card, confirm it, and start it in the user helper",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || cmd.ArgsLenAtDash() != 0 {
				return usagef("term start: give -- and the command with its arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			command, err := hostdef.ResolveCommand(args[0])
			if err != nil {
				return usagef("term start: %v", err)
			}
			if dir == "" {
				dir = mustGetwd()
			}
			d := &hostdef.Definition{Name: name, Kind: hostdef.KindTerminal, Command: command, Args: append([]string{}, args[1:]...), Dir: dir, Env: map[string]string{}}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usagef("term start: --env takes NAME=HANDLE (a credential handle, never the value)")
				}
				d.Env[k] = v
			}
			if err := d.Validate(); err != nil {
				return usageError{err}
			}
			// The directory is explicit, so the card does not depend on whose home it is.
			if err := confirmOn(streams, d, "", yes); err != nil {
				return err
			}
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Processes().Start(cmd.Context(), &processesv1.StartRequest{
				What:    &processesv1.StartRequest_Terminal{Terminal: &processesv1.Terminal{Name: d.Name, Command: d.Command, Args: d.Args, Dir: d.Dir, Env: d.Env, ConfirmedDigest: d.Confirmed}},
				Session: session, Detached: detached,
			})
			if err != nil {
				return &ExitError{Code: ExitDenied, Err: fmt.Errorf("term start: %w", err)}
			}
			p := resp.GetProcess()
			fmt.Fprintf(streams.Out, "started %s (pid %d, session %s, containment %s)\n", p.GetId(), p.GetPid(), p.GetSession(), p.GetContainment())
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "term", "the terminal's `NAME` (its id is NAME-N)")
	cmd.Flags().StringVar(&dir, "dir", "", "the absolute `DIR` it runs in (default: the current directory)")
	cmd.Flags().StringArrayVar(&env, "env", nil, "a variable it gets, as `NAME=HANDLE` (env:, keyring:, systemd:, file:); repeatable")
	cmd.Flags().StringVar(&session, "session", sessionDefault(), "the `SESSION` it belongs to (default: $S_CODE_SESSION, else cli)")
	cmd.Flags().BoolVar(&detached, "detached", false, "keep it running when its session or the helper ends")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the card without a prompt (automation: you have reviewed it)")
	return cmd
}

func newTermListCmd(streams IO, dial dialFunc) *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "list [--session S]",
		Short: "List the host processes of the user helper",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Processes().List(cmd.Context(), &processesv1.ListRequest{Session: session})
			if err != nil {
				return fmt.Errorf("term list: %w", err)
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSESSION\tSTATE\tPID\tCONTAINMENT\tCOMMAND")
			for _, p := range resp.GetProcesses() {
				state := "running"
				if !p.GetRunning() {
					state = fmt.Sprintf("exited %d", p.GetExitCode())
					if p.GetSignal() != "" {
						state = "killed (" + p.GetSignal() + ")"
					}
				}
				if p.GetDetached() {
					state += ", detached"
				}
				q := make([]string, len(p.GetCommand()))
				for i, a := range p.GetCommand() {
					q[i] = fmt.Sprintf("%q", a)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", p.GetId(), p.GetSession(), state, p.GetPid(), p.GetContainment(), strings.Join(q, " "))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "only this `SESSION`'s")
	return cmd
}

func newTermReadCmd(streams IO, dial dialFunc) *cobra.Command {
	var max uint32
	cmd := &cobra.Command{
		Use:   "read ID [--max BYTES]",
		Short: "Print a terminal's redacted output since the last read",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Processes().Read(cmd.Context(), &processesv1.ReadRequest{Id: args[0], MaxBytes: max})
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("term read: %w", err)}
			}
			if resp.GetDropped() > 0 {
				fmt.Fprintf(streams.Err, "s-code: %d bytes of output were dropped (the output limit) before these\n", resp.GetDropped())
			}
			_, err = streams.Out.Write(resp.GetData())
			if resp.GetMore() {
				fmt.Fprintf(streams.Err, "s-code: more output waits: read again\n")
			}
			return err
		},
	}
	cmd.Flags().Uint32Var(&max, "max", 64<<10, "the most `BYTES` to print")
	return cmd
}

func newTermWriteCmd(streams IO, dial dialFunc) *cobra.Command {
	var noNewline bool
	cmd := &cobra.Command{
		Use:   "write ID [TEXT...]",
		Short: "Send TEXT (and a newline), or standard input, to a terminal",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			if len(args) > 1 {
				data = []byte(strings.Join(args[1:], " "))
				if !noNewline {
					data = append(data, '\n')
				}
			} else {
				var err error
				if data, err = io.ReadAll(io.LimitReader(streams.In, 1<<20)); err != nil {
					return err
				}
			}
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.Processes().Write(cmd.Context(), &processesv1.WriteRequest{Id: args[0], Data: data}); err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("term write: %w", err)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&noNewline, "no-newline", "n", false, "do not add a newline after TEXT")
	return cmd
}

func newTermStopCmd(streams IO, dial dialFunc) *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "stop ID | --session S",
		Short: "Stop a terminal and all its children, or every process of a session but detached terminals",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &processesv1.StopRequest{}
			switch {
			case len(args) == 1 && session == "":
				req.What = &processesv1.StopRequest_Id{Id: args[0]}
			case len(args) == 0 && session != "":
				req.What = &processesv1.StopRequest_Session{Session: session}
			default:
				return usagef("term stop: give an ID or --session, not both")
			}
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Processes().Stop(cmd.Context(), req)
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("term stop: %w", err)}
			}
			for _, p := range resp.GetProcesses() {
				fmt.Fprintf(streams.Out, "stopped %s\n", p.GetId())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "stop every process of this `SESSION` (the session ended)")
	return cmd
}

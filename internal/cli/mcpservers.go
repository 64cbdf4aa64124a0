package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/s-code-dev/s-code/internal/hostdef"
)

// newMCPServersCmd is `s-code mcp-servers`: the user's MCP stdio server definitions.
func newMCPServersCmd(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp-servers",
		Short: "Add, review, enable and remove the local MCP stdio servers S-Code hosts",
		Long: `MCP stdio servers are host processes: they run outside the sandbox, as you, with your
files, network and credentials. Each is defined in $XDG_CONFIG_HOME/s-code/host-processes.toml
with credential handles (env:NAME, keyring:SERVICE/ACCOUNT, systemd:ID, file:PATH), never secret
values. Adding or enabling one shows its permission preview card and asks you to confirm it; a
changed definition does not run until you confirm its new card. See docs/host-processes.md.`,
	}
	k := hostdef.KindMCPServer
	cmd.AddCommand(newMCPAddCmd(streams), newMCPListCmd(streams, k), newMCPShowCmd(streams, k), newMCPRemoveCmd(streams, k),
		newMCPEnableCmd(streams, k, true), newMCPEnableCmd(streams, k, false))
	return cmd
}

// newHooksCmd is `s-code hooks`: review, confirm, enable and remove the hooks of the user's
// configuration (defined by editing host-processes.toml).
func newHooksCmd(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Review, confirm, enable and remove the hooks of your configuration",
		Long: `Hooks are host processes run at points of a session (pre-call, post-call, session-start,
session-end): outside the sandbox, as you. Define them as [process.NAME] tables with
kind = "hook" in $XDG_CONFIG_HOME/s-code/host-processes.toml; a hook runs only after you
confirm its card with s-code hooks enable NAME, and again after any change. A pre-call hook
that cannot run denies the call. See docs/host-processes.md.`,
	}
	k := hostdef.KindHook
	cmd.AddCommand(newMCPListCmd(streams, k), newMCPShowCmd(streams, k), newMCPRemoveCmd(streams, k),
		newMCPEnableCmd(streams, k, true), newMCPEnableCmd(streams, k, false))
	return cmd
}

// kindNoun names a kind in messages.
func kindNoun(k hostdef.Kind) string {
	if k == hostdef.KindHook {
		return "hook"
	}
	return "MCP server"
}

// kindCmd is the command that manages a kind.
func kindCmd(k hostdef.Kind) string {
	if k == hostdef.KindHook {
		return "s-code hooks"
	}
	return "s-code mcp-servers"
}

// hostStore loads the user's host process definitions.
func hostStore() (*hostdef.Store, string, error) {
	p, err := hostdef.UserPath(os.Getenv)
	if err != nil {
		return nil, "", err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, "", fmt.Errorf("host process definitions: %w", err)
	}
	s, err := hostdef.Load(p, os.Geteuid())
	return s, home, err
}

// confirmOn asks the person on the terminal streams.In is, or takes --yes. Without a
// terminal and without --yes it refuses: a pipe is not a person.
func confirmOn(streams IO, d *hostdef.Definition, home string, yes bool) error {
	if !yes {
		f, ok := streams.In.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			fmt.Fprint(streams.Err, d.Card(home).Text())
			return &ExitError{Code: ExitDenied, Err: fmt.Errorf("host process %s: no terminal to confirm on; review the card above and give --yes to confirm it", d.Name)}
		}
	}
	if err := hostdef.Confirm(d, home, streams.In, streams.Out, yes, time.Now()); err != nil {
		if errors.Is(err, hostdef.ErrDeclined) {
			return &ExitError{Code: ExitDenied, Err: err}
		}
		return err
	}
	return nil
}

func defOf(s *hostdef.Store, kind hostdef.Kind, name string) (*hostdef.Definition, error) {
	d := s.Defs[name]
	if d == nil || d.Kind != kind {
		return nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("no %s %q in %s", kindNoun(kind), name, s.Path)}
	}
	return d, nil
}

func newMCPAddCmd(streams IO) *cobra.Command {
	var env []string
	var dir string
	var yes bool
	cmd := &cobra.Command{
		Use:   "add NAME [--env K=HANDLE]... [--dir DIR] [--yes] -- COMMAND [ARG...]",
		Short: "Define an MCP stdio server, show its card and confirm it",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || cmd.ArgsLenAtDash() != 1 {
				return usagef("mcp-servers add: give NAME, then -- and the command with its arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, home, err := hostStore()
			if err != nil {
				return err
			}
			name := args[0]
			if s.Defs[name] != nil {
				return usagef("mcp-servers add: %s is already defined (s-code mcp-servers remove %s first)", name, name)
			}
			command, err := hostdef.ResolveCommand(args[1])
			if err != nil {
				return usagef("mcp-servers add: %v", err)
			}
			d := &hostdef.Definition{Name: name, Kind: hostdef.KindMCPServer, Command: command, Args: append([]string{}, args[2:]...), Dir: dir, Env: map[string]string{}}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usagef("mcp-servers add: --env takes NAME=HANDLE (a credential handle, never the value)")
				}
				d.Env[k] = v
			}
			if err := d.Validate(); err != nil {
				return usageError{err}
			}
			if err := confirmOn(streams, d, home, yes); err != nil {
				return err
			}
			d.Enabled = true
			s.Defs[name] = d
			if err := s.Save(); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "added MCP server %s to %s (enabled)\n", name, s.Path)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&env, "env", nil, "a variable the server gets, as `NAME=HANDLE` (env:, keyring:, systemd:, file:); repeatable")
	cmd.Flags().StringVar(&dir, "dir", "", "the absolute `DIR` the server runs in (default: your home)")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the card without a prompt (automation: you have reviewed it)")
	return cmd
}

func newMCPListCmd(streams IO, kind hostdef.Kind) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the definitions: enabled, confirmed, command",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, home, err := hostStore()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tCONFIRMED\tCOMMAND")
			for _, n := range s.Names() {
				d := s.Defs[n]
				if d.Kind != kind {
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%q\n", n, enabledWord(d.Enabled), confirmedWord(d, home), d.Command)
			}
			return tw.Flush()
		},
	}
}

func enabledWord(e bool) string {
	if e {
		return "enabled"
	}
	return "disabled"
}

// confirmedWord is "yes" when the card now is the one confirmed, "changed" when a
// confirmation exists for another card, "no" when none does.
func confirmedWord(d *hostdef.Definition, home string) string {
	switch {
	case d.Confirmed == "":
		return "no"
	case d.Confirmed != d.Card(home).Digest():
		return "changed"
	}
	return "yes"
}

func newMCPShowCmd(streams IO, kind hostdef.Kind) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a definition's permission preview card and whether it is confirmed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, home, err := hostStore()
			if err != nil {
				return err
			}
			d, err := defOf(s, kind, args[0])
			if err != nil {
				return err
			}
			fmt.Fprint(streams.Out, d.Card(home).Text())
			fmt.Fprintf(streams.Out, "  state:       %s\n", enabledWord(d.Enabled))
			switch confirmedWord(d, home) {
			case "yes":
				fmt.Fprintf(streams.Out, "  confirmed:   %s\n", d.ConfirmedAt.Format(time.RFC3339))
			case "changed":
				fmt.Fprintf(streams.Out, "  confirmed:   no, changed since confirmed %s (was %s); %s enable %s confirms it\n", d.ConfirmedAt.Format(time.RFC3339), d.Confirmed, kindCmd(kind), d.Name)
			default:
				fmt.Fprintf(streams.Out, "  confirmed:   no; %s enable %s confirms it\n", kindCmd(kind), d.Name)
			}
			return nil
		},
	}
}

func newMCPRemoveCmd(streams IO, kind hostdef.Kind) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a definition",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, _, err := hostStore()
			if err != nil {
				return err
			}
			if _, err := defOf(s, kind, args[0]); err != nil {
				return err
			}
			delete(s.Defs, args[0])
			if err := s.Save(); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "removed %s %s\n", kindNoun(kind), args[0])
			return nil
		},
	}
}

// newMCPEnableCmd is `enable` (on) or `disable`. Enabling a definition whose card is not the
// one confirmed shows the card and asks again.
func newMCPEnableCmd(streams IO, kind hostdef.Kind, on bool) *cobra.Command {
	var yes bool
	use, short := "disable NAME", "Disable a definition (it and its confirmation stay)"
	if on {
		use, short = "enable NAME [--yes]", "Enable a definition, confirming its card when it is not confirmed as it is now"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, home, err := hostStore()
			if err != nil {
				return err
			}
			d, err := defOf(s, kind, args[0])
			if err != nil {
				return err
			}
			if on && d.Runnable(home) != nil {
				if err := confirmOn(streams, d, home, yes); err != nil {
					return err
				}
			}
			d.Enabled = on
			if err := s.Save(); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "%s %s %s\n", map[bool]string{true: "enabled", false: "disabled"}[on], kindNoun(kind), d.Name)
			return nil
		},
	}
	if on {
		cmd.Flags().BoolVar(&yes, "yes", false, "confirm the card without a prompt (automation: you have reviewed it)")
	}
	return cmd
}

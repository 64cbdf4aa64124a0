package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/helperwire"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// approvalIDMin is the shortest id prefix s-code approvals accepts.
const approvalIDMin = 6

func newApprovalsCmd(streams IO) *cobra.Command {
	var (
		socket string
		asJSON bool
		expand bool
	)
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List, show, approve or deny requests waiting for a team approver (root helper)",
		Long: `approvals is the team approver's side of the root helper's [approvals] policy: a request
whose plan needs approval for one of its rules waits (default 10 minutes) until another
person in the approvers group decides. The helper knows who asks from the kernel (peer
credentials): only members of the group see or decide pending requests, never the
requester, and never a process inside an S-Code sandbox. The audit log records both uids.

An ID is the request id (from list; a unique prefix of at least 6 characters will do).
Exit status: 0 done; 1 refused (not an approver, the requester, no such request); 2 usage;
125 no root helper.`,
	}
	cmd.PersistentFlags().StringVar(&socket, "socket", "", "the root helper's socket `PATH` (default $S_CODE_ROOT_SOCKET or /run/s-code/root.sock)")
	dial := func(ctx context.Context) (*helperclient.Client, error) {
		s := socket
		if s == "" {
			var err error
			if s, err = helperclient.DefaultSocket(helperclient.Root); err != nil {
				return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
			}
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := helperclient.Dial(dctx, helperclient.Root, s)
		if err != nil {
			return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
		}
		return c, nil
	}
	refused := func(err error) error {
		if st, ok := status.FromError(err); ok {
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("refused by the root helper: %s", oneLine(st.Message()))}
		}
		return err
	}
	// find returns the pending request whose id is id or starts with it.
	find := func(ctx context.Context, c *helperclient.Client, id string) (*helperv1.PendingApproval, error) {
		if len(id) < approvalIDMin {
			return nil, usagef("ID %q: give at least %d characters of the request id", id, approvalIDMin)
		}
		all, err := c.ListApprovals(ctx, "")
		if err != nil {
			return nil, refused(err)
		}
		var hit *helperv1.PendingApproval
		for _, p := range all {
			if strings.HasPrefix(p.GetId(), id) {
				if hit != nil {
					return nil, usagef("ID %q names more than one pending request: give more characters", id)
				}
				hit = p
			}
		}
		if hit == nil {
			return nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("no pending request %q (decided, timed out, or its requester left)", id)}
		}
		return hit, nil
	}
	card := func(p *helperv1.PendingApproval) {
		pl, o := helperwire.PlanFromProto(p.GetPlan())
		fmt.Fprintf(streams.Out, "Request %s from uid %d (pid %d), pending until %s\n", p.GetId(), p.GetRequesterUid(), p.GetRequesterPid(), p.GetExpiresAt().AsTime().Local().Format("15:04:05"))
		writePlanCard(streams.Out, pl, o, p.GetPlan().GetDigest(), cardOptions{width: terminalWidth(streams.Out), expand: expand || asJSON, verdict: true})
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pending requests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			all, err := c.ListApprovals(cmd.Context(), "")
			if err != nil {
				return refused(err)
			}
			if asJSON {
				return writeJSON(streams.Out, pendingJSON(all))
			}
			if len(all) == 0 {
				_, err := fmt.Fprintln(streams.Out, "no pending requests")
				return err
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUID\tUNTIL\tRULES\tCOMMAND")
			for _, p := range all {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", p.GetId()[:min(12, len(p.GetId()))], p.GetRequesterUid(), p.GetExpiresAt().AsTime().Local().Format("15:04:05"),
					strings.Join(p.GetPlan().GetRules(), ","), oneLine(p.GetPlan().GetCommand()))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a pending request's frozen card",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := find(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(streams.Out, pendingJSON([]*helperv1.PendingApproval{p})[0])
			}
			card(p)
			return nil
		},
	}
	decide := func(approve bool) *cobra.Command {
		verb, done := "deny", "denied"
		if approve {
			verb, done = "approve", "approved"
		}
		return &cobra.Command{
			Use:   verb + " ID",
			Short: strings.ToUpper(verb[:1]) + verb[1:] + " a pending request (its card is printed first)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := dial(cmd.Context())
				if err != nil {
					return err
				}
				defer c.Close()
				p, err := find(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				card(p)
				d, err := c.DecideApproval(cmd.Context(), p.GetId(), approve)
				if err != nil {
					return refused(err)
				}
				if d != nil {
					return &ExitError{Code: ExitFailure, Err: fmt.Errorf("refused by the root helper: %s: %s", d.GetRule(), oneLine(d.GetReason()))}
				}
				_, err = fmt.Fprintf(streams.Out, "%s request %s\n", done, p.GetId())
				return err
			},
		}
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the pending requests as JSON (list, show)")
	cmd.PersistentFlags().BoolVar(&expand, "expand", false, "list every path on the card")
	cmd.AddCommand(list, show, decide(true), decide(false))
	return cmd
}

// pendingEntry is the --json form of a pending request.
type pendingEntry struct {
	ID           string    `json:"id"`
	RequesterUID uint32    `json:"requester_uid"`
	RequesterPID int32     `json:"requester_pid"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	Digest       string    `json:"digest"`
	Plan         any       `json:"plan"`
	Outcome      any       `json:"outcome"`
}

func pendingJSON(all []*helperv1.PendingApproval) []pendingEntry {
	out := []pendingEntry{}
	for _, p := range all {
		pl, o := helperwire.PlanFromProto(p.GetPlan())
		out = append(out, pendingEntry{ID: p.GetId(), RequesterUID: p.GetRequesterUid(), RequesterPID: p.GetRequesterPid(),
			CreatedAt: p.GetCreatedAt().AsTime(), ExpiresAt: p.GetExpiresAt().AsTime(), Digest: p.GetPlan().GetDigest(), Plan: pl, Outcome: o})
	}
	return out
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// editFlags are the flags s-code patch and s-code undo share: they send the edit to the
// user helper, which decides it in the session's mode and records it.
type editFlags struct {
	socket string
	yes    bool
	mode   string
	expand bool
}

func (f *editFlags) register(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "the user helper's socket `PATH` (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock)")
	fl.BoolVar(&f.yes, "yes", false, "approve this one "+what+" (in manual mode it needs a person's approval)")
	fl.StringVar(&f.mode, "mode", "", "permission `MODE`: manual, accept-edits or workspace (default: the configuration's mode, else manual; accept-edits and workspace apply edits inside the workspace without asking)")
	fl.BoolVar(&f.expand, "expand", false, "list every path on the approval card")
}

// editOperation is the operation of an edit in the workspace named by flag (empty: the
// helper resolves it from the working directory) in the session's mode. With a workspace
// given the helper resolves from it, so that any working directory may name one.
func editOperation(flag string, f editFlags) (helperclient.EditOperation, error) {
	mode, err := sessionMode(f.mode)
	if err != nil {
		return helperclient.EditOperation{}, err
	}
	cwd, err := absDir("", "")
	if err != nil {
		return helperclient.EditOperation{}, err
	}
	op := helperclient.EditOperation{Cwd: cwd, Mode: mode}
	if flag != "" {
		if op.Workspace, err = absDir(flag, "--workspace"); err != nil {
			return op, err
		}
		op.Cwd = op.Workspace
	}
	return op, nil
}

// dialUserHelper connects to the user helper at socket (default: helperclient.DefaultSocket).
// No helper is an *ExitError with ExitHelperUnavailable saying how to start one: an edit is
// never made without the helper that decides and records it.
func dialUserHelper(ctx context.Context, socket string) (*helperclient.Client, error) {
	var err error
	if socket == "" {
		if socket, err = helperclient.DefaultSocket(helperclient.User); err != nil {
			return nil, &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("%w; nothing was changed", err)}
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := helperclient.Dial(dctx, helperclient.User, socket)
	if err != nil {
		return nil, &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("%w; nothing was changed (every edit goes through the user helper, which decides it and records it)", err)}
	}
	return c, nil
}

// editApprover asks for a plan that needs approval as askApproval does for a command:
// --yes approves this one plan, a terminal shows the card and asks question, and without
// either the plan is refused with a message naming both ways to approve.
func editApprover(streams IO, f editFlags, question string) helperclient.Approver {
	return helperclient.ApproverFunc(func(_ context.Context, pl *helperclient.Planned) (permission.Channel, error) {
		if f.yes {
			return permission.ChannelFlag, nil
		}
		in, inOK := streams.In.(*os.File)
		errf, errOK := streams.Err.(*os.File)
		if !inOK || !errOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(errf.Fd())) {
			return 0, editNotApproved(fmt.Sprintf("%s: %s (mode %s; no terminal to ask on: rerun with --yes to approve this one change, or --mode accept-edits)",
				strings.Join(pl.Outcome.Rules, ", "), oneLine(pl.Outcome.Reason), pl.Plan.Mode))
		}
		yes, err := confirmCard(in, streams.Err, question, f.expand, func(opt cardOptions) {
			opt.width = terminalWidth(streams.Err)
			writePlanCard(streams.Err, pl.Plan, pl.Outcome, pl.Digest, opt)
		})
		if err != nil {
			return 0, err
		}
		if yes {
			return permission.ChannelTerminal, nil
		}
		return 0, editNotApproved("")
	})
}

// editNotApproved is an edit a person did not approve, or could not: it is
// helperclient.ErrNotApproved (errors.Is), worded for an edit, whose refusal ends with
// "nothing was changed" (editFailure), not with helperclient's "nothing was run".
type editNotApproved string

// Error returns "not approved", then the detail.
func (e editNotApproved) Error() string {
	if e == "" {
		return "not approved"
	}
	return "not approved: " + string(e)
}

// Unwrap returns helperclient.ErrNotApproved.
func (e editNotApproved) Unwrap() error { return helperclient.ErrNotApproved }

// editFailure turns an edit that did not reach the file tools into its error object and
// exit status: not approved or refused by the helper (1, or 126 for a refused workspace, as
// before the helper decided), no helper or a helper failure (125).
func editFailure(res *helperclient.EditResult, err error) (errorObject, int) {
	switch {
	case errors.Is(err, helperclient.ErrNotApproved):
		return errorObject{Code: "not_approved", Message: err.Error() + "; nothing was changed", Applied: []filetools.Applied{}}, ExitFailure
	case err != nil:
		var ee *ExitError
		if errors.As(err, &ee) {
			return errorObject{Code: "helper_unavailable", Message: err.Error(), Applied: []filetools.Applied{}}, ee.Code
		}
		code := ExitHelperUnavailable
		if st, ok := status.FromError(err); ok && st.Code() == codes.PermissionDenied {
			code = ExitDenied
		}
		return errorObject{Code: "helper_error", Message: "user helper: " + err.Error(), Applied: []filetools.Applied{}}, code
	}
	d := res.Denied
	msg := d.GetReason()
	for _, fd := range d.GetFindings() {
		if fd.GetDecision() == helperv1.Decision_DECISION_DENY && fd.GetMessage() != "" {
			msg = fd.GetMessage()
			break
		}
	}
	code := filetools.CodeOfRule(d.GetRule())
	exit := ExitFailure
	if code == "workspace_refused" {
		exit = ExitDenied
	}
	return errorObject{Code: code, Message: d.GetRule() + ": " + msg, Applied: []filetools.Applied{}}, exit
}

// printEditFailure prints an edit failure as --json's error object or as the error.
func printEditFailure(streams IO, asJSON bool, eo errorObject, exit int) error {
	if asJSON {
		if err := writeJSON(streams.Out, eo); err != nil {
			return err
		}
		return &ExitError{Code: exit}
	}
	return &ExitError{Code: exit, Err: errors.New(eo.Message)}
}

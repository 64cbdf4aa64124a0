package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
)

// Exit statuses of s-code patch beyond the shared ones.
const (
	// ExitPatchRefused: the batch was refused in preflight; nothing was written.
	ExitPatchRefused = 1
	// ExitPatchPartial: a write failed after preflight; the error lists the applied paths.
	ExitPatchPartial = 3
)

func newPatchCmd(streams IO) *cobra.Command {
	var (
		workspace, turn, file string
		asJSON                bool
		ef                    editFlags
	)
	cmd := &cobra.Command{
		Use:   "patch",
		Short: "Apply an apply_patch request (JSON on stdin or --file) to the workspace",
		Long: `patch applies one apply_patch request: an envelope {"files": [...]} of line edits, exact
text edits or whole content, a {"patch": "*** Begin Patch...", "revisions": {...}} request,
or a legacy single-file request (see docs/patch.md). Every path, revision and edit is
checked before the first write; each file is then written atomically and recorded for
"s-code undo" under the turn id (--turn, or a new one, printed).

The user helper applies the batch: it plans it (the workspace it resolves and validates, the
complete paths of the targets), decides it in the permission mode (--mode, else the
configuration's, else manual: manual asks a person, on the terminal or with --yes for this
one batch; accept-edits and workspace apply edits inside the workspace without asking),
and writes an audit record with the paths, the revisions before and after, the turn and
the approval. With no user helper running, nothing is written: start one with
` + "`s-code-userhelper --listen $XDG_RUNTIME_DIR/s-code/user.sock`" + ` or
` + "`systemctl --user start s-code-userhelper.socket`" + `.

Exit status: 0 applied; 1 refused or not approved, nothing written; 2 malformed request
or usage; 3 a write failed part-way (the error lists the applied paths and the failed one);
125 no user helper answered, nothing written; 126 the workspace was refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fail := func(err error, code int) error {
				if asJSON {
					return writeJSONError(streams, err, code)
				}
				return &ExitError{Code: code, Err: err}
			}
			if turn == "" {
				id, err := turns.NewID()
				if err != nil {
					return err
				}
				turn = id
			} else if err := turns.ValidID(turn); err != nil {
				return usagef("--turn: %v", err)
			}
			var in io.Reader = streams.In
			if file != "" {
				f, err := os.Open(file)
				if err != nil {
					return usagef("--file: %v", err)
				}
				defer f.Close()
				in = f
			}
			data, err := io.ReadAll(io.LimitReader(in, patch.MaxBytes+1))
			if err != nil {
				return fail(fmt.Errorf("read request: %w", err), ExitUsage)
			}
			// The client decodes first, so that malformed input exits 2 before any helper is
			// asked; the helper decodes the same bytes again.
			if _, err := patch.Decode(data); err != nil {
				code := ExitPatchRefused
				if filetools.Malformed(err) || errors.Is(err, patch.ErrLimit) && len(data) > patch.MaxBytes {
					code = ExitUsage
				}
				return fail(err, code)
			}
			op, err := editOperation(workspace, ef)
			if err != nil {
				return err
			}
			op.Patch, op.Turn = data, turn
			client, err := dialUserHelper(cmd.Context(), ef.socket)
			if err != nil {
				eo, code := editFailure(nil, err)
				return printEditFailure(streams, asJSON, eo, code)
			}
			defer client.Close()
			er, _, err := client.ApplyPatch(cmd.Context(), op, editApprover(streams, ef, "Apply this patch?"))
			if err != nil || er.Denied != nil {
				eo, code := editFailure(er, err)
				return printEditFailure(streams, asJSON, eo, code)
			}
			if !er.Applied {
				var eo errorObject
				if err := json.Unmarshal(er.ResultJSON, &eo); err != nil {
					return fmt.Errorf("the user helper's answer: %w", err)
				}
				code := ExitPatchRefused
				if eo.Failed != "" {
					code = ExitPatchPartial
				}
				return printEditFailure(streams, asJSON, eo, code)
			}
			var res filetools.Result
			if err := json.Unmarshal(er.ResultJSON, &res); err != nil {
				return fmt.Errorf("the user helper's answer: %w", err)
			}
			if asJSON {
				return writeJSON(streams.Out, res)
			}
			for _, a := range res.Applied {
				verb := "applied"
				if a.Created {
					verb = "created"
				}
				fmt.Fprintf(streams.Out, "%s %s  revision %s\n", verb, displayPath(a.Path), a.Revision)
			}
			_, err = fmt.Fprintf(streams.Out, "turn %s\n", res.Turn)
			return err
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root (default: the Git top-level of the working directory, else the working directory)")
	cmd.Flags().StringVar(&turn, "turn", "", "turn id the change is recorded under for undo (default: a new id, printed)")
	cmd.Flags().StringVar(&file, "file", "", "read the request from this file instead of stdin")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result (or the error object) as JSON")
	ef.register(cmd, "patch")
	return cmd
}

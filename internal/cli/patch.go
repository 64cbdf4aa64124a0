package cli

import (
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
	)
	cmd := &cobra.Command{
		Use:   "patch",
		Short: "Apply an apply_patch request (JSON on stdin or --file) to the workspace",
		Long: `patch applies one apply_patch request: an envelope {"files": [...]} of line edits, exact
text edits or whole content, a {"patch": "*** Begin Patch...", "revisions": {...}} request,
or a legacy single-file request (see docs/patch.md). Every path, revision and edit is
checked before the first write; each file is then written atomically and recorded for
"s-code undo" under the turn id (--turn, or a new one, printed).

Exit status: 0 applied; 1 refused, nothing written; 2 malformed request or usage;
3 a write failed part-way (the error lists the applied paths and the failed one).`,
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
			req, err := patch.Decode(data)
			if err != nil {
				code := ExitPatchRefused
				if filetools.Malformed(err) || errors.Is(err, patch.ErrLimit) && len(data) > patch.MaxBytes {
					code = ExitUsage
				}
				return fail(err, code)
			}
			root, err := openWorkspace(workspace)
			if err != nil {
				return fail(err, ExitFailure)
			}
			defer root.Close()
			store, err := turnStore(root)
			if err != nil {
				return fail(err, ExitFailure)
			}
			res, err := (&filetools.Applier{Root: root, Turns: store}).Apply(req, turn)
			if err != nil {
				code := ExitPatchRefused
				var be *filetools.BatchError
				if errors.As(err, &be) && be.Failed != "" {
					code = ExitPatchPartial
				}
				return fail(err, code)
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
	return cmd
}

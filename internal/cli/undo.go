package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/turns"
)

func newUndoCmd(streams IO) *cobra.Command {
	var (
		workspace, turn string
		asJSON          bool
		ef              editFlags
	)
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Revert the files a turn changed, where they still hold what the turn wrote",
		Long: `undo restores each file of a turn (the latest turn of the workspace not yet undone, or
--turn) to its bytes from before the turn, and deletes the files the turn created. A file
changed since the turn is left alone and reported.

The user helper undoes the turn, decided in the permission mode as s-code patch's batches
(manual asks: on the terminal, or --yes for this one undo) and recorded in its audit log.
With no user helper running nothing is changed (exit 125).

Exit status: 0 every file undone; 1 nothing to undo, not approved, or a file was left
alone; 2 usage; 125 no user helper answered; 126 the workspace was refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if turn != "" {
				if err := turns.ValidID(turn); err != nil {
					return usagef("--turn: %v", err)
				}
			}
			op, err := editOperation(workspace, ef)
			if err != nil {
				return err
			}
			op.Turn = turn
			client, err := dialUserHelper(cmd.Context(), ef.socket)
			if err != nil {
				eo, code := editFailure(nil, err)
				return printEditFailure(streams, asJSON, eo, code)
			}
			defer client.Close()
			ur, _, err := client.Undo(cmd.Context(), op, editApprover(streams, ef, "Undo this turn?"))
			if err != nil || ur.Denied != nil {
				eo, code := editFailure(ur, err)
				return printEditFailure(streams, asJSON, eo, code)
			}
			// The helper's answer: the result (with an error when the turn is partly undone),
			// or the error object of an undo that failed before any file.
			var out struct {
				*filetools.UndoResult
				Error *errorObject `json:"error,omitempty"`
			}
			var eo errorObject
			if err := json.Unmarshal(ur.ResultJSON, &eo); err != nil {
				return fmt.Errorf("the user helper's answer: %w", err)
			}
			if eo.Code != "" {
				return printEditFailure(streams, asJSON, eo, ExitFailure)
			}
			if err := json.Unmarshal(ur.ResultJSON, &out); err != nil || out.UndoResult == nil {
				return fmt.Errorf("the user helper's answer: %v", err)
			}
			res := out.UndoResult
			if !ur.Applied && out.Error == nil {
				out.Error = &errorObject{Code: "not_undone", Message: filetools.ErrNotUndone.Error(), Applied: []filetools.Applied{}}
			}
			if asJSON {
				if werr := writeJSON(streams.Out, out); werr != nil {
					return werr
				}
				if out.Error != nil {
					return &ExitError{Code: ExitFailure}
				}
				return nil
			}
			if out.Error != nil {
				err = errors.New(out.Error.Message)
			}
			for _, p := range res.Restored {
				fmt.Fprintf(streams.Out, "restored %s\n", displayPath(p))
			}
			for _, p := range res.Deleted {
				fmt.Fprintf(streams.Out, "deleted %s\n", displayPath(p))
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(streams.Out, "skipped %s: %s\n", displayPath(s.Path), s.Reason)
			}
			if err != nil {
				// Not "undone" followed by an error saying otherwise: the turn is marked
				// undone, but some of its files are not back (stderr says which and why).
				fmt.Fprintf(streams.Out, "turn %s partly undone\n", res.Turn)
				return &ExitError{Code: ExitFailure, Err: err}
			}
			fmt.Fprintf(streams.Out, "turn %s undone\n", res.Turn)
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root (default: the Git top-level of the working directory, else the working directory)")
	cmd.Flags().StringVar(&turn, "turn", "", "turn to undo (default: the latest turn of the workspace not yet undone)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	ef.register(cmd, "undo")
	return cmd
}

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/turns"
)

func newUndoCmd(streams IO) *cobra.Command {
	var (
		workspace, turn string
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Revert the files a turn changed, where they still hold what the turn wrote",
		Long: `undo restores each file of a turn (the latest turn of the workspace not yet undone, or
--turn) to its bytes from before the turn, and deletes the files the turn created. A file
changed since the turn is left alone and reported.

Exit status: 0 every file undone; 1 nothing to undo, or a file was left alone; 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if turn != "" {
				if err := turns.ValidID(turn); err != nil {
					return usagef("--turn: %v", err)
				}
			}
			fail := func(err error) error {
				if asJSON {
					return writeJSONError(streams, err, ExitFailure)
				}
				return &ExitError{Code: ExitFailure, Err: err}
			}
			root, err := openWorkspace(workspace)
			if err != nil {
				return fail(err)
			}
			defer root.Close()
			store, err := turnStore(root)
			if err != nil {
				return fail(err)
			}
			res, err := filetools.Undo(root, store, turn)
			if res == nil {
				if asJSON {
					return writeJSONError(streams, err, ExitFailure)
				}
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if asJSON {
				out := struct {
					*filetools.UndoResult
					Error *errorObject `json:"error,omitempty"`
				}{UndoResult: res}
				if err != nil {
					eo := errorObjectOf(err)
					out.Error = &eo
				}
				if werr := writeJSON(streams.Out, out); werr != nil {
					return werr
				}
				if err != nil {
					return &ExitError{Code: ExitFailure}
				}
				return nil
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
	return cmd
}

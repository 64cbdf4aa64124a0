package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/tools"
)

func newReadCmd(streams IO) *cobra.Command {
	var (
		workspace     string
		offset, limit int
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "read PATH",
		Short: "Print a workspace file with numbered lines, its SHA-256 and revision",
		Long: `read prints a file of the workspace as read_file returns it: a header line with the
path, revision (first 16 hex characters of the SHA-256), SHA-256 and line range, then the
lines, each numbered (right-aligned in 6 columns, a tab, the line). Symlinks anywhere on the
path, binary files and files over 16 MiB are refused. Lines over 2000 bytes are cut with a
visible marker.

Exit status: 0 read, 1 refused (missing, symlink, binary, too large), 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if offset < 0 || limit < 0 {
				return usagef("--offset and --limit must not be negative")
			}
			root, err := openWorkspace(workspace)
			if err != nil {
				if asJSON {
					return writeJSONError(streams, err, ExitFailure)
				}
				return &ExitError{Code: ExitFailure, Err: err}
			}
			defer root.Close()
			res, err := tools.ReadFile(cmd.Context(), &tools.Env{Root: root}, tools.ReadFileInput{Path: args[0], Offset: offset, Limit: limit})
			if err != nil {
				err = cliError(err)
				if asJSON {
					return writeJSONError(streams, err, ExitFailure)
				}
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if asJSON {
				return writeJSON(streams.Out, res)
			}
			last := res.Offset + res.Lines - 1
			trunc := ""
			if res.Truncated {
				trunc = "  (truncated)"
			}
			fmt.Fprintf(streams.Out, "%s  revision %s  sha256 %s  lines %d-%d of %d%s\n",
				displayPath(res.Path), res.Revision, res.SHA256, res.Offset, last, res.TotalLines, trunc)
			_, err = fmt.Fprint(streams.Out, res.NumberedContent)
			return err
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root (default: the Git top-level of the working directory, else the working directory)")
	cmd.Flags().IntVar(&offset, "offset", 0, "first line to show, 1-based (default 1)")
	cmd.Flags().IntVar(&limit, "limit", 0, "lines to show at most (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// cliError returns the cause of a tool's refusal (the CLI prints its own words; the advice
// written for a model stays in the MCP server).
func cliError(err error) error {
	var te *tools.Error
	if errors.As(err, &te) && te.Err != nil {
		return te.Err
	}
	return err
}

// writeJSONError prints err's error object as JSON on stdout and exits with code.
func writeJSONError(streams IO, err error, code int) error {
	if werr := writeJSON(streams.Out, errorObjectOf(err)); werr != nil {
		return werr
	}
	return &ExitError{Code: code}
}

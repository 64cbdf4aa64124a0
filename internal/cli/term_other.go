//go:build !unix

package cli

import (
	"io"
	"os"
	"strconv"
)

// terminalWidth returns $COLUMNS when set, else 0 (no limit): window sizes are read on Unix
// only.
func terminalWidth(io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

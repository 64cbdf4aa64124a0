//go:build unix

package cli

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// terminalWidth returns the width in columns of the terminal w writes to: $COLUMNS when set,
// else the TIOCGWINSZ window size; 0 (no limit) when w is not a terminal.
func terminalWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

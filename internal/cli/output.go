package cli

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// writeJSON writes v to w as one line of JSON, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// displayPath returns p for a line of plain output: as it is, or Go-quoted when it holds a
// control character or invalid UTF-8, so that a file name chosen by a request (a newline, a
// terminal escape sequence) cannot forge output lines or drive the terminal.
func displayPath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

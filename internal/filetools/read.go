package filetools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Read limits.
const (
	MaxReadBytes = patch.MaxBytes // largest file read_file returns (16 MiB)
	MaxLineBytes = 2000           // longer lines are cut, with a visible marker
	binarySniff  = 8000           // bytes searched for NUL, as git does (buffer_is_binary)
)

// ErrBinary: the file has a NUL byte in its first 8000 bytes (git's binary heuristic).
var ErrBinary = errors.New("binary file")

// ErrOffset: the requested first line is past the end of the file.
var ErrOffset = errors.New("offset past the end of the file")

// ReadOptions select the lines read_file shows.
type ReadOptions struct {
	Offset int // first line shown, 1-based; 0 means 1
	Limit  int // lines shown at most; 0 means all
}

// ReadResult is read_file's answer.
type ReadResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`     // numbered lines: "%6d\t<line>\n" each
	SHA256     string `json:"sha256"`      // hex SHA-256 of the whole file's bytes
	Revision   string `json:"revision"`    // first 16 hex characters of SHA256
	TotalLines int    `json:"total_lines"` // lines in the whole file
	Offset     int    `json:"offset"`      // first line shown
	Lines      int    `json:"lines"`       // lines shown
	Truncated  bool   `json:"truncated"`   // lines were left out, or a long line was cut
	CutLines   int    `json:"cut_lines,omitempty"`
}

// Revision returns the revision of content: the first 16 hex characters of its SHA-256.
func Revision(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:8])
}

// Read returns the numbered lines of the file p in the workspace, its SHA-256 and revision.
// Errors: wsfs path errors (symlinks, escapes, missing files), wsfs.ErrTooLarge over
// MaxReadBytes, ErrBinary for binary files, ErrOffset for an offset past the end.
func Read(root *wsfs.Root, p string, opts ReadOptions) (*ReadResult, error) {
	data, _, err := root.ReadFile(p, MaxReadBytes)
	if err != nil {
		return nil, err
	}
	sniff := data
	if len(sniff) > binarySniff {
		sniff = sniff[:binarySniff]
	}
	if i := bytes.IndexByte(sniff, 0); i >= 0 {
		return nil, fmt.Errorf("path %q: NUL byte at offset %d: %w; read_file shows text only", p, i, ErrBinary)
	}
	sum := sha256.Sum256(data)
	res := &ReadResult{Path: p, SHA256: hex.EncodeToString(sum[:])}
	res.Revision = res.SHA256[:16]
	total := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	res.TotalLines = total
	first := opts.Offset
	if first <= 0 {
		first = 1
	}
	if first > total+1 || (first > 1 && first > total) {
		return nil, fmt.Errorf("path %q: offset %d: %w (the file has %d lines)", p, first, ErrOffset, total)
	}
	last := total
	if opts.Limit > 0 && first+opts.Limit-1 < total {
		last = first + opts.Limit - 1
		res.Truncated = true
	}
	if first > 1 {
		res.Truncated = true
	}
	res.Offset = first
	out := make([]byte, 0, len(data)+8*(last-first+1)+16)
	rest := data
	for n := 1; n <= last && len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		if n < first {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		out = appendNumber(out, n)
		out = append(out, '\t')
		if len(line) > MaxLineBytes {
			cut := MaxLineBytes
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			out = append(out, line[:cut]...)
			out = append(out, " … [line cut: "...)
			out = strconv.AppendInt(out, int64(len(line)), 10)
			out = append(out, " bytes]"...)
			res.CutLines++
			res.Truncated = true
		} else {
			out = append(out, line...)
		}
		out = append(out, '\n')
		res.Lines++
	}
	res.Content = string(out)
	return res, nil
}

// appendNumber appends n right-aligned in 6 columns (wider numbers take their width).
func appendNumber(b []byte, n int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], int64(n), 10)
	for i := len(s); i < 6; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

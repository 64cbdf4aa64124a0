package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/safety"
)

// batchLine is one line of `s-code check --batch` input. Cmd is a pointer so that a
// missing "cmd" is told apart from an empty one.
type batchLine struct {
	Cmd       *string `json:"cmd"`
	Context   string  `json:"context,omitempty"`
	Workspace string  `json:"workspace,omitempty"`
	Cwd       string  `json:"cwd,omitempty"`
	Mode      string  `json:"mode,omitempty"`
}

// batchError is the output line for a malformed input line.
type batchError struct {
	Error string `json:"error"`
	Line  int    `json:"line"`
}

// errLineTooLong marks a batch line longer than maxCommandBytes.
var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxCommandBytes)

// runBatch judges each JSON line of streams.In and writes one verdict object (or one
// batchError) a line to streams.Out, in input order. A line's own context, workspace and
// cwd override the flags; its cwd defaults as in resolvePlace, from the process working
// directory procWd. It returns exit status 2 when any line was malformed.
func runBatch(streams IO, base safety.Context, procWd string, o checkOptions) error {
	if streams.In == nil {
		return usagef("--batch: no standard input")
	}
	r := bufio.NewReaderSize(streams.In, 64<<10)
	malformed := 0
	for n := 1; ; n++ {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) && line == nil {
			break
		}
		var out any
		if errors.Is(err, errLineTooLong) {
			out = batchError{Error: err.Error(), Line: n}
		} else if err != nil && !errors.Is(err, io.EOF) {
			return usageError{fmt.Errorf("--batch: read line %d: %w", n, err)}
		} else if v, perr := judgeBatchLine(line, base, procWd, o); perr != nil {
			out = batchError{Error: perr.Error(), Line: n}
		} else {
			out = v
		}
		if _, ok := out.(batchError); ok {
			malformed++
		}
		if werr := writeJSONLine(streams.Out, out); werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if malformed > 0 {
		return &ExitError{Code: ExitUsage}
	}
	return nil
}

// readLine returns the next line of r without its newline (and a CR before it is kept: it is
// part of the JSON text, where a raw CR outside a string is whitespace). It returns io.EOF
// with the last, unterminated line (nil when there is none), and errLineTooLong, after
// consuming the rest of the line, when the line is longer than maxCommandBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxCommandBytes+1 {
				tooLong = true
				line = nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			if tooLong {
				return []byte{}, errLineTooLong
			}
			return line[:len(line)-1], nil
		case errors.Is(err, io.EOF):
			if tooLong {
				return []byte{}, errLineTooLong
			}
			if len(line) == 0 {
				return nil, io.EOF
			}
			return line, io.EOF
		default:
			return nil, err
		}
	}
}

// judgeBatchLine decodes one batch line strictly (unknown fields and trailing data are
// refused) and judges its command.
func judgeBatchLine(line []byte, base safety.Context, procWd string, o checkOptions) (any, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return safety.Verdict{}, errors.New("empty line (want a JSON object with \"cmd\")")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var in batchLine
	if err := dec.Decode(&in); err != nil {
		return safety.Verdict{}, fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return safety.Verdict{}, errors.New("bad JSON: data after the object")
	}
	if in.Cmd == nil {
		return safety.Verdict{}, errors.New(`missing "cmd"`)
	}
	if *in.Cmd == "" {
		return safety.Verdict{}, errors.New(`empty "cmd"`)
	}
	ctx := base
	if in.Context != "" {
		role, err := parseRole(in.Context)
		if err != nil {
			return safety.Verdict{}, fmt.Errorf(`"context": %w`, err)
		}
		ctx.Role = role
	}
	ws, cwd := o.workspace, o.cwd
	if in.Workspace != "" {
		// The line names its own workspace: the --cwd flag belonged to the flag's workspace.
		ws, cwd = in.Workspace, ""
	}
	if in.Cwd != "" {
		cwd = in.Cwd
	}
	ctx.Workspace, ctx.Cwd = resolvePlace(procWd, ws, cwd)
	modeName := o.mode
	if in.Mode != "" {
		modeName = in.Mode
	}
	if modeName == "" {
		return safety.Check(*in.Cmd, ctx), nil
	}
	mode, err := permission.ParseMode(modeName)
	if err != nil {
		return nil, fmt.Errorf(`"mode": %w`, err)
	}
	p := localPlan(*in.Cmd, ctx, mode, o.network, o.writable)
	return newPlanJSON(p, permission.Decide(mode, p), "local", ""), nil
}

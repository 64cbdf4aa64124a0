package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/tools"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// ProcessesFunc returns the user helper's Processes client for one call.
type ProcessesFunc func(ctx context.Context) (processesv1.ProcessesClient, error)

// terminals are the agent-facing background terminal tools of one session, over the user
// helper's Processes service: every terminal belongs to the session (session id
// "mcp-RANDOM") and stops when it ends.
type terminals struct {
	session string
	dial    ProcessesFunc
	started atomic.Bool // a terminal_start reached the helper
}

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}

// TerminalStartInput is terminal_start's arguments.
type TerminalStartInput struct {
	Command string   `json:"command" jsonschema:"the program (a name on PATH or an absolute path), e.g. npm"`
	Args    []string `json:"args,omitempty" jsonschema:"its arguments, one string each, e.g. [\"run\",\"dev\"]"`
	Name    string   `json:"name,omitempty" jsonschema:"a name for the terminal ([a-z0-9][a-z0-9_-]*; default term)"`
	Dir     string   `json:"dir,omitempty" jsonschema:"directory relative to the workspace root (default the root)"`
}

// TerminalInfo is one terminal of the session.
type TerminalInfo struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	PID      int32    `json:"pid"`
	Command  []string `json:"command"`
	Running  bool     `json:"running"`
	ExitCode *int32   `json:"exit_code,omitempty"`
}

func terminalInfo(p *processesv1.Process) TerminalInfo {
	t := TerminalInfo{ID: p.GetId(), Name: p.GetName(), PID: p.GetPid(), Command: p.GetCommand(), Running: p.GetRunning()}
	if !p.GetRunning() {
		c := p.GetExitCode()
		t.ExitCode = &c
	}
	return t
}

// TerminalIDInput names a terminal of the session.
type TerminalIDInput struct {
	ID string `json:"id" jsonschema:"the terminal's id (terminal_start and terminal_list give it)"`
}

// TerminalReadInput is terminal_read's arguments.
type TerminalReadInput struct {
	ID       string `json:"id" jsonschema:"the terminal's id"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"output returned at most, in bytes (default 16384, at most 262144)"`
}

// TerminalReadResult is terminal_read's answer: output since the last read, redacted.
type TerminalReadResult struct {
	Output   string       `json:"output"`
	Dropped  int64        `json:"dropped"` // bytes the output limit discarded before output
	More     bool         `json:"more"`    // more output waits
	Terminal TerminalInfo `json:"terminal"`
}

// TerminalWriteInput is terminal_write's arguments.
type TerminalWriteInput struct {
	ID   string `json:"id" jsonschema:"the terminal's id"`
	Data string `json:"data" jsonschema:"text sent to its standard input (add \\n to end a line)"`
}

// TerminalList is terminal_list's and terminal_stop's answer.
type TerminalList struct {
	Terminals []TerminalInfo `json:"terminals"`
}

// own returns the session's process id, or an error for a process of another session.
func (tm *terminals) own(ctx context.Context, c processesv1.ProcessesClient, id string) error {
	resp, err := c.List(ctx, &processesv1.ListRequest{Session: tm.session})
	if err != nil {
		return helperErr(err)
	}
	for _, p := range resp.GetProcesses() {
		if p.GetId() == id && p.GetTerminal() {
			return nil
		}
	}
	return &tools.Error{Code: "unknown_terminal", Message: "no terminal " + id + " in this session; terminal_list names them"}
}

func helperErr(err error) error {
	return &tools.Error{Code: "unavailable", Message: "the user helper's Processes service: " + err.Error()}
}

// tools returns the deferred terminal tools.
func (tm *terminals) tools(home string) []tools.Tool {
	return []tools.Tool{
		tools.Must(tools.Spec[TerminalStartInput, TerminalInfo]{
			Name: "terminal_start",
			Description: "Start a background terminal: a command in a PTY (a dev server, a watcher) that keeps running between tool calls, " +
				"in the user helper, OUTSIDE the sandbox with the user's files, network and credentials. A person confirms its card first. " +
				"It stops when this session ends. Read its output with terminal_read, send input with terminal_write, stop it with terminal_stop.",
			Summary:  "Start a background terminal (dev server, watcher) outside the sandbox, after a person confirms",
			Deferred: true,
			Call: func(ctx context.Context, env *tools.Env, in TerminalStartInput) (TerminalInfo, error) {
				command, err := hostdef.ResolveCommand(in.Command)
				if err != nil {
					return TerminalInfo{}, &tools.Error{Code: "invalid_arguments", Message: err.Error()}
				}
				name := in.Name
				if name == "" {
					name = "term"
				}
				dir := env.Root.Path()
				if in.Dir != "" {
					rel, err := env.Root.Rel(in.Dir)
					if err != nil {
						return TerminalInfo{}, &tools.Error{Code: "invalid_arguments", Message: err.Error()}
					}
					dir = env.Root.Abs(rel)
				}
				d := &hostdef.Definition{Name: name, Kind: hostdef.KindTerminal, Command: command, Args: append([]string{}, in.Args...), Dir: filepath.Clean(dir), Env: map[string]string{}}
				if err := d.Validate(); err != nil {
					return TerminalInfo{}, &tools.Error{Code: "invalid_arguments", Message: err.Error()}
				}
				hc := d.Card(home)
				card := &tools.Card{Kind: "terminal_start", Title: "Start a background terminal outside the sandbox", Workspace: env.Root.Path(),
					Mode: env.Mode.String(), Cwd: hc.Dir, HostCommand: commandLine(hc), Authority: hostdef.AmbientAuthority, Digest: hc.Digest()}
				if err := approve(ctx, env, card); err != nil {
					return TerminalInfo{}, err
				}
				d.Confirmed = hc.Digest()
				c, err := tm.dial(ctx)
				if err != nil {
					return TerminalInfo{}, helperErr(err)
				}
				tm.started.Store(true)
				resp, err := c.Start(ctx, &processesv1.StartRequest{
					What:    &processesv1.StartRequest_Terminal{Terminal: &processesv1.Terminal{Name: d.Name, Command: d.Command, Args: d.Args, Dir: d.Dir, Env: d.Env, ConfirmedDigest: d.Confirmed}},
					Session: tm.session,
				})
				if err != nil {
					return TerminalInfo{}, helperErr(err)
				}
				return terminalInfo(resp.GetProcess()), nil
			},
		}),
		tools.Must(tools.Spec[TerminalReadInput, TerminalReadResult]{
			Name:        "terminal_read",
			Description: "Read a background terminal's new output since the last read (redacted: credentials and secrets replaced by markers), bounded by max_bytes.",
			Summary:     "Read a background terminal's new output (redacted)",
			ReadOnly:    true,
			Deferred:    true,
			Call: func(ctx context.Context, _ *tools.Env, in TerminalReadInput) (TerminalReadResult, error) {
				c, err := tm.dial(ctx)
				if err != nil {
					return TerminalReadResult{}, helperErr(err)
				}
				if err := tm.own(ctx, c, in.ID); err != nil {
					return TerminalReadResult{}, err
				}
				maxN := uint32(clamp(in.MaxBytes, 16<<10, 256<<10))
				resp, err := c.Read(ctx, &processesv1.ReadRequest{Id: in.ID, MaxBytes: maxN})
				if err != nil {
					return TerminalReadResult{}, helperErr(err)
				}
				return TerminalReadResult{Output: string(resp.GetData()), Dropped: resp.GetDropped(), More: resp.GetMore(), Terminal: terminalInfo(resp.GetProcess())}, nil
			},
		}),
		tools.Must(tools.Spec[TerminalWriteInput, TerminalList]{
			Name:        "terminal_write",
			Description: "Send text to a background terminal's standard input. A person approves each write (the terminal runs outside the sandbox).",
			Summary:     "Send input to a background terminal, after a person approves",
			Deferred:    true,
			Call: func(ctx context.Context, env *tools.Env, in TerminalWriteInput) (TerminalList, error) {
				c, err := tm.dial(ctx)
				if err != nil {
					return TerminalList{}, helperErr(err)
				}
				if err := tm.own(ctx, c, in.ID); err != nil {
					return TerminalList{}, err
				}
				card := &tools.Card{Kind: "terminal_write", Title: "Send input to the background terminal " + in.ID, Workspace: env.Root.Path(),
					Mode: env.Mode.String(), Tool: "terminal_write", Arguments: fmt.Sprintf("%q", in.Data), Authority: hostdef.AmbientAuthority}
				if err := approve(ctx, env, card); err != nil {
					return TerminalList{}, err
				}
				if _, err := c.Write(ctx, &processesv1.WriteRequest{Id: in.ID, Data: []byte(in.Data)}); err != nil {
					return TerminalList{}, helperErr(err)
				}
				return tm.list(ctx, c)
			},
		}),
		tools.Must(tools.Spec[struct{}, TerminalList]{
			Name:        "terminal_list",
			Description: "List this session's background terminals: id, name, pid, command, running or exit code.",
			Summary:     "List this session's background terminals",
			ReadOnly:    true,
			Deferred:    true,
			Call: func(ctx context.Context, _ *tools.Env, _ struct{}) (TerminalList, error) {
				c, err := tm.dial(ctx)
				if err != nil {
					return TerminalList{}, helperErr(err)
				}
				return tm.list(ctx, c)
			},
		}),
		tools.Must(tools.Spec[TerminalIDInput, TerminalList]{
			Name:        "terminal_stop",
			Description: "Stop a background terminal of this session and all its children.",
			Summary:     "Stop a background terminal and its children",
			Deferred:    true,
			Call: func(ctx context.Context, _ *tools.Env, in TerminalIDInput) (TerminalList, error) {
				c, err := tm.dial(ctx)
				if err != nil {
					return TerminalList{}, helperErr(err)
				}
				if err := tm.own(ctx, c, in.ID); err != nil {
					return TerminalList{}, err
				}
				resp, err := c.Stop(ctx, &processesv1.StopRequest{What: &processesv1.StopRequest_Id{Id: in.ID}})
				if err != nil {
					return TerminalList{}, helperErr(err)
				}
				out := TerminalList{Terminals: []TerminalInfo{}}
				for _, p := range resp.GetProcesses() {
					out.Terminals = append(out.Terminals, terminalInfo(p))
				}
				return out, nil
			},
		}),
	}
}

func (tm *terminals) list(ctx context.Context, c processesv1.ProcessesClient) (TerminalList, error) {
	resp, err := c.List(ctx, &processesv1.ListRequest{Session: tm.session})
	if err != nil {
		return TerminalList{}, helperErr(err)
	}
	out := TerminalList{Terminals: []TerminalInfo{}}
	for _, p := range resp.GetProcesses() {
		if p.GetTerminal() {
			out.Terminals = append(out.Terminals, terminalInfo(p))
		}
	}
	return out, nil
}

// end stops the session's terminals (when s-code mcp's session ends).
func (tm *terminals) end() {
	if !tm.started.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := tm.dial(ctx); err == nil {
		_, _ = c.Stop(ctx, &processesv1.StopRequest{What: &processesv1.StopRequest_Session{Session: tm.session}})
	}
}

// approve asks a person about card; nil means accepted.
func approve(ctx context.Context, env *tools.Env, card *tools.Card) error {
	if env.Approver == nil {
		return &tools.Error{Code: "not_approved", Message: "no person could be asked, so nothing was done"}
	}
	ans, err := env.Approver.Approve(ctx, card)
	if err != nil {
		return err // *tools.ApprovalPending asks; any other error refuses
	}
	if ans != tools.AnswerAccept {
		return &tools.Error{Code: "not_approved", Message: "no person approved it (the client cannot elicit, or the person declined), so nothing was done"}
	}
	return nil
}

func clamp(v, def, maxV int) int {
	if v <= 0 {
		return def
	}
	return min(v, maxV)
}

package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/redact"
	"github.com/s-code-dev/s-code/internal/tools"
	"github.com/s-code-dev/s-code/internal/version"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// HostCallAuditFunc writes a host_tool_call audit record (helperv1.Helper's
// RecordHostToolCall).
type HostCallAuditFunc func(ctx context.Context, r *helperv1.HostToolCall) (*helperv1.CodeModeRecorded, error)

// hostStartTimeout bounds a host MCP server's start and its tools/list, together.
const hostStartTimeout = 60 * time.Second

// hosted are the host MCP servers of one session: the enabled, confirmed MCP stdio server
// definitions, started together on the first tool_search (on demand: a session that never
// searches starts none), stopped with the session.
type hosted struct {
	defs     []*hostdef.Definition
	home     string
	resolver credhandle.Resolver
	getenv   func(string) (string, bool)
	record   HostCallAuditFunc

	once     sync.Once
	mu       sync.Mutex // guards sessions
	sessions []*hostSession
	failures []string // "NAME: why" of servers that did not start
}

// hostSession is one running host MCP server.
type hostSession struct {
	def     *hostdef.Definition
	digest  string
	command string
	cs      *mcp.ClientSession
	cmd     *exec.Cmd
	red     *redact.Redactor
}

// start starts every enabled MCP server definition that a person confirmed as it is now and
// returns their tools. A definition that is not runnable, or whose credentials do not
// resolve, or that does not start or list its tools, is left out and named in failures.
func (h *hosted) start(ctx context.Context) ([]tools.Tool, []string) {
	var out []tools.Tool
	h.once.Do(func() {
		for _, d := range h.defs {
			if d.Kind != hostdef.KindMCPServer || !d.Enabled {
				continue
			}
			hs, err := h.startOne(ctx, d)
			if err != nil {
				h.failures = append(h.failures, fmt.Sprintf("%s: %v", d.Name, err))
				continue
			}
			ts, err := hs.listTools(ctx)
			if err != nil {
				hs.close()
				h.failures = append(h.failures, fmt.Sprintf("%s: tools/list: %v", d.Name, err))
				continue
			}
			h.mu.Lock()
			h.sessions = append(h.sessions, hs)
			h.mu.Unlock()
			for _, t := range ts {
				out = append(out, &hostedTool{server: hs, tool: t, record: h.record})
			}
		}
	})
	return out, h.failures
}

func (h *hosted) startOne(ctx context.Context, d *hostdef.Definition) (*hostSession, error) {
	if err := d.Runnable(h.home); err != nil {
		return nil, err
	}
	card := d.Card(h.home)
	var env, secrets []string
	for _, k := range hostdef.BaseEnv {
		if h.getenv == nil {
			break
		}
		if v, ok := h.getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	names := make([]string, 0, len(d.Env))
	for k := range d.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		hd, err := credhandle.Parse(d.Env[k])
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		v, err := h.resolver.Resolve(hd)
		if err != nil {
			return nil, err
		}
		env = append(env, k+"="+v)
		secrets = append(secrets, v)
	}
	red, err := redact.New(secrets)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(d.Command, d.Args...)
	cmd.Path, cmd.Dir, cmd.Env = d.Command, card.Dir, env
	cmd.Stderr = io.Discard // never stored, never shown
	// Its own process group, so that stopping it stops its children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cctx, cancel := context.WithTimeout(ctx, hostStartTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "s-code", Version: version.Version}, nil)
	cs, err := client.Connect(cctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil, fmt.Errorf("start: %w", err)
	}
	return &hostSession{def: d, digest: card.Digest(), command: commandLine(card), cs: cs, cmd: cmd, red: red}, nil
}

// commandLine is the card's command and arguments, each argument quoted as JSON.
func commandLine(c hostdef.Card) string {
	parts := []string{c.Command}
	for _, a := range c.Args {
		b, _ := json.Marshal(a)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, " ")
}

func (hs *hostSession) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	cctx, cancel := context.WithTimeout(ctx, hostStartTimeout)
	defer cancel()
	var out []*mcp.Tool
	for t, err := range hs.cs.Tools(cctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// close ends the server's session and kills what is left of its process group.
func (hs *hostSession) close() {
	_ = hs.cs.Close()
	if hs.cmd.Process != nil {
		_ = syscall.Kill(-hs.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// close stops every host MCP server of the session.
func (h *hosted) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hs := range h.sessions {
		hs.close()
	}
	h.sessions = nil
}

// hostedTool is one tool of a host MCP server, offered as SERVER.TOOL: always deferred (found
// through tool_search, never in the default list), never read-only (the server's own
// annotations are its claims), each call approved by a person and recorded before it is
// forwarded.
type hostedTool struct {
	server *hostSession
	tool   *mcp.Tool
	record HostCallAuditFunc
}

func (t *hostedTool) Name() string { return t.server.def.Name + "." + t.tool.Name }

func (t *hostedTool) Description() string {
	return fmt.Sprintf("[host MCP server %s, outside the sandbox; each call asks a person] %s", t.server.def.Name, t.tool.Description)
}

func (t *hostedTool) Summary() string {
	line, _, _ := strings.Cut(strings.TrimSpace(t.tool.Description), "\n")
	return fmt.Sprintf("host MCP server %s: %s", t.server.def.Name, line)
}

func (t *hostedTool) ReadOnly() bool { return false }
func (t *hostedTool) Deferred() bool { return true }

// InputSchema is the server's input schema; one that does not decode, or whose root is
// not an object, is shown as an object of any properties.
func (t *hostedTool) InputSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{}
	b, err := json.Marshal(t.tool.InputSchema)
	if err != nil || json.Unmarshal(b, s) != nil || s.Type != "object" {
		return &jsonschema.Schema{Type: "object"}
	}
	return s
}

func (t *hostedTool) OutputSchema() *jsonschema.Schema { return nil }

// Call asks a person about this one call (the card names the server, the tool, the
// arguments and the server's command line), records the answer in the user helper's audit
// log (a record that cannot be written forwards nothing), forwards an accepted call and
// returns the server's result with the server's credentials redacted.
func (t *hostedTool) Call(ctx context.Context, env *tools.Env, args json.RawMessage) (any, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, &tools.Error{Code: "invalid_arguments", Message: "arguments are not a JSON object: " + err.Error()}
	}
	compact, _ := json.Marshal(obj)
	ws := ""
	if env.Root != nil {
		ws = env.Root.Path()
	}
	card := &tools.Card{
		Kind: "host_tool_call", Title: fmt.Sprintf("Call the tool %s of the host MCP server %s", t.tool.Name, t.server.def.Name),
		Workspace: ws, Mode: env.Mode.String(), Server: t.server.def.Name, Tool: t.tool.Name, Arguments: string(compact),
		HostCommand: t.server.command, Authority: hostdef.AmbientAuthority, Digest: t.server.digest,
	}
	answer := tools.AnswerUnavailable
	if env.Approver != nil {
		a, err := env.Approver.Approve(ctx, card)
		var pending *tools.ApprovalPending
		if errors.As(err, &pending) {
			return nil, err
		}
		if err != nil {
			return nil, &tools.Error{Code: "not_approved", Message: "the approval failed, so nothing was sent: " + err.Error()}
		}
		answer = a
	}
	rec := &helperv1.HostToolCall{Workspace: ws, Server: t.server.def.Name, Tool: t.tool.Name, Command: t.server.command,
		Digest: t.server.digest, Arguments: string(compact), Approved: answer == tools.AnswerAccept}
	if answer != tools.AnswerAccept {
		why := map[tools.Answer]string{
			tools.AnswerUnavailable: "no person could be asked (the client cannot elicit), so the call was refused",
			tools.AnswerDecline:     "the person declined the call",
			tools.AnswerCancel:      "the person dismissed the request",
		}[answer]
		rec.Reason = why
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = t.record(actx, rec) // best effort: nothing is sent either way
		return nil, &tools.Error{Code: "not_approved", Message: fmt.Sprintf("%s: %s; nothing was sent to %s", t.Name(), why, t.server.def.Name)}
	}
	rec.Reason = "approved by a person through elicitation"
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := t.record(actx, rec); err != nil {
		return nil, &tools.Error{Code: "audit_failed", Message: "the user helper did not write the host_tool_call audit record, so nothing was sent: " + err.Error()}
	}
	res, err := t.server.cs.CallTool(ctx, &mcp.CallToolParams{Name: t.tool.Name, Arguments: json.RawMessage(compact)})
	if err != nil {
		return nil, &tools.Error{Code: "host_server_failed", Message: fmt.Sprintf("%s: %s", t.server.def.Name, t.server.red.String(err.Error()))}
	}
	return redactResult(t.server.red, res), nil
}

// redactResult returns res with the server's registered secrets (and secrets by shape)
// removed from its text, its structured content and its resources' text.
func redactResult(red *redact.Redactor, res *mcp.CallToolResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError}
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, &mcp.TextContent{Text: red.String(v.Text)})
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				r := *v.Resource
				r.Text = red.String(r.Text)
				out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: &r})
				continue
			}
			out.Content = append(out.Content, c)
		default:
			out.Content = append(out.Content, c)
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			clean := red.String(string(b))
			if json.Valid([]byte(clean)) {
				out.StructuredContent = json.RawMessage(clean)
			}
		}
	}
	return out
}

// hostEnv gives hostdef.BaseEnv's values from the process environment.
func hostEnv(k string) (string, bool) { return os.LookupEnv(k) }

package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/codemode"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/tools"
	"github.com/s-code-dev/s-code/internal/version"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Options configure a Server.
type Options struct {
	// Workspace is the workspace root directory (required).
	Workspace string
	// Mode is the permission mode; the zero value (unset) refuses every command and edit.
	Mode permission.Mode
	// EditFormat selects the apply_patch schema and instructions the model is shown.
	EditFormat tools.EditFormat
	// Socket is the user helper's socket; empty means helperclient.DefaultSocket.
	Socket string
	// Executor runs exec_command; nil means the user helper at Socket, dialled once per
	// session on first use.
	Executor tools.Executor
	// Editor runs apply_patch and undo_turn; nil means the user helper at Socket (its
	// ApplyPatch and Undo RPCs, on the connection exec_command uses), which decides every
	// edit in the mode, keeps the turn records and writes the audit record of each batch.
	Editor tools.Editor
	// CodeMode sends code_mode in the default tool list (the configuration's code_mode key);
	// false leaves it deferred, found through tool_search.
	CodeMode bool
	// CodeModeBudgets bound each code_mode program; zero fields take codemode.DefaultBudgets.
	CodeModeBudgets codemode.Budgets
	// CodeModeAudit writes code_mode's audit records; nil means the user helper at Socket
	// (its RecordCodeMode RPC, on the connection exec_command uses).
	CodeModeAudit AuditFunc

	// HostProcesses are the user's host process definitions (hostdef.Store's Defs). The
	// enabled MCP servers among them that a person confirmed as they are now start on the
	// session's first tool_search, and their tools are found through it as SERVER.TOOL
	// (deferred, never in the default list); each call asks a person and is recorded.
	HostProcesses []*hostdef.Definition
	// Home is the user's home (the directory of a definition without one, part of its
	// card); empty means os.UserHomeDir.
	Home string
	// Resolver resolves the host MCP servers' credential handles.
	Resolver credhandle.Resolver
	// HostCallAudit writes host_tool_call records; nil means the user helper at Socket (its
	// RecordHostToolCall RPC).
	HostCallAudit HostCallAuditFunc
	// PreCall runs the user's pre-call hooks about each tool call before it runs (the user
	// helper's Processes.PreCall); nil runs none. A deny or an ask stops the call with the
	// hook's reason, and an error refuses the call (fail closed).
	PreCall PreCallFunc
	// Processes reaches the user helper's Processes service for the terminal_* tools; nil
	// means the helper at Socket.
	Processes ProcessesFunc
	// Hooks, with PreCall nil, runs the pre-call hooks through the user helper at Socket
	// (its Processes.PreCall, which reads the user's definitions itself).
	Hooks bool
}

// PreCallFunc runs the pre-call hooks about a call of tool with the JSON arguments input and
// returns their decision ("allow", "ask" or "deny") and reason.
type PreCallFunc func(ctx context.Context, tool string, input json.RawMessage) (decision, reason string, err error)

// Server is one MCP server over one workspace. Over stdio it serves one session.
type Server struct {
	mcp      *mcp.Server
	env      tools.Env // template; each call gets a copy with the session's approver
	registry *tools.Registry
	search   *index

	mu        sync.Mutex      // guards loaded and search
	loaded    map[string]bool // deferred tools loaded into the session by tool_search
	root      *wsfs.Root
	exec      *helperExec
	approvals *approvals
	deferred  []tools.Tool // the built-in deferred tools
	hosted    *hosted
	preCall   PreCallFunc
	terms     *terminals
}

// New opens the workspace and returns a server with the core tools and tool_search.
// Close it when done.
func New(opts Options) (*Server, error) {
	if opts.Workspace == "" {
		return nil, errors.New("mcpserver: no workspace")
	}
	format, err := tools.ParseEditFormat(string(opts.EditFormat))
	if err != nil {
		return nil, err
	}
	root, err := wsfs.Open(opts.Workspace)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	if opts.Home != "" {
		home = opts.Home
	}
	s := &Server{root: root, loaded: map[string]bool{}, preCall: opts.PreCall}
	if s.approvals, err = newApprovals(); err != nil {
		root.Close()
		return nil, err
	}
	s.env = tools.Env{Root: root, Session: &tools.Session{}, Mode: opts.Mode, Home: home}
	s.exec = &helperExec{socket: opts.Socket}
	s.env.Exec = opts.Executor
	if s.env.Exec == nil {
		s.env.Exec = s.exec
	}
	s.env.Edit = opts.Editor
	if s.env.Edit == nil {
		s.env.Edit = s.exec
	}
	record := opts.CodeModeAudit
	if record == nil {
		record = s.exec.recordCodeMode
	}
	s.terms = &terminals{session: newSessionID(), dial: opts.Processes}
	if s.terms.dial == nil {
		s.terms.dial = s.exec.processes
	}
	all := append(tools.Core(format), tools.Deferred()...)
	all = append(all, s.terms.tools(home)...)
	if s.registry, err = tools.NewRegistry(all...); err != nil {
		root.Close()
		return nil, err
	}
	search := s.toolSearchTool()
	given, direct := codeModeTools(s.registry, search)
	runner, err := codemode.New(given, direct, opts.CodeModeBudgets)
	if err != nil {
		root.Close()
		return nil, err
	}
	if err := s.registry.Register(codeModeTool(runner, !opts.CodeMode, record)); err != nil {
		root.Close()
		return nil, err
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "s-code", Title: "S-Code", Version: version.Version}, &mcp.ServerOptions{
		Instructions: Instructions(format, opts.Mode),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	var deferred []tools.Tool
	for _, t := range s.registry.List() {
		if t.Deferred() {
			deferred = append(deferred, t)
			continue
		}
		s.addTool(t)
	}
	s.deferred = deferred
	s.search = newIndex(deferred)
	s.addToolSearch(search)
	hostRecord := opts.HostCallAudit
	if hostRecord == nil {
		hostRecord = s.exec.recordHostToolCall
	}
	if s.preCall == nil && opts.Hooks {
		s.preCall = s.exec.preCall
	}
	s.hosted = &hosted{defs: opts.HostProcesses, home: home, resolver: opts.Resolver, getenv: hostEnv, record: hostRecord}
	return s, nil
}

// Close releases the workspace handle and the helper connection.
func (s *Server) Close() error {
	s.terms.end()
	s.hosted.close()
	s.exec.close()
	return s.root.Close()
}

// Run serves one session over t (for `s-code mcp`, &mcp.StdioTransport{}) until the client
// disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// MCP returns the underlying SDK server (tests connect in-memory transports to it).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Registry returns the server's tool registry.
func (s *Server) Registry() *tools.Registry { return s.registry }

// mcpTool returns the MCP definition of t.
func mcpTool(t tools.Tool) *mcp.Tool {
	ro := t.ReadOnly()
	destructive := !ro
	openWorld := t.Name() == "exec_command"
	mt := &mcp.Tool{
		Name:        t.Name(),
		Description: t.Description(),
		InputSchema: objectRoot(t.InputSchema()),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro, DestructiveHint: &destructive, OpenWorldHint: &openWorld},
	}
	if out := t.OutputSchema(); out != nil { // a host MCP server's tool declares none
		mt.OutputSchema = objectRoot(out)
	}
	return mt
}

// objectRoot returns s with a root type of exactly "object" (MCP requires it of input and
// output schemas; a pointer type's schema allows null too).
func objectRoot(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil || s.Type == "object" {
		return s
	}
	c := *s
	c.Type, c.Types = "object", nil
	return &c
}

func (s *Server) addTool(t tools.Tool) {
	s.mcp.AddTool(mcpTool(t), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		env := s.env
		ap := &elicitApprover{session: req.Session, approvals: s.approvals, responses: req.Params.InputResponses, state: req.Params.RequestState}
		env.Approver = ap
		ctx = context.WithValue(ctx, notifierKey{}, req)
		if err := s.runPreCall(ctx, t.Name(), req.Params.Arguments); err != nil {
			return toolResult(nil, err)
		}
		out, err := t.Call(ctx, &env, req.Params.Arguments)
		var pending *tools.ApprovalPending
		if errors.As(err, &pending) {
			return ap.inputRequest(pending.Card)
		}
		if r, ok := out.(*mcp.CallToolResult); ok && err == nil {
			return r, nil // a host MCP server's result, already redacted
		}
		return toolResult(out, err)
	})
}

// runPreCall asks the pre-call hooks about a call of tool; nil lets it run. A deny is a
// tools.Error with the hook's reason. An ask refuses the call too (fail closed): putting a
// hook's ask to a person on top of the tool's own approval is not built yet. A hook that could
// not be asked refuses the call.
func (s *Server) runPreCall(ctx context.Context, tool string, args json.RawMessage) error {
	if s.preCall == nil {
		return nil
	}
	decision, reason, err := s.preCall(ctx, tool, args)
	if err != nil {
		return &tools.Error{Code: "denied_by_hook", Message: fmt.Sprintf("the pre-call hooks could not be run, so %s was refused: %v", tool, err)}
	}
	switch decision {
	case "allow":
		return nil
	case "ask":
		return &tools.Error{Code: "denied_by_hook", Message: reason + "; s-code mcp does not yet put a hook's ask to a person, so the call was refused"}
	}
	if reason == "" {
		reason = fmt.Sprintf("the pre-call hooks answered %q", decision)
	}
	return &tools.Error{Code: "denied_by_hook", Message: reason}
}

// toolResult renders a tool's answer: the structured result and its JSON as text, or a tool
// error (isError) whose text the model reads and whose structured form names code and rule.
func toolResult(out any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			te = &tools.Error{Code: "error", Message: err.Error()}
		}
		b, _ := json.Marshal(te)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// ToolSearchInput is tool_search's arguments.
type ToolSearchInput struct {
	Query      string `json:"query" jsonschema:"words describing the capability wanted, or select:NAME[,NAME] to load tools by exact name"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"tools returned at most (default 5)"`
}

// ToolSearchHit is one tool found.
type ToolSearchHit struct {
	Name    string  `json:"name"`
	Summary string  `json:"summary"`
	Score   float64 `json:"score"`
	Loaded  bool    `json:"loaded"` // its schema is now in the session's tool list
}

// ToolSearchResult is tool_search's answer.
type ToolSearchResult struct {
	Tools []ToolSearchHit `json:"tools"`
	Note  string          `json:"note"`
	// HostFailures are the host MCP servers that did not start ("NAME: why"); their tools
	// are not searchable in this session.
	HostFailures []string `json:"host_failures,omitempty"`
}

// toolSearchTool returns tool_search (read-only: it only adds tools to the session's list).
func (s *Server) toolSearchTool() tools.Tool {
	return tools.Must(tools.Spec[ToolSearchInput, ToolSearchResult]{
		Name: "tool_search",
		Description: "Find and load specialized tools that are not in the default list (for example the sandbox profile card, audit log queries and code_mode, which batches read-only tool calls in one JavaScript program). " +
			"Search by words (ranked over names, descriptions and parameter names) or load exact tools with select:NAME[,NAME]. " +
			"The tools found are added to this session's tool list (notifications/tools/list_changed); call them by name afterwards.",
		ReadOnly: true,
		Call: func(ctx context.Context, _ *tools.Env, in ToolSearchInput) (ToolSearchResult, error) {
			return s.toolSearch(ctx, in)
		},
	})
}

func (s *Server) addToolSearch(t tools.Tool) {
	s.mcp.AddTool(mcpTool(t), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, err := t.Call(ctx, &s.env, req.Params.Arguments)
		return toolResult(out, err)
	})
}

func (s *Server) toolSearch(ctx context.Context, in ToolSearchInput) (ToolSearchResult, error) {
	maxN := in.MaxResults
	if maxN <= 0 {
		maxN = 5
	}
	maxN = min(maxN, 20)
	// The host MCP servers start on the first search; their tools join the index.
	if ts, failed := s.hosted.start(ctx); len(ts) > 0 || len(failed) > 0 {
		s.mu.Lock()
		if len(ts) > 0 {
			s.search = newIndex(append(append([]tools.Tool{}, s.deferred...), ts...))
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	ix := s.search
	s.mu.Unlock()
	hits, err := ix.find(in.Query, maxN)
	if err != nil {
		return ToolSearchResult{}, err
	}
	res := ToolSearchResult{Tools: []ToolSearchHit{}}
	var names []string
	for _, h := range hits {
		s.load(h.tool)
		res.Tools = append(res.Tools, ToolSearchHit{Name: h.tool.Name(), Summary: h.tool.Summary(), Score: h.score, Loaded: true})
		names = append(names, h.tool.Name())
	}
	sort.Strings(names)
	if len(names) == 0 {
		res.Note = "no deferred tool matches; the core tools are already in the tool list"
	} else {
		res.Note = fmt.Sprintf("loaded %v into the tool list; call them by name", names)
	}
	if f := s.hosted.failures; len(f) > 0 {
		res.HostFailures = f
	}
	return res, nil
}

// load adds the deferred tool t to the session's tools once; the SDK then sends
// notifications/tools/list_changed.
func (s *Server) load(t tools.Tool) {
	s.mu.Lock()
	done := s.loaded[t.Name()]
	s.loaded[t.Name()] = true
	s.mu.Unlock()
	if !done {
		s.addTool(t)
	}
}

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/codemode"
	"github.com/s-code-dev/s-code/internal/tools"
)

// CodeModeInput is code_mode's arguments.
type CodeModeInput struct {
	Code string `json:"code" jsonschema:"JavaScript: the body of a function that calls tools.NAME({...}) synchronously and returns JSON-able data"`
}

// codeModeDescription is what the model is shown about code_mode.
const codeModeDescription = "Code Mode: run one JavaScript program that batches read-only tool calls and returns a result, " +
	"instead of one model round trip per read. The program is the body of a function; `return` its result (JSON). " +
	"It is given exactly the read-only tools as synchronous functions of a `tools` object, with the same arguments and results " +
	"as the tools themselves: tools.read_file({path}), tools.list_dir({}), tools.glob({pattern}), tools.grep({pattern}), " +
	"tools.git_status({}), tools.git_diff({}), tools.git_log({}), tools.git_show({}), tools.git_blame({path}), tools.tool_search({query}). " +
	"A failed child call throws an Error with code and message. There is no require, import, file system, network, process, " +
	"environment or timer; edits, commands and approvals stay with the direct tools (apply_patch, exec_command, undo_turn, update_plan). " +
	"Budgets: 30 s, 200 child calls, 16 MiB of child results, 1 MiB of result, 256 MiB of memory. " +
	"The answer is the returned value and the call log (seq, tool, arguments, ok, bytes, duration_ms of each child call); " +
	"each child call is also sent as a progress notification as it happens."

// codeModeExcluded are read-only tools Code Mode is not given: update_plan sets the plan the
// person sees for the turn (a statement to the person, not a read), and code_mode does not
// nest.
var codeModeExcluded = map[string]bool{"update_plan": true, "code_mode": true}

// codeModeTools returns the tools Code Mode programs are given (the read-only tools of the
// default list, less codeModeExcluded, and tool_search) and the names that stay direct tools
// (every other tool of the registry).
func codeModeTools(reg *tools.Registry, search tools.Tool) (given []tools.Tool, direct []string) {
	for _, t := range reg.List() {
		if t.ReadOnly() && !t.Deferred() && !codeModeExcluded[t.Name()] {
			given = append(given, t)
		} else if t.Name() != "code_mode" {
			direct = append(direct, t.Name())
		}
	}
	return append(given, search), direct
}

// notifierKey carries the MCP request of a tool call to code_mode's Call.
type notifierKey struct{}

// codeModeTool returns the code_mode tool over runner; deferred unless the configuration sends
// it by default.
func codeModeTool(runner *codemode.Runner, deferred bool) tools.Tool {
	return tools.Must(tools.Spec[CodeModeInput, *codemode.Result]{
		Name:        "code_mode",
		Description: codeModeDescription,
		Summary:     "Code Mode: batch read-only tool calls (read files, grep, git) in one JavaScript program",
		ReadOnly:    true,
		Deferred:    deferred,
		Call: func(ctx context.Context, env *tools.Env, in CodeModeInput) (*codemode.Result, error) {
			if strings.TrimSpace(in.Code) == "" {
				return nil, &tools.Error{Code: "invalid_arguments", Message: "code is empty: send the body of a function that returns a result"}
			}
			req, _ := ctx.Value(notifierKey{}).(*mcp.CallToolRequest)
			res, err := runner.Run(ctx, env, in.Code, progress(ctx, req))
			if err != nil {
				var te *tools.Error
				if !errors.As(err, &te) {
					te = &tools.Error{Code: codemode.CodeProgram, Message: err.Error()}
				}
				c := *te
				c.Detail = res // the call log so far: what ran before the program stopped
				return nil, &c
			}
			return res, nil
		},
	})
}

// progress returns the observer that sends each child call as notifications/progress on the
// request's progress token (progress = the call's sequence number), or nil when the client
// gave no token. A failed send does not stop the program.
func progress(ctx context.Context, req *mcp.CallToolRequest) func(codemode.Call) {
	if req == nil || req.Session == nil || req.Params == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return func(c codemode.Call) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(c.Seq),
			Message:       callLine(c),
		})
	}
}

// callLine is one child call as a person reads it: "#3 read_file {"path":"a.go"}: ok, 120 bytes, 0.4 ms".
func callLine(c codemode.Call) string {
	status := "ok"
	if !c.OK {
		status = "failed (" + c.Error + ")"
	}
	return fmt.Sprintf("#%d %s %s: %s, %d bytes, %.1f ms", c.Seq, c.Tool, c.Arguments, status, c.Bytes, c.DurationMS)
}

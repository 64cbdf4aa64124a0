package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/s-code-dev/s-code/internal/codemode"
	"github.com/s-code-dev/s-code/internal/tools"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// CodeModeInput is code_mode's arguments.
type CodeModeInput struct {
	Code string `json:"code" jsonschema:"JavaScript: the body of a function that calls tools.NAME({...}) synchronously and returns JSON-able data"`
}

// codeModeDescription is what the model is shown about code_mode (a format of the budgets).
const codeModeDescription = "Code Mode: run one JavaScript program that batches read-only tool calls and returns a result, " +
	"instead of one model round trip per read. The program is the body of a function; `return` its result (JSON). " +
	"It is given exactly the read-only tools as synchronous functions of a `tools` object, with the same arguments and results " +
	"as the tools themselves: tools.read_file({path}), tools.list_dir({}), tools.glob({pattern}), tools.grep({pattern}), " +
	"tools.git_status({}), tools.git_diff({}), tools.git_log({}), tools.git_show({}), tools.git_blame({path}), tools.tool_search({query}). " +
	"A failed child call throws an Error with code and message. There is no require, import, file system, network, process, " +
	"environment or timer; edits, commands and approvals stay with the direct tools (apply_patch, exec_command, undo_turn, update_plan). " +
	"Budgets: %s, %d child calls, %d MiB of child results, %d KiB of result, %d MiB of memory. " +
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

// CodeModeOutput is code_mode's answer: the program's result and where its audit record went.
type CodeModeOutput struct {
	codemode.Result
	Audit CodeModeAudit `json:"audit"`
}

// CodeModeAudit says whether the user helper wrote the program's code_mode audit record.
type CodeModeAudit struct {
	RequestID string `json:"request_id,omitempty"` // the record's request id (audit_query)
	Error     string `json:"error,omitempty"`      // why no record was written
}

// AuditFunc writes a code_mode audit record (helperv1.Helper's RecordCodeMode).
type AuditFunc func(ctx context.Context, r *helperv1.CodeModeRecord) (*helperv1.CodeModeRecorded, error)

// auditRecord returns the record of a program: its text, call log, sizes and error.
func auditRecord(workspace, code string, res *codemode.Result, runErr error) *helperv1.CodeModeRecord {
	r := &helperv1.CodeModeRecord{Workspace: workspace, Program: code, ChildBytes: res.ChildBytes, ResultBytes: int64(len(res.Value)),
		Duration: durationpb.New(time.Duration(res.DurationMS * float64(time.Millisecond)))}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	for _, c := range res.Calls {
		r.Calls = append(r.Calls, &helperv1.ChildCall{Seq: uint32(c.Seq), Tool: c.Tool, Arguments: string(c.Arguments), Ok: c.OK, Error: c.Error,
			Bytes: int64(c.Bytes), Duration: durationpb.New(time.Duration(c.DurationMS * float64(time.Millisecond)))})
	}
	return r
}

// notifierKey carries the MCP request of a tool call to code_mode's Call.
type notifierKey struct{}

// codeModeTool returns the code_mode tool over runner; deferred unless the configuration sends
// it by default.
//
// After each program, record sends its code_mode audit record to the user helper; a record
// that cannot be written is said in the answer's audit.error (the reads were read-only and are
// done; the result is not withheld) and, for a stopped program, in the error's detail.
func codeModeTool(runner *codemode.Runner, deferred bool, record AuditFunc) tools.Tool {
	b := runner.Budgets()
	return tools.Must(tools.Spec[CodeModeInput, *CodeModeOutput]{
		Name:        "code_mode",
		Description: fmt.Sprintf(codeModeDescription, b.Time, b.Calls, b.ChildBytes>>20, b.ResultBytes>>10, b.Memory>>20),
		Summary:     "Code Mode: batch read-only tool calls (read files, grep, git) in one JavaScript program",
		ReadOnly:    true,
		Deferred:    deferred,
		Call: func(ctx context.Context, env *tools.Env, in CodeModeInput) (*CodeModeOutput, error) {
			if strings.TrimSpace(in.Code) == "" {
				return nil, &tools.Error{Code: "invalid_arguments", Message: "code is empty: send the body of a function that returns a result"}
			}
			req, _ := ctx.Value(notifierKey{}).(*mcp.CallToolRequest)
			res, err := runner.Run(ctx, env, in.Code, progress(ctx, req))
			out := &CodeModeOutput{Result: *res}
			ws := ""
			if env.Root != nil {
				ws = env.Root.Path()
			}
			// The record is written even when the client cancelled the call.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if rec, aerr := record(actx, auditRecord(ws, in.Code, res, err)); aerr != nil {
				out.Audit.Error = "the user helper did not write the code_mode audit record: " + aerr.Error()
			} else {
				out.Audit.RequestID = rec.GetRequestId()
			}
			if err != nil {
				var te *tools.Error
				if !errors.As(err, &te) {
					te = &tools.Error{Code: codemode.CodeProgram, Message: err.Error()}
				}
				c := *te
				c.Detail = out // the call log so far: what ran before the program stopped
				return nil, &c
			}
			return out, nil
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

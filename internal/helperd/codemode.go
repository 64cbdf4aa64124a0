package helperd

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/peerauth"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// What a code_mode record keeps at most. A program over maxRecordedProgram bytes is kept to
// that length and the record's reason says how long it was; more calls than
// maxRecordedCalls are refused (a program has a call budget far below it).
const (
	maxRecordedProgram = 64 << 10
	maxRecordedCalls   = 1000
)

// RecordCodeMode writes one code_mode audit record, durably, with the caller's peer
// credentials: the program's text (redacted by the log) and its call log. The child calls ran
// in the client's process (read-only tools), so the record holds what the client reported.
func (s *Server) RecordCodeMode(ctx context.Context, req *helperv1.CodeModeRecord) (*helperv1.CodeModeRecorded, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	if s.cfg.Role != safety.RoleUser {
		return nil, status.Error(codes.FailedPrecondition, "code_mode records are kept by the user helper, not the root helper")
	}
	if n := len(req.GetCalls()); n > maxRecordedCalls {
		return nil, status.Errorf(codes.InvalidArgument, "a code_mode record holds at most %d child calls, not %d", maxRecordedCalls, n)
	}
	program, reason := req.GetProgram(), req.GetError()
	if len(program) > maxRecordedProgram {
		cut := maxRecordedProgram
		for cut > 0 && !utf8.RuneStart(program[cut]) {
			cut--
		}
		note := fmt.Sprintf("program of %d bytes, the first %d kept", len(program), cut)
		if reason != "" {
			reason = note + "; " + reason
		} else {
			reason = note
		}
		program = program[:cut]
	}
	rec := &audit.Record{
		Kind: audit.KindCodeMode, RequestID: newRequestID(), Helper: s.cfg.Role.String(), Peer: auditPeer(c),
		Command: program, Workspace: req.GetWorkspace(), Reason: reason,
		Duration: req.GetDuration().AsDuration().Seconds(), ChildBytes: req.GetChildBytes(), ResultBytes: req.GetResultBytes(),
	}
	for _, cc := range req.GetCalls() {
		rec.ChildCalls = append(rec.ChildCalls, audit.ChildCall{
			Seq: cc.GetSeq(), Tool: cc.GetTool(), Arguments: cc.GetArguments(), OK: cc.GetOk(), Error: cc.GetError(),
			Bytes: cc.GetBytes(), Duration: cc.GetDuration().AsDuration().Seconds(),
		})
	}
	if !s.audit(ctx, rec, true) {
		return nil, status.Error(codes.Unavailable, "the code_mode record was not written to the audit log")
	}
	return &helperv1.CodeModeRecorded{RequestId: rec.RequestID, Seq: rec.Seq}, nil
}

// maxRecordedArguments bounds the arguments a host_tool_call record keeps, in bytes.
const maxRecordedArguments = 64 << 10

// RecordHostToolCall writes one host_tool_call audit record, durably, with the caller's peer
// credentials: the server, the tool, the server's command line and card digest, the call's
// arguments (redacted by the log) and whether a person approved it. The call runs in the
// client's process (s-code mcp hosts the server), so the record holds what the client
// reported; the client writes it before it forwards the call and forwards nothing when this
// fails.
func (s *Server) RecordHostToolCall(ctx context.Context, req *helperv1.HostToolCall) (*helperv1.CodeModeRecorded, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	if s.cfg.Role != safety.RoleUser {
		return nil, status.Error(codes.FailedPrecondition, "host_tool_call records are kept by the user helper, not the root helper")
	}
	if req.GetServer() == "" || req.GetTool() == "" {
		return nil, status.Error(codes.InvalidArgument, "a host_tool_call record names its server and tool")
	}
	args, reason := req.GetArguments(), req.GetReason()
	if len(args) > maxRecordedArguments {
		reason = fmt.Sprintf("arguments of %d bytes, not kept; %s", len(args), reason)
		args = ""
	}
	reason = "server command: " + req.GetCommand() + "; " + reason
	rec := &audit.Record{
		Kind: audit.KindHostToolCall, RequestID: newRequestID(), Helper: s.cfg.Role.String(), Peer: auditPeer(c),
		Command: req.GetServer() + "." + req.GetTool(), Workspace: req.GetWorkspace(), Reason: reason,
		Approved: req.GetApproved(), PlanDigest: req.GetDigest(),
		ChildCalls: []audit.ChildCall{{Seq: 1, Tool: req.GetServer() + "." + req.GetTool(), Arguments: args, OK: req.GetApproved()}},
	}
	if !s.audit(ctx, rec, true) {
		return nil, status.Error(codes.Unavailable, "the host_tool_call record was not written to the audit log")
	}
	return &helperv1.CodeModeRecorded{RequestId: rec.RequestID, Seq: rec.Seq}, nil
}

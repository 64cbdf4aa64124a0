package hostproc

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/peerauth"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// Service serves the Processes gRPC service on a Supervisor. The helper's interceptors
// authenticate and authorize every call before it gets here.
type Service struct {
	processesv1.UnimplementedProcessesServer
	sup *Supervisor
	// load reads the user's definitions at each Start, so an edit is seen at once (and,
	// if it changed the card, refused until confirmed).
	load func() (*hostdef.Store, error)
}

var _ processesv1.ProcessesServer = (*Service)(nil)

// NewService returns the Processes service of sup; load reads the user's definitions.
func NewService(sup *Supervisor, load func() (*hostdef.Store, error)) *Service {
	return &Service{sup: sup, load: load}
}

func peerOf(ctx context.Context) *audit.Peer {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil
	}
	return &audit.Peer{UID: c.UID, GID: c.GID, PID: c.PID, Exe: c.Exe}
}

// grpcError turns the supervisor's errors into gRPC status codes (only here, at the edge).
func grpcError(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, hostdef.ErrNotConfirmed):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, hostdef.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrNoAudit):
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

var kinds = map[hostdef.Kind]processesv1.Kind{hostdef.KindMCPServer: processesv1.Kind_KIND_MCP_SERVER, hostdef.KindHook: processesv1.Kind_KIND_HOOK, hostdef.KindTerminal: processesv1.Kind_KIND_TERMINAL}

func toProto(in Info) *processesv1.Process {
	return &processesv1.Process{Id: in.ID, Name: in.Name, Kind: kinds[in.Kind], Session: in.Session, Pid: int32(in.PID), Terminal: in.Terminal,
		Detached: in.Detached, Containment: in.Containment, Digest: in.Digest, Command: in.Command, Started: timestamppb.New(in.Started),
		Running: in.Running, ExitCode: int32(in.ExitCode), Signal: in.Signal, OutputBytes: in.OutputBytes}
}

// Start starts a stored definition by name, or a terminal given in full whose card has the
// digest the person confirmed.
func (s *Service) Start(ctx context.Context, req *processesv1.StartRequest) (*processesv1.StartResponse, error) {
	var def *hostdef.Definition
	opts := StartOptions{Session: req.GetSession(), Detached: req.GetDetached(), Rows: uint16(req.GetRows()), Cols: uint16(req.GetCols()), Peer: peerOf(ctx)}
	switch w := req.GetWhat().(type) {
	case *processesv1.StartRequest_Name:
		st, err := s.load()
		if err != nil {
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		def = st.Defs[w.Name]
		if def == nil {
			return nil, status.Errorf(codes.NotFound, "no host process %q in %s", w.Name, st.Path)
		}
		if !def.Enabled {
			return nil, status.Errorf(codes.FailedPrecondition, "host process %s is disabled", w.Name)
		}
	case *processesv1.StartRequest_Terminal:
		t := w.Terminal
		def = &hostdef.Definition{Name: t.GetName(), Kind: hostdef.KindTerminal, Command: t.GetCommand(), Args: t.GetArgs(), Dir: t.GetDir(), Env: t.GetEnv(), Confirmed: t.GetConfirmedDigest()}
	default:
		return nil, status.Error(codes.InvalidArgument, "start: give a definition's name or a terminal")
	}
	opts.Terminal = def.Kind == hostdef.KindTerminal
	in, err := s.sup.Start(def, opts)
	if err != nil {
		return nil, grpcError(err)
	}
	return &processesv1.StartResponse{Process: toProto(in)}, nil
}

// List returns the processes of a session, or of all.
func (s *Service) List(_ context.Context, req *processesv1.ListRequest) (*processesv1.ListResponse, error) {
	resp := &processesv1.ListResponse{}
	for _, in := range s.sup.List(req.GetSession()) {
		resp.Processes = append(resp.Processes, toProto(in))
	}
	return resp, nil
}

// Read returns new redacted output.
func (s *Service) Read(_ context.Context, req *processesv1.ReadRequest) (*processesv1.ReadResponse, error) {
	r, err := s.sup.Read(req.GetId(), int(req.GetMaxBytes()))
	if err != nil {
		return nil, grpcError(err)
	}
	p, _ := s.sup.get(req.GetId())
	return &processesv1.ReadResponse{Data: r.Data, Dropped: r.Dropped, More: r.More, Process: toProto(s.sup.info(p))}, nil
}

// Write sends bytes to a process's standard input.
func (s *Service) Write(_ context.Context, req *processesv1.WriteRequest) (*processesv1.WriteResponse, error) {
	if err := s.sup.Write(req.GetId(), req.GetData()); err != nil {
		return nil, grpcError(err)
	}
	return &processesv1.WriteResponse{}, nil
}

// Stop stops one process or a session's.
func (s *Service) Stop(ctx context.Context, req *processesv1.StopRequest) (*processesv1.StopResponse, error) {
	resp := &processesv1.StopResponse{}
	switch w := req.GetWhat().(type) {
	case *processesv1.StopRequest_Id:
		in, err := s.sup.Stop(ctx, w.Id, "stopped by request", peerOf(ctx))
		if err != nil {
			return nil, grpcError(err)
		}
		resp.Processes = append(resp.Processes, toProto(in))
	case *processesv1.StopRequest_Session:
		before := s.sup.List(w.Session)
		s.sup.EndSession(ctx, w.Session)
		for _, in := range before {
			if p, err := s.sup.get(in.ID); err == nil {
				in = s.sup.info(p)
			} else {
				in.Running = false
			}
			resp.Processes = append(resp.Processes, toProto(in))
		}
	default:
		return nil, status.Error(codes.InvalidArgument, "stop: give a process id or a session")
	}
	return resp, nil
}

// PreCall runs the enabled pre-call hooks of the user's definitions (read at each call, so
// an edit is seen at once) about one tool call. Definitions that do not load deny.
func (s *Service) PreCall(ctx context.Context, req *processesv1.PreCallRequest) (*processesv1.PreCallResponse, error) {
	store, err := s.load()
	if err != nil {
		return &processesv1.PreCallResponse{Decision: string(Deny), Reason: "the host process definitions did not load: " + err.Error()}, nil
	}
	defs := make([]*hostdef.Definition, 0, len(store.Defs))
	for _, n := range store.Names() {
		defs = append(defs, store.Defs[n])
	}
	in := HookInput{Session: req.GetSession(), Cwd: req.GetCwd(), Tool: req.GetTool()}
	if req.GetInput() != "" {
		if !json.Valid([]byte(req.GetInput())) {
			return nil, status.Error(codes.InvalidArgument, "input is not JSON")
		}
		in.Input = json.RawMessage(req.GetInput())
	}
	res := s.sup.PreCall(ctx, defs, in)
	return &processesv1.PreCallResponse{Decision: string(res.Decision), Reason: res.Reason, Hook: res.Hook}, nil
}

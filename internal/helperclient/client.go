package helperclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/local"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/s-code-dev/s-code/internal/peercred"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// Environment variables that override the default sockets.
const (
	UserSocketEnv = "S_CODE_USER_SOCKET"
	RootSocketEnv = "S_CODE_ROOT_SOCKET"
	// RootSocket is the root helper's socket (DESIGN.md).
	RootSocket = "/run/s-code/root.sock"
)

// Role names the helper a client talks to.
type Role int

const (
	// User is the user helper: it runs commands as the caller.
	User Role = iota
	// Root is the root helper: it runs commands as root.
	Root
)

// String returns "user" or "root".
func (r Role) String() string {
	if r == Root {
		return "root"
	}
	return "user"
}

// DefaultSocket returns the socket of the helper role: $S_CODE_USER_SOCKET, else
// $XDG_RUNTIME_DIR/s-code/user.sock for the user helper; $S_CODE_ROOT_SOCKET, else
// /run/s-code/root.sock for the root helper. It fails when the user helper's socket cannot
// be placed (no absolute XDG_RUNTIME_DIR).
func DefaultSocket(r Role) (string, error) {
	if r == Root {
		if s := os.Getenv(RootSocketEnv); s != "" {
			return s, nil
		}
		return RootSocket, nil
	}
	if s := os.Getenv(UserSocketEnv); s != "" {
		return s, nil
	}
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(rt) {
		return "", &NoHelperError{Role: User, Err: errors.New("XDG_RUNTIME_DIR is not set; pass --socket PATH or set " + UserSocketEnv)}
	}
	return filepath.Join(rt, "s-code", "user.sock"), nil
}

// NoHelperError says no helper answers at a socket, and how to start one.
type NoHelperError struct {
	Role   Role
	Socket string
	Err    error
}

// Error says which helper is missing where, and how to start it.
func (e *NoHelperError) Error() string {
	hint := "start one with `s-code-userhelper --listen " + e.Socket + "` or `systemctl --user start s-code-userhelper.socket`"
	if e.Role == Root {
		hint = "start it with `sudo systemctl start s-code-roothelper.socket` (or `sudo s-code-roothelper --listen " + e.Socket + " --policy FILE`; its policy, by default /etc/s-code/roothelper.toml from `make install`, must name you)"
	}
	if e.Socket == "" {
		return fmt.Sprintf("no %s helper: %v", e.Role, e.Err)
	}
	if errors.Is(e.Err, fs.ErrPermission) {
		// Something may well listen there: the caller may not open it (connect(2) EACCES).
		hint = "the socket or its directory belongs to another user; use your own helper's socket (--socket PATH or $" + UserSocketEnv + ")"
		if e.Role == Root {
			hint = "the root helper's socket is open to the group s-code: an admin must add you to that group and to [allow] in /etc/s-code/roothelper.toml, then log in again"
		}
		return fmt.Sprintf("cannot open the %s helper's socket %s (%v); %s", e.Role, e.Socket, e.Err, hint)
	}
	return fmt.Sprintf("no %s helper is listening on %s (%v); %s", e.Role, e.Socket, e.Err, hint)
}

// Unwrap returns the dial error (for example syscall.ENOENT or syscall.ECONNREFUSED).
func (e *NoHelperError) Unwrap() error { return e.Err }

// ImpostorError says the process serving a helper socket is not the user it must be (the
// caller's uid for the user helper, root for the root helper).
type ImpostorError struct {
	Socket  string
	UID     uint32
	WantUID uint32
}

// Error names the socket and both uids.
func (e *ImpostorError) Error() string {
	return fmt.Sprintf("the helper on %s runs as uid %d, not uid %d: refusing to talk to it", e.Socket, e.UID, e.WantUID)
}

// Client is a connection to one helper.
type Client struct {
	conn *grpc.ClientConn
	api  helperv1.HelperClient
	// first is the connection Dial checked, until gRPC takes it; Close closes it when no
	// call ever did (else the helper would wait for its preface until this process ends).
	first *atomic.Pointer[net.Conn]
}

// ErrNoCredentials is returned by Dial where the kernel cannot report who serves the
// socket: the client then refuses to talk, as the helpers refuse such callers.
var ErrNoCredentials = errors.New("cannot read the helper's peer credentials")

// Dial connects to the helper role at socket and checks, from the kernel's peer
// credentials, that it runs as the expected uid (the caller's for User, 0 for Root). It
// fails with *NoHelperError when nothing listens there and *ImpostorError for a wrong uid.
func Dial(ctx context.Context, r Role, socket string) (*Client, error) {
	want := uint32(os.Geteuid())
	if r == Root {
		want = 0
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", socket)
		if err != nil {
			return nil, &NoHelperError{Role: r, Socket: socket, Err: unwrapSyscall(err)}
		}
		pc, err := peercred.Get(c)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("helper on %s: %w: %w", socket, ErrNoCredentials, err)
		}
		if pc.UID != want {
			c.Close()
			return nil, &ImpostorError{Socket: socket, UID: pc.UID, WantUID: want}
		}
		return c, nil
	}
	first, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	firstConn := new(atomic.Pointer[net.Conn])
	firstConn.Store(&first)
	conn, err := grpc.NewClient("passthrough:///s-code-"+r.String()+"-helper",
		grpc.WithTransportCredentials(local.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			if c := firstConn.Swap(nil); c != nil {
				return *c, nil
			}
			return dial(ctx)
		}))
	if err != nil {
		first.Close()
		return nil, fmt.Errorf("grpc client: %w", err)
	}
	// Something accepted the connection as the right user; make sure it speaks gRPC before
	// any call, so that a socket whose server never answers (a unit whose service fails to
	// start, a hung helper) is not later taken for a helper lost in the middle of a command.
	conn.Connect()
	for {
		st := conn.GetState()
		if st == connectivity.Ready {
			break
		}
		if st == connectivity.TransientFailure || st == connectivity.Shutdown {
			conn.Close()
			return nil, &NoAnswerError{Role: r, Socket: socket, Err: errors.New("it closed the connection without a gRPC handshake")}
		}
		if !conn.WaitForStateChange(ctx, st) {
			conn.Close()
			return nil, &NoAnswerError{Role: r, Socket: socket, Err: ctx.Err()}
		}
	}
	return &Client{conn: conn, api: helperv1.NewHelperClient(conn), first: firstConn}, nil
}

// NoAnswerError says something accepted connections on a helper's socket, as the right
// user, but never answered as a helper: nothing was sent to it.
type NoAnswerError struct {
	Role   Role
	Socket string
	Err    error // why: the connection closed, or ctx ended (context.DeadlineExceeded)
}

// Error names the socket and the reason.
func (e *NoAnswerError) Error() string {
	log := "journalctl --user -u s-code-userhelper"
	if e.Role == Root {
		log = "journalctl -u s-code-roothelper"
	}
	return fmt.Sprintf("the %s helper on %s never answered (%v): nothing was sent to it; see its log (%s, or the terminal that started it)", e.Role, e.Socket, e.Err, log)
}

// Unwrap returns the reason.
func (e *NoAnswerError) Unwrap() error { return e.Err }

func unwrapSyscall(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// Close closes the connection (and the checked one, when no call used it).
func (c *Client) Close() error {
	if f := c.first.Swap(nil); f != nil {
		(*f).Close()
	}
	return c.conn.Close()
}

// API returns the generated client, for Check and Status.
func (c *Client) API() helperv1.HelperClient { return c.api }

// Health returns a client of the helper's standard gRPC health service.
func (c *Client) Health() healthpb.HealthClient { return healthpb.NewHealthClient(c.conn) }

// Streams are where Exec writes output and reads input.
type Streams struct {
	// Stdin is forwarded to the command; nil sends an immediate end of input.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output chunks, in order per stream.
	Stdout, Stderr io.Writer
	// Signals delivers signals to forward to the command's process group; may be nil.
	Signals <-chan helperv1.Signal
	// Pending, when set, is called when the request waits for a team approver (the root
	// helper's [approvals]): its id for s-code approvals, and until when it waits.
	Pending func(*helperv1.Pending)
}

// ListApprovals returns the requests pending a team approver (only id's, when set).
func (c *Client) ListApprovals(ctx context.Context, id string) ([]*helperv1.PendingApproval, error) {
	r, err := c.api.ListApprovals(ctx, &helperv1.ListApprovalsRequest{Id: id})
	if err != nil {
		return nil, err
	}
	return r.GetPending(), nil
}

// DecideApproval approves or denies the pending request id; a refused decision is its
// Denied (not an approver, the requester, no such request).
func (c *Client) DecideApproval(ctx context.Context, id string, approve bool) (*helperv1.Denied, error) {
	r, err := c.api.DecideApproval(ctx, &helperv1.DecideApprovalRequest{Id: id, Approve: approve})
	if err != nil {
		return nil, err
	}
	return r.GetDenied(), nil
}

// Result is how an Exec ended: Denied, or Exited.
type Result struct {
	// RequestID is the helper's id for the request, set once the helper accepted it (its
	// first answer); empty when the helper never answered on the stream.
	RequestID string
	// Started reports whether the helper said the command started.
	Started bool
	Denied  *helperv1.Denied
	Exited  *helperv1.Exited
}

// Status returns the shell-style exit status: the command's exit code, 128+N for signal N,
// 126 for a denial.
func (r *Result) Status() int {
	switch {
	case r.Denied != nil:
		return 126
	case r.Exited == nil:
		return 1
	}
	if s := r.Exited.GetSignal(); s != nil {
		return 128 + int(s.GetNumber())
	}
	return int(r.Exited.GetExitCode())
}

// ErrNoExit is returned when a helper ends the stream without a denial or an exit status.
var ErrNoExit = errors.New("the helper ended the command's stream without an exit status")

// Exec runs start through the helper, forwarding input and signals and writing output,
// and returns the result once the command has ended or was denied. Cancelling ctx makes the
// helper kill the command's process group.
func (c *Client) Exec(ctx context.Context, start *helperv1.ExecStart, s Streams) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.api.Exec(ctx)
	if err != nil {
		return nil, err
	}
	var sendMu sync.Mutex // guards st.Send
	send := func(m *helperv1.ExecRequest) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return st.Send(m)
	}
	if err := send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Start{Start: start}}); err != nil {
		if errors.Is(err, io.EOF) {
			// The helper ended the stream first (say, it refused the caller): the reason is
			// its status, which only Recv returns (grpc.ClientStream.SendMsg).
			if _, rerr := st.Recv(); rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, rerr
			}
		}
		return nil, err
	}
	// Input flows only once the command runs; a denied command reads none of it.
	started := make(chan struct{})
	var startOnce sync.Once
	markStarted := func() { startOnce.Do(func() { close(started) }) }
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		forwardStdin(ctx, s.Stdin, send)
	}()
	if s.Signals != nil {
		go func() {
			for {
				select {
				case sig := <-s.Signals:
					send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Signal{Signal: sig}})
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	res := &Result{}
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if res.Denied == nil && res.Exited == nil {
				return res, ErrNoExit
			}
			return res, nil
		}
		if err != nil {
			return res, err
		}
		switch x := ev.GetEvent().(type) {
		case *helperv1.ExecEvent_Accepted:
			res.RequestID = x.Accepted.GetRequestId()
		case *helperv1.ExecEvent_Denied:
			res.Denied = x.Denied
		case *helperv1.ExecEvent_Started:
			res.Started = true
			markStarted()
		case *helperv1.ExecEvent_Output:
			w := s.Stdout
			if x.Output.GetStream() == helperv1.Stream_STREAM_STDERR {
				w = s.Stderr
			}
			if w != nil {
				w.Write(x.Output.GetData())
			}
		case *helperv1.ExecEvent_Exited:
			res.Exited = x.Exited
		case *helperv1.ExecEvent_Pending:
			if s.Pending != nil {
				s.Pending(x.Pending)
			}
		}
	}
}

// forwardStdin copies r to the stream in chunks, then sends stdin_close.
func forwardStdin(ctx context.Context, r io.Reader, send func(*helperv1.ExecRequest) error) {
	if r != nil {
		buf := make([]byte, 32<<10)
		for ctx.Err() == nil {
			n, err := r.Read(buf)
			if n > 0 {
				chunk := append([]byte(nil), buf[:n]...)
				if send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Stdin{Stdin: chunk}}) != nil {
					return
				}
			}
			if err != nil {
				break
			}
		}
	}
	send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_StdinClose{StdinClose: &helperv1.StdinClose{}}})
}

package peerauth

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/s-code-dev/s-code/internal/peercred"
)

// AuthType is the name AuthInfo reports to gRPC.
const AuthType = "peercred"

// AuthInfo carries the peer credentials the kernel reported for a connection. Handlers read
// it with FromContext.
type AuthInfo struct {
	credentials.CommonAuthInfo
	Creds peercred.Creds
}

// AuthType returns "peercred".
func (AuthInfo) AuthType() string { return AuthType }

// ErrNoPeerCreds is returned by FromContext when a call carries no peer credentials (the
// server was not built with these transport credentials).
var ErrNoPeerCreds = errors.New("peerauth: the call carries no peer credentials")

// FromContext returns the peer credentials of the connection a call arrived on, or
// ErrNoPeerCreds. It never fabricates an identity.
func FromContext(ctx context.Context) (peercred.Creds, error) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.AuthInfo == nil {
		return peercred.Creds{}, ErrNoPeerCreds
	}
	ai, ok := p.AuthInfo.(AuthInfo)
	if !ok {
		return peercred.Creds{}, fmt.Errorf("%w (auth type %q)", ErrNoPeerCreds, p.AuthInfo.AuthType())
	}
	return ai.Creds, nil
}

// HandshakeError is returned by ServerHandshake when the peer credentials cannot be read.
type HandshakeError struct {
	Err error
}

// Error returns "peer credentials: " and the cause.
func (e *HandshakeError) Error() string { return "peer credentials: " + e.Err.Error() }

// Unwrap returns the peercred error.
func (e *HandshakeError) Unwrap() error { return e.Err }

// serverCreds implements credentials.TransportCredentials for the server side only.
type serverCreds struct {
	onFailure func(error)
}

// NewServerCredentials returns transport credentials for a gRPC server listening on a
// Unix-domain socket. Each handshake reads the peer credentials of the connection with
// peercred.Get; when that fails the handshake fails (gRPC closes the connection) and
// onFailure, when not nil, is called with the *HandshakeError so the caller can audit the
// refusal. There is no fallback identity. The client side of these credentials refuses to
// handshake: clients use grpc's local credentials.
func NewServerCredentials(onFailure func(error)) credentials.TransportCredentials {
	return &serverCreds{onFailure: onFailure}
}

// ErrClientSide is returned by ClientHandshake: these credentials are for servers.
var ErrClientSide = errors.New("peerauth: server-only transport credentials used by a client")

// ClientHandshake refuses: these credentials are for servers (ErrClientSide).
func (c *serverCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, ErrClientSide
}

// ServerHandshake reads the peer credentials of conn; see NewServerCredentials.
func (c *serverCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	pc, err := peercred.Get(conn)
	if err != nil {
		herr := &HandshakeError{Err: err}
		if c.onFailure != nil {
			c.onFailure(herr)
		}
		return nil, nil, herr
	}
	// A Unix-domain socket between two processes of one kernel is private and whole.
	return conn, AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}, Creds: *pc}, nil
}

// Info names the security protocol "peercred".
func (c *serverCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: AuthType}
}

// Clone returns a copy with the same failure hook.
func (c *serverCreds) Clone() credentials.TransportCredentials {
	return &serverCreds{onFailure: c.onFailure}
}

// OverrideServerName does nothing: a Unix socket has no server name.
func (c *serverCreds) OverrideServerName(string) error { return nil }

package peerauth_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
)

// serve starts a health server with the peer credentials on l and returns what each call's
// FromContext said and what handshake failures were reported.
func serve(t *testing.T, l net.Listener) (<-chan peercred.Creds, <-chan error) {
	t.Helper()
	seen := make(chan peercred.Creds, 4)
	failures := make(chan error, 4)
	srv := grpc.NewServer(
		grpc.Creds(peerauth.NewServerCredentials(func(err error) { failures <- err })),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			c, err := peerauth.FromContext(ctx)
			if err != nil {
				return nil, err
			}
			seen <- c
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return seen, failures
}

func TestHandshakeCarriesPeerCreds(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("peer credentials are implemented on Linux and macOS")
	}
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := serve(t, l)
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(local.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	c := <-seen
	if c.UID != uint32(os.Geteuid()) || c.PID != int32(os.Getpid()) {
		t.Errorf("creds = %+v, want uid %d pid %d", c, os.Geteuid(), os.Getpid())
	}
}

// TestHandshakeFailsClosed serves over TCP, where no peer credentials exist: the handshake
// must fail, report the failure, and no call may reach a handler.
func TestHandshakeFailsClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen, failures := serve(t, l)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Fatal("a call without peer credentials succeeded")
	}
	select {
	case err := <-failures:
		var he *peerauth.HandshakeError
		if !errors.As(err, &he) || !errors.Is(err, peercred.ErrNotUnixSocket) {
			t.Errorf("failure = %v, want a HandshakeError wrapping ErrNotUnixSocket", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handshake failure not reported")
	}
	select {
	case c := <-seen:
		t.Fatalf("a handler ran with creds %+v", c)
	default:
	}
}

func TestFromContextWithoutPeer(t *testing.T) {
	if _, err := peerauth.FromContext(context.Background()); !errors.Is(err, peerauth.ErrNoPeerCreds) {
		t.Fatalf("FromContext(background) = %v, want ErrNoPeerCreds", err)
	}
}

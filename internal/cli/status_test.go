package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/helperclient"
)

// TestAskHelperAbsentInSandbox checks what status says of a helper whose socket does not
// exist: outside a sandbox, how to start one; inside one (where the sandbox hides the
// sockets of helpers that do run), that this is expected, and no advice to start another.
func TestAskHelperAbsentInSandbox(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "user.sock")
	ctx := context.Background()

	out := askHelper(ctx, helperclient.User, sock, time.Second, false)
	if out.State != stateAbsent || !strings.Contains(out.Error, "start one with") {
		t.Fatalf("outside a sandbox: state %q, error %q; want absent with how to start one", out.State, out.Error)
	}

	in := askHelper(ctx, helperclient.User, sock, time.Second, true)
	if in.State != stateAbsent {
		t.Fatalf("inside a sandbox: state %q, want %q", in.State, stateAbsent)
	}
	if strings.Contains(in.Error, "start") || !strings.Contains(in.Error, sock) || !strings.Contains(in.Error, "cannot be reached from inside the sandbox") {
		t.Fatalf("inside a sandbox: error %q; want the socket, cannot be reached, and no advice to start a helper", in.Error)
	}
	var buf bytes.Buffer
	rep := &statusReport{Client: "test", InSandbox: true, Helpers: []helperStatus{in}, Hints: []string{}}
	if err := writeStatusReport(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "user helper: absent on "+sock+"\n  "+sock+" cannot be reached") {
		t.Fatalf("report:\n%s", buf.String())
	}
}

// TestAskHelperInSandboxStillReports checks that a helper that does answer is reported as
// answering or refused whatever inSandbox says: only an absent socket is reworded.
func TestAskHelperInSandboxStillReports(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "deaf.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h := askHelper(context.Background(), helperclient.User, sock, 200*time.Millisecond, true)
	if h.State == stateAbsent {
		t.Fatalf("a socket that listens is reported absent: %q", h.Error)
	}
}

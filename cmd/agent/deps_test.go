package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbidden lists the packages the s-code client must never link: the helper server and
// everything only a helper needs (transport credentials that trust the kernel's peer
// credentials, the command runner, the sandbox launcher, the daemons' start-up). A client
// compromised by the agent it serves must not carry the code that runs commands.
var forbidden = []string{
	"github.com/s-code-dev/s-code/internal/helperd",
	"github.com/s-code-dev/s-code/internal/peerauth",
	"github.com/s-code-dev/s-code/internal/execrun",
	"github.com/s-code-dev/s-code/internal/daemon",
	"github.com/s-code-dev/s-code/internal/rootpolicy",
	"github.com/s-code-dev/s-code/internal/listener",
	"github.com/s-code-dev/s-code/internal/sdnotify",
	// The export of audit records to OpenTelemetry is the helpers' job, and the collector
	// built for the tests (test/otelcol) is its own module, linked by nothing.
	"github.com/s-code-dev/s-code/internal/auditexport",
	"go.opentelemetry.io/otel/sdk/log",
	"go.opentelemetry.io/collector",
	// The sandbox launcher and the libraries that apply Landlock and seccomp. The client may
	// link internal/sandbox itself: it computes and shows sandbox profiles and execs the
	// launcher binary, s-code-sandbox, without applying anything.
	"github.com/s-code-dev/s-code/internal/sandbox/launch",
	"github.com/landlock-lsm/go-landlock",
	"github.com/elastic/go-seccomp-bpf",
}

// forbiddenExact lists packages forbidden themselves but not their subpackages: the gRPC
// health server (its client, grpc_health_v1, is fine).
var forbiddenExact = []string{
	"google.golang.org/grpc/health",
}

// TestDeps lists the packages linked into the s-code binary (go list -deps, for Linux and
// macOS) and fails if any is, or is under, a forbidden package.
func TestDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not found: %v", err)
	}
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command(goTool, "list", "-deps", ".")
			cmd.Env = append(cmd.Environ(), "GOOS="+goos)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps: %v", err)
			}
			pkgs := strings.Fields(string(out))
			if len(pkgs) < 10 {
				t.Fatalf("go list -deps listed only %v", pkgs)
			}
			for _, p := range pkgs {
				if slices.Contains(forbiddenExact, p) {
					t.Errorf("s-code links %s (forbidden)", p)
				}
				for _, f := range forbidden {
					if p == f || strings.HasPrefix(p, f+"/") {
						t.Errorf("s-code links %s (forbidden: %s)", p, f)
					}
				}
			}
		})
	}
}

// TestBuildsWithoutCgo: `make build` builds s-code and s-code-sandbox with CGO_ENABLED=0
// (STATIC_CMDS: they start once per command, and static binaries start sooner). It fails when
// a package either binary links needs cgo: with cgo off, such a package has no Go files left.
func TestBuildsWithoutCgo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not found: %v", err)
	}
	for _, pkg := range []string{".", "../sandbox"} {
		cmd := exec.Command(goTool, "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", pkg)
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s does not build without cgo: %v\n%s", pkg, err, out)
		}
	}
}

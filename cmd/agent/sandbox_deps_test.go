package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestNoSandboxLauncher keeps the sandbox launcher out of the s-code client (DESIGN.md): the
// client may compute and show sandbox profiles, but the code that applies Landlock and
// seccomp and execs lives only in s-code-sandbox.
func TestNoSandboxLauncher(t *testing.T) {
	gobin := testenv.RequireTool(t, "go")
	for _, goos := range []string{"linux", "darwin"} {
		cmd := exec.Command(gobin, "list", "-deps", "github.com/s-code-dev/s-code/cmd/agent")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (GOOS=%s): %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list (GOOS=%s) listed only %d packages", goos, len(deps))
		}
		for _, d := range deps {
			for _, banned := range []string{
				"github.com/s-code-dev/s-code/internal/sandbox/launch",
				"github.com/landlock-lsm/go-landlock",
				"github.com/elastic/go-seccomp-bpf",
			} {
				if d == banned || strings.HasPrefix(d, banned+"/") {
					t.Errorf("s-code (GOOS=%s) links %s", goos, d)
				}
			}
		}
	}
}

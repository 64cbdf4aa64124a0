// Package testenv lets tests say what they need from the machine (root, a tool, a path) and
// skip with the reason when it is missing, or fail when S_CODE_REQUIRE_ROOT=1 (as in CI).
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Required reports whether missing requirements must fail the test instead of skipping it:
// true when the environment variable S_CODE_REQUIRE_ROOT is "1" (CI sets it).
func Required() bool { return os.Getenv("S_CODE_REQUIRE_ROOT") == "1" }

// Skip skips t with reason, or fails it when Required reports true.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("required by S_CODE_REQUIRE_ROOT=1 but unavailable: %s", reason)
	}
	t.Skip(reason)
}

// RequireRoot skips (or fails, see Required) unless the test runs as uid 0 on Linux.
func RequireRoot(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		Skip(t, "needs root on Linux (CI runs as root)")
	}
}

// RequireTool returns the absolute path of the named program on PATH, or skips (or fails,
// see Required) with the reason when it is not installed.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, name+" is not installed: "+err.Error())
	}
	return p
}

// SharedDir returns the team's shared folder (DESIGN.md, cases/, corpus/), found as
// ../shared beside the repository root, or the directory S_CODE_SHARED names. It skips the
// test (never fails it, even under Required: the folder is not part of a checkout) when
// neither exists.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("S_CODE_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("shared folder: getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(filepath.Dir(dir), "shared")
			if _, err := os.Stat(shared); err != nil {
				t.Skipf("shared folder %s is absent: %v", shared, err)
			}
			return shared
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared folder: no go.mod above the test's directory")
		}
		dir = parent
	}
}

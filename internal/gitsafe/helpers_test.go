package gitsafe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// plainEnv is the environment for building fixtures with the real git: no user or system
// configuration, fixed identities and dates.
func plainEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Ada Author",
		"GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05+01:00",
		"GIT_COMMITTER_NAME=Cy Committer",
		"GIT_COMMITTER_EMAIL=cy@example.com",
		"GIT_COMMITTER_DATE=2026-01-02T03:04:05+01:00",
		"LC_ALL=C",
		// No detached gc or maintenance still writing when t.TempDir is removed.
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false",
	}
}

// gitIn runs the real git with plainEnv in dir and returns its standard output; it fails
// the test when git fails.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gitTry runs the real git with plainEnv in dir and returns its combined output.
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = plainEnv(filepath.Join(dir, ".no-home"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo returns a workspace holding a repository with two commits on main: the first
// adds a.txt, b.txt and docs/readme.md, the second changes a.txt.
func newRepo(t testing.TB) string {
	t.Helper()
	testenv.RequireTool(t, "git")
	ws := t.TempDir()
	gitIn(t, ws, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(ws, "a.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(ws, "b.txt"), "bee\n")
	writeFile(t, filepath.Join(ws, "docs/readme.md"), "# docs\n")
	gitIn(t, ws, "add", ".")
	gitIn(t, ws, "commit", "-q", "-m", "first commit", "-m", "The body\nof the first.")
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n2\nthree\nfour\n")
	gitIn(t, ws, "commit", "-q", "-am", "change a")
	return ws
}

// marker is a program that, if git ever ran it, leaves a file behind. It behaves enough
// like a filter, textconv driver, pager or hook (copies a file argument or its input) for
// git to proceed.
type marker struct {
	script string // absolute path of the program
	file   string // the file it creates
}

func newMarker(t testing.TB) marker {
	t.Helper()
	dir := t.TempDir()
	m := marker{script: filepath.Join(dir, "evil.sh"), file: filepath.Join(dir, "MARKER")}
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + m.file + "'\n" +
		"if [ $# -ge 1 ] && [ -f \"$1\" ]; then cat \"$1\"; else cat; fi\nexit 0\n"
	if err := os.WriteFile(m.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

// ran reports whether the marker program ran, and removes its trace.
func (m marker) ran(t testing.TB) bool {
	t.Helper()
	data, err := os.ReadFile(m.file)
	if err != nil {
		return false
	}
	t.Logf("marker ran: %s", data)
	os.Remove(m.file)
	return true
}

func openRepo(t testing.TB, ws string) *Repo {
	t.Helper()
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", ws, err)
	}
	return r
}

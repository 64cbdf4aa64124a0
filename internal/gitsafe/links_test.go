//go:build unix

package gitsafe

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestGitdirLinks: a symbolic link among the gitdir's parts that leads outside the workspace
// is refused like an object alternate; one that stays inside is accepted.
func TestGitdirLinks(t *testing.T) {
	cases := []struct {
		name    string
		part    string // under .git, moved away and replaced by a link
		outside bool
	}{
		{"objects outside", "objects", true},
		{"refs outside", "refs", true},
		{"config outside", "config", true},
		{"HEAD outside", "HEAD", true},
		{"objects/pack outside", "objects/pack", true},
		{"info/exclude outside", "info/exclude", true},
		{"objects inside the workspace", "objects", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := newRepo(t)
			dest := filepath.Join(t.TempDir(), "moved")
			if !tc.outside {
				dest = filepath.Join(ws, ".moved")
			}
			p := filepath.Join(ws, ".git", tc.part)
			if _, err := os.Stat(p); err != nil {
				writeFile(t, p, "")
			}
			if err := os.Rename(p, dest); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(dest, p); err != nil {
				t.Fatal(err)
			}
			_, err := openRepo(t, ws).Log(ctx, LogOptions{})
			var le *LayoutError
			refused := errors.As(err, &le) && le.Rule == RuleOutside
			if refused != tc.outside {
				t.Fatalf("Log = %v; want refused (git.outside-workspace) = %v", err, tc.outside)
			}
		})
	}
}

// TestConfigNamedFiles: ignore, attributes and mailmap files the repository's config names
// outside the workspace are not read: as FIFOs they would stall git until the timeout.
func TestConfigNamedFiles(t *testing.T) {
	for _, key := range []string{"core.excludesFile", "core.attributesFile", "mailmap.file"} {
		t.Run(key, func(t *testing.T) {
			ws := newRepo(t)
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			gitIn(t, ws, "config", key, fifo)
			writeFile(t, filepath.Join(ws, "new.txt"), "x\n")
			r, err := Open(ws, Options{Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Status(ctx, StatusOptions{}); err != nil {
				t.Errorf("Status: %v", err)
			}
			if _, err := r.Diff(ctx, DiffOptions{}); err != nil {
				t.Errorf("Diff: %v", err)
			}
			if _, err := r.Log(ctx, LogOptions{}); err != nil {
				t.Errorf("Log: %v", err)
			}
		})
	}
}

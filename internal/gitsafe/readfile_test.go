//go:build unix

package gitsafe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckHostileRepoFiles plants files Check reads before git runs as FIFOs, links to
// devices and oversized files: Check must refuse at once, without blocking on the FIFO or
// reading an endless device.
func TestCheckHostileRepoFiles(t *testing.T) {
	fifo := func(t *testing.T, p string) {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target string) func(*testing.T, string) {
		return func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := func(t *testing.T, p string) {
		writeFile(t, p, "[core]\n"+strings.Repeat("#"+strings.Repeat("x", 1023)+"\n", 5<<10))
	}
	cases := []struct {
		name  string
		file  string // relative to .git
		plant func(*testing.T, string)
		rule  string
		want  error
	}{
		{"config FIFO", "config", fifo, RuleConfigSyntax, errNotRegular},
		{"config link to /dev/zero", "config", link("/dev/zero"), RuleOutside, nil},
		{"include of /dev/zero", "config", func(t *testing.T, p string) {
			writeFile(t, p, "[include]\n\tpath = /dev/zero\n")
		}, RuleConfigExec, nil},
		{"config directory", "config", func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, RuleConfigSyntax, errNotRegular},
		{"config over the limit", "config", big, RuleConfigSyntax, errTooLarge},
		{"commondir FIFO", "commondir", fifo, RuleNotRepository, errNotRegular},
		{"alternates FIFO", "objects/info/alternates", fifo, RuleOutside, errNotRegular},
		{"worktree config FIFO", "config.worktree", func(t *testing.T, p string) {
			writeFile(t, filepath.Join(filepath.Dir(p), "config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n")
			fifo(t, p)
		}, RuleConfigSyntax, errNotRegular},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := newRepo(t)
			tc.plant(t, filepath.Join(ws, ".git", tc.file))
			r := openRepo(t, ws)
			done := make(chan error, 1)
			go func() {
				_, err := r.Status(ctx, StatusOptions{})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("Status blocked for 10s on %s", tc.file)
			}
			var le *LayoutError
			var ce *ConfigError
			switch {
			case errors.As(err, &ce):
				if tc.rule != RuleConfigExec || ce.Findings[0].Key != "include.path" {
					t.Fatalf("Status = %v, want a %s refusal", err, tc.rule)
				}
			case !errors.As(err, &le) || le.Rule != tc.rule || tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("Status = %v, want a %s refusal wrapping %v", err, tc.rule, tc.want)
			}
		})
	}
}

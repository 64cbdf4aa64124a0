//go:build unix

package gitsafe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRaceConfigSwap: a writer that replaces .git/config after Check (with a filter whose
// clean program git status would run on a modified file) cannot make git run it: git reads
// the bytes Check judged, not the file again.
func TestRaceConfigSwap(t *testing.T) {
	for _, how := range []string{"rewrite", "rename over", "symlink"} {
		t.Run(how, func(t *testing.T) {
			ws := newRepo(t)
			m := newMarker(t)
			writeFile(t, filepath.Join(ws, ".gitattributes"), "*.txt filter=evil\n")
			writeFile(t, filepath.Join(ws, "a.txt"), "modified\n")
			cfg := filepath.Join(ws, ".git", "config")
			orig, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			evil := string(orig) + "[filter \"evil\"]\n\tclean = " + m.script + "\n\tsmudge = " + m.script + "\n"
			r := openRepo(t, ws)
			r.afterCheck = func() {
				switch how {
				case "rewrite":
					writeFile(t, cfg, evil)
				case "rename over":
					writeFile(t, cfg+".new", evil)
					if err := os.Rename(cfg+".new", cfg); err != nil {
						t.Fatal(err)
					}
				case "symlink":
					other := filepath.Join(ws, ".other-config")
					writeFile(t, other, evil)
					os.Remove(cfg)
					if err := os.Symlink(other, cfg); err != nil {
						t.Fatal(err)
					}
				}
			}
			st, err := r.Status(context.Background(), StatusOptions{})
			if m.ran(t) {
				t.Fatalf("the filter written after the check ran (status %v, err %v)", st, err)
			}
			var le *LayoutError
			switch {
			case how == "symlink" && (!errors.As(err, &le) || le.Rule != RuleChanged):
				t.Fatalf("Status after config became a link: %v, want %s", err, RuleChanged)
			case how != "symlink" && err != nil:
				t.Fatalf("Status: %v", err)
			}
			// The next command checks again and refuses the configuration now on disk.
			r.afterCheck = nil
			_, err = r.Status(context.Background(), StatusOptions{})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Findings[0].Rule != RuleConfigExec {
				t.Fatalf("second Status: %v, want a %s refusal", err, RuleConfigExec)
			}
			if m.ran(t) {
				t.Fatal("the filter ran on the second command")
			}
		})
	}
}

// TestRaceCommondirSwap: in a linked worktree, a writer that points commondir (or the .git
// file) at another repository after Check cannot make git read that repository's
// configuration or objects: git gets GIT_DIR and GIT_COMMON_DIR, and the changed layout
// discards the result.
func TestRaceCommondirSwap(t *testing.T) {
	for _, what := range []string{"commondir", ".git file"} {
		t.Run(what, func(t *testing.T) {
			// A linked worktree whose common dir is inside the workspace: .git is a file
			// naming .base/worktrees/wt, whose commondir is ../.. (.base).
			wt := newRepo(t)
			base := filepath.Join(wt, ".base")
			if err := os.Rename(filepath.Join(wt, ".git"), base); err != nil {
				t.Fatal(err)
			}
			wtGitDir := filepath.Join(base, "worktrees", "wt")
			writeFile(t, filepath.Join(wtGitDir, "HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(wtGitDir, "commondir"), "../..\n")
			writeFile(t, filepath.Join(wtGitDir, "gitdir"), filepath.Join(wt, ".git")+"\n")
			if err := os.Rename(filepath.Join(base, "index"), filepath.Join(wtGitDir, "index")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+wtGitDir+"\n")
			if _, err := openRepo(t, wt).Status(context.Background(), StatusOptions{}); err != nil {
				t.Fatalf("Status of the linked worktree: %v", err)
			}
			// An evil repository inside the workspace (so that Check would accept its path)
			// whose configuration runs the marker through a filter.
			m := newMarker(t)
			evil := filepath.Join(wt, ".evil")
			gitIn(t, wt, "init", "-q", "--bare", evil)
			writeFile(t, filepath.Join(evil, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter \"evil\"]\n\tclean = "+m.script+"\n")
			writeFile(t, filepath.Join(wt, ".gitattributes"), "*.txt filter=evil\n")
			writeFile(t, filepath.Join(wt, "a.txt"), "modified\n")

			r := openRepo(t, wt)
			r.afterCheck = func() {
				switch what {
				case "commondir":
					writeFile(t, filepath.Join(wtGitDir, "commondir"), evil+"\n")
				case ".git file":
					// A gitdir of its own whose commondir is the evil repository.
					fake := filepath.Join(wt, ".fakegit")
					writeFile(t, filepath.Join(fake, "HEAD"), "ref: refs/heads/side\n")
					writeFile(t, filepath.Join(fake, "commondir"), evil+"\n")
					writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+fake+"\n")
				}
			}
			_, err := r.Status(context.Background(), StatusOptions{})
			if m.ran(t) {
				t.Fatalf("git read the swapped-in repository's configuration (err %v)", err)
			}
			if what == "commondir" {
				var le *LayoutError
				if !errors.As(err, &le) || le.Rule != RuleChanged {
					t.Fatalf("Status after a commondir swap: %v, want %s", err, RuleChanged)
				}
			} else if err != nil && !strings.Contains(err.Error(), "refused") {
				t.Fatalf("Status: %v", err)
			}
		})
	}
}

// TestRaceObjectsLink: objects replaced by a symbolic link to another repository's objects
// while git runs: the result is discarded (RuleChanged), so nothing read there is returned.
func TestRaceObjectsLink(t *testing.T) {
	ws := newRepo(t)
	other := newRepo(t)
	r := openRepo(t, ws)
	objs := filepath.Join(ws, ".git", "objects")
	r.afterCheck = func() {
		if err := os.Rename(objs, objs+".away"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, ".git", "objects"), objs); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.Log(context.Background(), LogOptions{})
	var le *LayoutError
	if !errors.As(err, &le) || le.Rule != RuleChanged {
		t.Fatalf("Log after an objects swap: %v, want %s", err, RuleChanged)
	}
}

// TestPinnedWorktreeConfig: with extensions.worktreeConfig, config.worktree is pinned too;
// ordinary commands still work in the pinned view.
func TestPinnedWorktreeConfig(t *testing.T) {
	ws := newRepo(t)
	m := newMarker(t)
	gitIn(t, ws, "config", "extensions.worktreeConfig", "true")
	writeFile(t, filepath.Join(ws, ".git", "config.worktree"), "[user]\n\tname = x\n")
	writeFile(t, filepath.Join(ws, ".gitattributes"), "*.txt filter=evil\n")
	writeFile(t, filepath.Join(ws, "a.txt"), "modified\n")
	r := openRepo(t, ws)
	r.afterCheck = func() {
		writeFile(t, filepath.Join(ws, ".git", "config.worktree"), "[filter \"evil\"]\n\tclean = "+m.script+"\n")
	}
	st, err := r.Status(context.Background(), StatusOptions{})
	if m.ran(t) {
		t.Fatal("the config.worktree written after the check was read")
	}
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if len(st.Entries) == 0 {
		t.Fatalf("Status in the pinned view shows no change: %+v", st)
	}
}

// TestRaceConfigFlipping: a writer that keeps renaming a good and an evil .git/config over
// each other while s-code runs status again and again (a real race, no hook): each command
// either runs on the good bytes or is refused, and the evil filter never runs.
func TestRaceConfigFlipping(t *testing.T) {
	ws := newRepo(t)
	m := newMarker(t)
	writeFile(t, filepath.Join(ws, ".gitattributes"), "*.txt filter=evil\n")
	writeFile(t, filepath.Join(ws, "a.txt"), "modified\n")
	cfg := filepath.Join(ws, ".git", "config")
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evil := string(good) + "[filter \"evil\"]\n\tclean = " + m.script + "\n"
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := string(good)
			if i%2 == 1 {
				body = evil
			}
			tmp := cfg + ".flip"
			if os.WriteFile(tmp, []byte(body), 0o644) == nil {
				os.Rename(tmp, cfg)
			}
		}
	}()
	r := openRepo(t, ws)
	ran, refused := 0, 0
	for range 100 {
		_, err := r.Status(context.Background(), StatusOptions{})
		if err != nil {
			refused++
		} else {
			ran++
		}
	}
	close(stop)
	<-done
	t.Logf("%d ran on the checked bytes, %d refused", ran, refused)
	if m.ran(t) {
		t.Fatal("the evil filter ran during the race")
	}
}

package filetools_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/workspace"
)

// TestOpenWorkspaceValidates: the file tools refuse the workspaces the helpers refuse,
// before any handle is opened, and open the Git top level from a subdirectory.
func TestOpenWorkspaceValidates(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(home, "src", "repo")
	sub := filepath.Join(repo, "pkg")
	for _, d := range []string{filepath.Join(repo, ".git", "objects"), filepath.Join(repo, ".git", "refs"), sub, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	v := workspace.Validation{Home: home, UID: os.Geteuid()}
	root, err := filetools.OpenWorkspace(sub, "", v)
	if err != nil {
		t.Fatal(err)
	}
	if root.Path() != repo {
		t.Errorf("opened %s, want the Git top level %s", root.Path(), repo)
	}
	root.Close()
	for dir, rule := range map[string]string{home: workspace.RuleHome, filepath.Join(home, ".ssh"): workspace.RuleConfigTree, filepath.Join(repo, ".git"): workspace.RuleGitDir} {
		_, err := filetools.OpenWorkspace(sub, dir, v)
		var we *workspace.Error
		if !errors.As(err, &we) || we.Rule != rule {
			t.Errorf("OpenWorkspace(%s) = %v, want %s", dir, err, rule)
		}
	}
}

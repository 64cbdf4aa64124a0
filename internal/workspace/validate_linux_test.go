package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/workspace"
)

// TestValidateRefusesBindMountedConfigTree: a configuration tree bind-mounted elsewhere is
// the same directory under another name, and is refused as the tree (and so is a
// directory inside it).
func TestValidateRefusesBindMountedConfigTree(t *testing.T) {
	testenv.RequireRoot(t)
	h := real(t, t.TempDir())
	ssh := filepath.Join(h, ".ssh")
	alias := filepath.Join(real(t, t.TempDir()), "project")
	for _, d := range []string{ssh, alias} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(ssh, alias, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(alias, unix.MNT_DETACH) })
	inner := filepath.Join(alias, "inner")
	if err := os.Mkdir(inner, 0o700); err != nil {
		t.Fatal(err)
	}
	v := workspace.Validation{Home: h, UID: os.Geteuid()}
	checkRule(t, workspace.Validate(alias, v), workspace.RuleConfigTree)
	checkRule(t, workspace.Validate(inner, v), workspace.RuleConfigTree)
}

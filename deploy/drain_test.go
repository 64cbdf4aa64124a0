package deploy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/s-code-dev/s-code/internal/daemon"
)

// TestUserUnitDrainComment: the user unit's comment names the user helper's real default
// drain period (its --help says it), and the stop timeout leaves room for it.
func TestUserUnitDrainComment(t *testing.T) {
	var help bytes.Buffer
	daemon.RunUser(context.Background(), []string{"--help"}, &help, &help)
	m := regexp.MustCompile(`(?m)^  -drain duration\n.*\(default (\S+)\)`).FindSubmatch(help.Bytes())
	if m == nil {
		t.Fatalf("no --drain default in the user helper's --help:\n%s", help.String())
	}
	unit, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy/systemd/s-code-userhelper.service"))
	if err != nil {
		t.Fatal(err)
	}
	c := regexp.MustCompile(`drain period \(--drain, (\S+) by default\)`).FindSubmatch(unit)
	if c == nil || string(c[1]) != string(m[1]) {
		t.Fatalf("the unit's comment says the drain default is %q; the helper's is %s", c, m[1])
	}
}

package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
)

// TestControlFileNotCreatable: in Workspace mode a script in the workspace runs without a
// person (exec.workspace-code); the agent and editor control files it creates
// (.vscode/tasks.json runs on folder open, .mcp.json starts servers, .claude/settings.json
// hooks) must not survive the command, as .git's configuration does not: they are moved
// aside and the command's output says so. A control file the command did not touch stays.
func TestControlFileNotCreatable(t *testing.T) {
	h := startUserHelper(t)
	if err := os.MkdirAll(filepath.Join(h.ws, ".idea"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write(t, ".idea/workspace.xml", "<project/>\n")
	h.write(t, "w.sh", "mkdir -p .vscode .claude sub/.vscode && echo '{}' > .vscode/tasks.json && echo '{}' > .mcp.json && echo '{}' > .claude/settings.json && echo x > sub/.vscode/tasks.json\n")
	res, pl, text, err := h.run(t, helperclient.Operation{Command: "bash w.sh", Mode: permission.Workspace}, nil)
	if err != nil || pl.Outcome.Result != permission.Run {
		t.Fatalf("workspace mode: %v %+v %q", err, res, text)
	}
	for _, p := range []string{".vscode/tasks.json", ".mcp.json", ".claude/settings.json", "sub/.vscode/tasks.json"} {
		if _, err := os.Stat(filepath.Join(h.ws, p)); err == nil {
			t.Errorf("%s survived the command", p)
		}
	}
	if !strings.Contains(text, "moved aside") || !strings.Contains(text, ".mcp.json") || !strings.Contains(text, "sub/.vscode") {
		t.Errorf("the output does not say what was moved aside: %q", text)
	}
	if _, err := os.Stat(filepath.Join(h.ws, ".idea", "workspace.xml")); err != nil {
		t.Errorf("an untouched control file was moved: %v", err)
	}
}

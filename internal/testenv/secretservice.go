package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// secretServiceVar marks the copy of a test binary that InSecretService started.
const secretServiceVar = "S_CODE_TEST_SECRET_SERVICE"

// InSecretService reports whether the test runs inside the private session bus and keyring
// that InSecretService started; when it does not, it runs the test named by t again in a
// copy of the test binary under dbus-run-session with gnome-keyring-daemon's Secret Service
// unlocked (HOME and XDG_DATA_HOME in a fresh folder, so the user's keyrings are never
// touched), fails t when that copy fails, and returns false. It skips (or fails, see
// Required) when dbus-run-session or gnome-keyring-daemon is missing (Debian: dbus,
// gnome-keyring). Use it as: if !testenv.InSecretService(t) { return }.
func InSecretService(t *testing.T) bool {
	t.Helper()
	if os.Getenv(secretServiceVar) == "1" {
		return true
	}
	RequireTool(t, "dbus-run-session")
	RequireTool(t, "gnome-keyring-daemon")
	home := t.TempDir()
	// The daemon reads the unlock password on stdin and prints its variables; the
	// Secret Service is then on the private bus. The test binary runs only t's test.
	script := `printf '%s' s-code-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 97
exec "$@"`
	args := []string{"--", "sh", "-c", script, "sh", os.Args[0], "-test.run=^" + strings.Split(t.Name(), "/")[0] + "$", "-test.count=1", "-test.v"}
	cmd := exec.Command("dbus-run-session", args...)
	cmd.Env = append(os.Environ(), secretServiceVar+"=1", "HOME="+home, "XDG_DATA_HOME="+home+"/data", "XDG_RUNTIME_DIR="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test under a private Secret Service failed: %v\n%s", err, out)
	}
	t.Logf("under a private Secret Service (dbus-run-session, gnome-keyring-daemon):\n%s", out)
	return false
}

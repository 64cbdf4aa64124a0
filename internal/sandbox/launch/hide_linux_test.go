package launch

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// TestHiddenPaths checks the hidden paths of a profile: with the mount layout a socket in a
// hidden directory, a hidden socket file and a hidden directory inside the workspace are
// out of reach and the workspace stays writable as a whole; with the per-entry layout the
// hidden directories are denied by Landlock (connect(2) itself is only governed from
// Landlock ABI 9, which the helpers' refusal of sandboxed callers covers).
func TestHiddenPaths(t *testing.T) {
	requireLandlock(t)
	listen := func(path string) {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			f := newFixture(t, false)
			hid := filepath.Join(t.TempDir(), "hid")
			os.Mkdir(hid, 0o755)
			inDir := filepath.Join(hid, "h.sock")
			listen(inDir)
			var b [6]byte
			rand.Read(b[:])
			loose := filepath.Join(os.TempDir(), "s-code-hide-test-"+hex.EncodeToString(b[:])+".sock")
			listen(loose)
			t.Cleanup(func() { os.Remove(loose) })
			state := filepath.Join(f.ws, "state")
			write(t, filepath.Join(state, "audit.jsonl"), "{}\n")
			if got := sandbox.SocketHidePath(loose); got != loose {
				t.Fatalf("SocketHidePath(%s) = %s, want the socket itself", loose, got)
			}
			if got := sandbox.SocketHidePath(inDir); got != hid {
				t.Fatalf("SocketHidePath(%s) = %s, want its directory", inDir, got)
			}
			f.profile.Protection = layout
			f.profile.HiddenPaths = []string{hid, loose, state}
			f.profile.DeniedPaths = append(f.profile.DeniedPaths, hid, loose, state)
			for _, p := range []string{inDir, loose} {
				got := f.probe(t, "connect-unix", p)
				if layout == sandbox.ProtectionMountNamespace && got == "ok" {
					t.Errorf("%s reachable with the mount layout", p)
				}
				// With the per-entry layout connect(2) is Landlock's only from ABI 9.
				if layout == sandbox.ProtectionLandlockEntries && sandbox.ProbeFeatures().LandlockABI < 9 && got != "ok" {
					t.Errorf("%s: %s; the probe itself fails (connect without hiding should work before ABI 9)", p, got)
				}
			}
			for _, script := range []string{"ls " + hid, "cat " + filepath.Join(state, "audit.jsonl"), "echo x > " + filepath.Join(state, "new")} {
				out, err := f.sh(t, script)
				// An empty listing is the empty mount over the directory.
				if listed := strings.TrimSpace(out) != ""; err == nil && (listed || !strings.HasPrefix(script, "ls")) {
					t.Errorf("%s succeeded: %s", script, out)
				}
			}
			if layout == sandbox.ProtectionMountNamespace {
				if out, err := f.sh(t, "echo x > newtop && cat newtop"); err != nil {
					t.Errorf("a hidden directory in the workspace made its top level read-only: %v %s", err, out)
				}
			}
		})
	}
}

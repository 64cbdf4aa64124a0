package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestSeatbeltGolden fixes the Seatbelt profile generated for a given input.
func TestSeatbeltGolden(t *testing.T) {
	h := Host{
		Home:            "/Users/ada",
		Workspace:       "/Users/ada/src/proj",
		CacheRoot:       "/Users/ada/Library/Caches/s-code/tool-dependencies",
		SystemRoots:     []string{"/usr", "/bin", "/System", "/Library", "/private/etc"},
		ToolRoots:       []string{"/opt/homebrew"},
		RuntimeRoots:    []string{"/Users/ada/.nvm/versions"},
		HomeConfigFiles: []string{"/Users/ada/.gitconfig"},
		Devices:         []string{"/dev/null", "/dev/tty"},
		StateDirs:       []string{"/Users/ada/.local/state/s-code", "/Users/ada/.config/s-code"},
	}
	for _, tt := range []struct {
		name    string
		network bool
	}{{"seatbelt-offline", false}, {"seatbelt-network", true}} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProfile(h, tt.network)
			if err != nil {
				t.Fatal(err)
			}
			got := Seatbelt(p)
			golden := filepath.Join("testdata", tt.name+".sb")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Seatbelt profile differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

func TestSeatbeltQuoting(t *testing.T) {
	p := Profile{Workspace: "/w", WritableRoots: []string{"/w/a\"b\\c\n(allow default)"}}
	got := Seatbelt(p)
	if !strings.Contains(got, `(subpath "/w/a\"b\\c\x0a(allow default)")`) {
		t.Fatalf("path not quoted:\n%s", got)
	}
	if strings.Count(got, "(allow default)") != strings.Count(got, `\x0a(allow default)`) {
		t.Fatalf("quoted path leaked a rule:\n%s", got)
	}
}

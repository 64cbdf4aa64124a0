package helperd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/s-code-dev/s-code/internal/execrun"
)

// TestCommandEnvExtraWritable checks that a caller PATH entry inside an extra writable path
// of the request (which the sandboxed command may write) is left out, also when the entry
// only resolves into it.
func TestCommandEnvExtraWritable(t *testing.T) {
	base := t.TempDir()
	ws, extra, other := filepath.Join(base, "ws"), filepath.Join(base, "extra"), filepath.Join(base, "other")
	for _, d := range []string{ws, filepath.Join(extra, "bin"), filepath.Join(other, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(other, "link")
	os.Symlink(filepath.Join(extra, "bin"), link)
	s := &Server{cfg: Config{Path: execrun.SafePath, Home: "/home/u", User: "u"}}
	env, denial := s.commandEnv(nil, filepath.Join(extra, "bin")+":"+link+":"+filepath.Join(other, "bin"), ws, "/bin/bash", []string{extra})
	if denial != nil {
		t.Fatal(denial)
	}
	if want := "PATH=" + execrun.SafePath + ":" + filepath.Join(other, "bin"); !slices.Contains(env, want) {
		t.Errorf("env %q lacks %s", env, want)
	}
}

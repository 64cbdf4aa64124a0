package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// fileMarkerRE finds the paths a patch names ("*** Add File: P" and the like, as Codex
// reads them: leading and trailing spaces trimmed).
var fileMarkerRE = regexp.MustCompile(`(?m)^\s*\*\*\* (Add|Update|Delete) File: (.*?)\s*$`)

// TestCodexScenarios runs the table of testdata/codex-scenarios (see its README): each
// scenario is sent to apply_patch in the patch form, with the revisions a model would have
// read, against a real workspace; the workspace afterwards is compared byte for byte with
// the scenario's expected state (applied) or its input state (refused).
func TestCodexScenarios(t *testing.T) {
	paths, err := filepath.Glob("testdata/codex-scenarios/*.txtar")
	if err != nil || len(paths) < 20 {
		t.Fatalf("scenarios: %v (%d files)", err, len(paths))
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var want, code string
			var says []string // what the refusal must say
			for _, l := range strings.Split(string(ar.Comment), "\n") {
				if v, ok := strings.CutPrefix(l, "want: "); ok {
					want, code, _ = strings.Cut(v, " ")
				}
				if v, ok := strings.CutPrefix(l, "says: "); ok {
					says = append(says, v)
				}
			}
			var patchText string
			input, expected := map[string]string{}, map[string]string{}
			for _, f := range ar.Files {
				name, data := f.Name, string(f.Data)
				if n, ok := strings.CutSuffix(name, ":no-final-newline"); ok {
					name, data = n, strings.TrimSuffix(data, "\n")
				}
				switch {
				case name == "patch":
					patchText = data
				case strings.HasPrefix(name, "input/"):
					input[strings.TrimPrefix(name, "input/")] = data
				case strings.HasPrefix(name, "expected/"):
					expected[strings.TrimPrefix(name, "expected/")] = data
				default:
					t.Fatalf("section %q: want patch, input/ or expected/", f.Name)
				}
			}
			if patchText == "" || (want != "applied" && want != "refused") {
				t.Fatalf("scenario needs a patch section and want: applied|refused (got %q)", want)
			}
			env := newWorkspace(t, input)
			// The revisions a model would send after reading: null for an Add, the file's
			// revision for anything else (a made-up one for a file that is not there).
			revs := map[string]*string{}
			for _, m := range fileMarkerRE.FindAllStringSubmatch(patchText, -1) {
				if m[1] == "Add" {
					revs[m[2]] = nil
					continue
				}
				rev := "0000000000000000"
				if c, ok := input[m[2]]; ok {
					sum := sha256.Sum256([]byte(c))
					rev = hex.EncodeToString(sum[:])[:16]
				}
				revs[m[2]] = &rev
			}
			args, err := json.Marshal(map[string]any{"patch": patchText, "revisions": revs})
			if err != nil {
				t.Fatal(err)
			}
			var res ApplyPatchResult
			err = call(t, env, ApplyPatchTool(EditPatch), string(args), &res)
			switch want {
			case "applied":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.Turn == "" || len(res.Applied) != len(revs) {
					t.Errorf("result %+v: want a turn and %d files applied", res, len(revs))
				}
				sameTree(t, env.Root.Path(), expected)
			case "refused":
				if err == nil {
					t.Fatalf("applied (%+v); want a refusal", res)
				}
				te := toolErr(t, err)
				if code != "" && te.Code != code {
					t.Errorf("refused with code %s (%s), want %s", te.Code, te.Message, code)
				}
				for _, w := range says {
					if !strings.Contains(te.Message, w) {
						t.Errorf("refusal %q does not say %q", te.Message, w)
					}
				}
				sameTree(t, env.Root.Path(), input)
			}
		})
	}
}

// sameTree fails unless the regular files under dir are exactly want (path -> content) and
// dir holds nothing else but the directories they need.
func sameTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	dirs := map[string]bool{".": true}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			dirs[rel] = true
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[filepath.ToSlash(rel)] = string(b)
		default:
			t.Errorf("%s: unexpected %v", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: missing", p)
		case !bytes.Equal([]byte(g), []byte(w)):
			t.Errorf("%s = %q, want %q", p, g, w)
		}
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			delete(dirs, d)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: written, but not in the expected state", p)
		}
	}
	delete(dirs, ".")
	for d := range dirs {
		t.Errorf("%s/: directory left behind", d)
	}
}

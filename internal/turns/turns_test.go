package turns

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d, err := StateDir(); err != nil || d != "/x/state/s-code/turns" {
		t.Errorf("StateDir = %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/me")
	if d, err := StateDir(); err != nil || d != "/home/me/.local/state/s-code/turns" {
		t.Errorf("StateDir with a relative XDG_STATE_HOME = %q, %v", d, err)
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"t1", "20261129T154100Z-3fa9c1", "a.b_c-d"} {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", ".hidden", "../x", "a/b", "a b", string(make([]byte, 65))} {
		if err := ValidID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	id, err := NewID()
	if err != nil || ValidID(id) != nil {
		t.Errorf("NewID = %q, %v", id, err)
	}
}

func TestStore(t *testing.T) {
	base := t.TempDir()
	s := Open(base, "/work/a")
	other := Open(base, "/work/b")
	if s.Dir() == other.Dir() {
		t.Fatal("two workspaces share a records directory")
	}
	if _, err := s.Latest(); !errors.Is(err, ErrNoTurn) {
		t.Fatalf("Latest on an empty store = %v", err)
	}
	orig := []byte("before\n")
	files := []FileRecord{{Path: "a.txt", Written: "w", State: StatePending}, {Path: "n.txt", NewFile: true, Written: "n", State: StatePending}}
	if err := s.SaveOriginals("t1", []*FileRecord{&files[0], &files[1]}, [][]byte{orig, nil}, [][32]byte{sha256.Sum256(orig), {}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Record{Turn: "t1", Files: files}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t1.json", files[0].Blob} {
		st, err := os.Stat(filepath.Join(s.Dir(), name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, st.Mode(), err)
		}
	}
	if st, err := os.Stat(s.Dir()); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("records directory mode %v, %v; want 0700", st.Mode(), err)
	}
	rec, err := s.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Original(&rec.Files[0]); err != nil || string(got) != "before\n" {
		t.Errorf("Original = %q, %v", got, err)
	}
	if got, err := s.Original(&rec.Files[1]); err != nil || got != nil {
		t.Errorf("Original of a new file = %q, %v", got, err)
	}
	if _, err := other.Load("t1"); !errors.Is(err, ErrNoTurn) {
		t.Errorf("another workspace sees the turn: %v", err)
	}
	// A corrupted blob is refused, never restored.
	if err := os.WriteFile(filepath.Join(s.Dir(), rec.Files[0].Blob), []byte("BEFORE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Original(&rec.Files[0]); err == nil {
		t.Errorf("a corrupted original was returned")
	}
	// Latest is the most recently saved turn not undone.
	time.Sleep(10 * time.Millisecond)
	if err := s.Save(&Record{Turn: "t2"}); err != nil {
		t.Fatal(err)
	}
	if l, err := s.Latest(); err != nil || l.Turn != "t2" {
		t.Errorf("Latest = %+v, %v", l, err)
	}
	l, _ := s.Load("t2")
	l.Undone = true
	if err := s.Update(l); err != nil {
		t.Fatal(err)
	}
	if l, err := s.Latest(); err != nil || l.Turn != "t1" {
		t.Errorf("Latest after undoing t2 = %+v, %v", l, err)
	}
	if err := s.Delete("t1"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(s.Dir(), "t1*")); len(ents) != 0 {
		t.Errorf("Delete left %v", ents)
	}
}

// TestValidIDMatchesPattern checks the hand-written validator against the regular expression
// it replaced, on boundary lengths, every byte value first and later, and non-ASCII text.
func TestValidIDMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)
	ids := []string{"", ".", "-", "_", "a", "a.", "é", "aé", "a\n", "\na", strings.Repeat("a", 64), strings.Repeat("a", 65), "." + strings.Repeat("a", 63)}
	for b := 0; b < 256; b++ {
		ids = append(ids, string([]byte{byte(b)}), "a"+string([]byte{byte(b)}), string([]byte{byte(b)})+"a")
	}
	for _, id := range ids {
		if got, want := ValidID(id) == nil, re.MatchString(id); got != want {
			t.Errorf("ValidID(%q) accepts = %v, the pattern says %v", id, got, want)
		}
	}
}

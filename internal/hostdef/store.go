package hostdef

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2"
)

// FileName is the name of the definitions file in the user's configuration directory and
// of a workspace's suggestions file under its .s-code directory.
const FileName = "host-processes.toml"

// UserPath returns $XDG_CONFIG_HOME/s-code/host-processes.toml (an absolute
// XDG_CONFIG_HOME only), else HOME/.config/s-code/host-processes.toml.
func UserPath(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "s-code", FileName), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("host process definitions: neither XDG_CONFIG_HOME nor HOME is an absolute path")
	}
	return filepath.Join(home, ".config", "s-code", FileName), nil
}

// file is the TOML shape of a definitions file: [process.NAME] tables.
type file struct {
	Process map[string]*Definition `toml:"process"`
}

// Store is the user's definitions file. Load it with Load, change it, Save it.
type Store struct {
	Path string
	// Defs holds the definitions by name.
	Defs map[string]*Definition
}

// UnsafeFileError reports a definitions file someone other than the user could have
// written: its definitions would run with the user's authority.
type UnsafeFileError struct {
	Path, Reason string
}

// Error names the file and the reason.
func (e *UnsafeFileError) Error() string {
	return fmt.Sprintf("host process definitions %s are unsafe: %s (the file must be yours and writable by you only)", e.Path, e.Reason)
}

// Load reads the definitions at path; a missing file is an empty Store. The file (and its
// directory) must be owned by uid and not writable by group or others (*UnsafeFileError);
// unknown keys and invalid definitions are errors naming the file.
func Load(path string, uid int) (*Store, error) {
	s := &Store{Path: path, Defs: map[string]*Definition{}}
	for _, p := range []string{filepath.Dir(path), path} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("host process definitions: %w", err)
		}
		if err := checkOwned(p, fi, uid); err != nil {
			return nil, err
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("host process definitions: %w", err)
	}
	defs, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("host process definitions %s: %w", path, err)
	}
	s.Defs = defs
	return s, nil
}

func checkOwned(p string, fi fs.FileInfo, uid int) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &UnsafeFileError{Path: p, Reason: "a symbolic link"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != uid {
		return &UnsafeFileError{Path: p, Reason: fmt.Sprintf("not owned by uid %d", uid)}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &UnsafeFileError{Path: p, Reason: fmt.Sprintf("mode %04o is writable by group or others", fi.Mode().Perm())}
	}
	return nil
}

func decode(b []byte) (map[string]*Definition, error) {
	var f file
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) && len(sm.Errors) > 0 {
			var keys []string
			for _, e := range sm.Errors {
				keys = append(keys, strings.Join(e.Key(), "."))
			}
			return nil, fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
		}
		return nil, err
	}
	defs := map[string]*Definition{}
	for name, d := range f.Process {
		if d == nil {
			continue
		}
		d.Name = name
		if err := d.Validate(); err != nil {
			return nil, err
		}
		defs[name] = d
	}
	return defs, nil
}

// Names returns the definitions' names, sorted.
func (s *Store) Names() []string {
	var n []string
	for k := range s.Defs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Save writes the store atomically (a temporary file renamed over Path), mode 0600, its
// directory created 0700 when missing.
func (s *Store) Save() error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("host process definitions: %w", err)
	}
	b, err := toml.Marshal(file{Process: s.Defs})
	if err != nil {
		return fmt.Errorf("host process definitions: %w", err)
	}
	head := []byte("# S-Code host process definitions: they run outside the sandbox with your authority.\n" +
		"# Edit with s-code mcp-servers; a changed definition runs only after you confirm its card again.\n\n")
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".host-processes-*.toml")
	if err != nil {
		return fmt.Errorf("host process definitions: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(head, b...)); err != nil {
		tmp.Close()
		return fmt.Errorf("host process definitions: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("host process definitions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("host process definitions: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("host process definitions: %w", err)
	}
	return nil
}

// SuggestionsPath returns the file where a workspace suggests definitions:
// ROOT/.s-code/host-processes.toml.
func SuggestionsPath(root string) string { return filepath.Join(root, ".s-code", FileName) }

// LoadSuggestions reads the definitions a workspace suggests. They are never runnable as
// read: each has Enabled false and no confirmation, whatever the file says (the workspace
// is not the user, and a digest is no signature: anyone can compute one). A missing file
// is no suggestions.
func LoadSuggestions(root string) ([]*Definition, error) {
	p := SuggestionsPath(root)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace suggestions: %w", err)
	}
	defs, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("workspace suggestions %s: %w", p, err)
	}
	var out []*Definition
	for _, d := range defs {
		d.Enabled, d.Confirmed = false, ""
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

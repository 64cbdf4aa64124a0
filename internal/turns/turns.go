package turns

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ErrNoTurn: no record exists for the turn (or, for Latest, no undoable turn exists for
// the workspace).
var ErrNoTurn = errors.New("no such turn")

// ErrInvalidID: a turn id outside [A-Za-z0-9._-]{1,64} or starting with a dot.
var ErrInvalidID = errors.New("invalid turn id")

// Entry states.
const (
	StatePending = "pending" // recorded before the write; the write may or may not have happened
	StateApplied = "applied" // the write happened
)

// FileRecord is what a turn did to one file. The bytes from before the turn live in a blob
// file beside the record (Blob, Offset, Length), checked against OriginalSHA256 on reading.
type FileRecord struct {
	Path           string `json:"path"`                      // relative to the workspace root
	NewFile        bool   `json:"new_file"`                  // the turn created the file; undo deletes it
	Blob           string `json:"blob,omitempty"`            // blob file holding the original bytes
	Offset         int64  `json:"offset,omitempty"`          // of the original bytes in Blob
	Length         int64  `json:"length,omitempty"`          // of the original bytes, in bytes
	OriginalSHA256 string `json:"original_sha256,omitempty"` // hex SHA-256 of the original bytes
	Mode           uint32 `json:"mode,omitempty"`            // permission bits before the turn
	Written        string `json:"written_sha256"`            // SHA-256 (hex) of the bytes the turn wrote
	State          string `json:"state"`                     // StatePending or StateApplied
}

// Record is the undo record of one turn in one workspace.
type Record struct {
	Turn      string       `json:"turn"`
	Workspace string       `json:"workspace"` // canonical absolute path of the workspace root
	Created   time.Time    `json:"created"`
	Updated   time.Time    `json:"updated"`
	Undone    bool         `json:"undone,omitempty"`
	Files     []FileRecord `json:"files"`
}

// File returns the record of path, or nil.
func (r *Record) File(path string) *FileRecord {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}

// Store holds the records of one workspace in a directory (0700) named by the SHA-256 of
// the workspace's canonical path: one JSON record per turn ("<turn>.json"), the original
// bytes in blob files beside it ("<turn>.<random>.orig") and the workspace lock (".lock",
// see Lock), all mode 0600.
type Store struct {
	dir       string
	workspace string
}

// StateDir returns the directory holding every workspace's turn records:
// $XDG_STATE_HOME/s-code/turns, or ~/.local/state/s-code/turns when XDG_STATE_HOME is unset
// or not absolute (XDG Base Directory Specification 0.8).
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "s-code", "turns"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("turn records: %w", err)
	}
	return filepath.Join(home, ".local", "state", "s-code", "turns"), nil
}

// Open returns the store of the workspace whose canonical root path is workspace, under
// base (see StateDir). Nothing is created until a record is saved.
func Open(base, workspace string) *Store {
	sum := sha256.Sum256([]byte(workspace))
	return &Store{dir: filepath.Join(base, hex.EncodeToString(sum[:16])), workspace: workspace}
}

// Dir returns the directory of this workspace's records.
func (s *Store) Dir() string { return s.dir }

// ValidID returns an error wrapping ErrInvalidID unless id is 1-64 characters of
// [A-Za-z0-9._-] not starting with a dot.
func ValidID(id string) error {
	if !validID(id) {
		return fmt.Errorf("turn id %q: %w (1-64 of A-Z a-z 0-9 . _ -, not starting with a dot)", id, ErrInvalidID)
	}
	return nil
}

// NewID returns a fresh turn id: the UTC time to the second and 6 random hex characters,
// e.g. "20261129T154100Z-3fa9c1"; ids sort by creation time.
func NewID() (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("turn id: %w", err)
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]), nil
}

// lockName is the lock file in the records directory; the leading dot keeps it out of the
// turn ids.
const lockName = ".lock"

func (s *Store) file(id string) string { return filepath.Join(s.dir, id+".json") }

// Load returns the record of turn id, or an error wrapping ErrNoTurn.
func (s *Store) Load(id string) (*Record, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(s.file(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("turn %q in workspace %s: %w", id, s.workspace, ErrNoTurn)
	}
	if err != nil {
		return nil, fmt.Errorf("read turn record: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("turn record %s: %w", s.file(id), err)
	}
	if rec.Workspace != s.workspace || rec.Turn != id {
		return nil, fmt.Errorf("turn record %s belongs to turn %q of %s, not %q of %s", s.file(id), rec.Turn, rec.Workspace, id, s.workspace)
	}
	return &rec, nil
}

// Latest returns the most recently saved record of this workspace that is not undone, or
// an error wrapping ErrNoTurn.
func (s *Store) Latest() (*Record, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("workspace %s has no turns: %w", s.workspace, ErrNoTurn)
	}
	if err != nil {
		return nil, fmt.Errorf("read turn records: %w", err)
	}
	type cand struct {
		id  string
		mod time.Time
	}
	var cs []cand
	for _, e := range ents {
		name := e.Name()
		if filepath.Ext(name) != ".json" || !e.Type().IsRegular() {
			continue
		}
		id := name[:len(name)-len(".json")]
		if ValidID(id) != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cs = append(cs, cand{id, info.ModTime()})
	}
	sort.Slice(cs, func(i, j int) bool {
		if !cs[i].mod.Equal(cs[j].mod) {
			return cs[i].mod.After(cs[j].mod)
		}
		return cs[i].id > cs[j].id
	})
	for _, c := range cs {
		rec, err := s.Load(c.id)
		if err != nil {
			return nil, err
		}
		if !rec.Undone {
			return rec, nil
		}
	}
	return nil, fmt.Errorf("workspace %s has no turn left to undo: %w", s.workspace, ErrNoTurn)
}

// Save writes rec atomically and durably: a temporary file (0600) in the records directory
// (0700), fsync, rename over the record, fsync of the directory (which also makes blob files
// saved before it durable).
func (s *Store) Save(rec *Record) error { return s.save(rec, true) }

// Update writes rec atomically (temporary file and rename) without waiting for the disk.
// Use it only where losing the update in a crash is safe: a finalized record that reverts
// to its durable pending form is still undone correctly, since undo checks pending entries
// by content.
func (s *Store) Update(rec *Record) error { return s.save(rec, false) }

func (s *Store) save(rec *Record, durable bool) error {
	if err := ValidID(rec.Turn); err != nil {
		return err
	}
	rec.Workspace = s.workspace
	now := time.Now().UTC()
	if rec.Created.IsZero() {
		rec.Created = now
	}
	rec.Updated = now
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode turn record: %w", err)
	}
	return s.writeAtomic(rec.Turn+".json", b, durable, durable)
}

// writeAtomic writes name in the records directory (0700): a temporary file (0600), fsync
// (with syncFile), rename, fsync of the directory (with syncDir).
func (s *Store) writeAtomic(name string, b []byte, syncFile, syncDir bool) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("turn records: mkdir: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("turn records: create: %w", err)
	}
	tmp := f.Name()
	fail := func(op string, err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("turn records: %s: %w", op, err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail("chmod", err)
	}
	if _, err := f.Write(b); err != nil {
		return fail("write", err)
	}
	if syncFile {
		if err := f.Sync(); err != nil {
			return fail("fsync", err)
		}
	}
	if err := f.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("turn records: rename: %w", err)
	}
	if !syncDir {
		return nil
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("turn records: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("turn records: fsync dir: %w", err)
	}
	return nil
}

// Delete removes the record of turn id and its blob files; a missing record is not an
// error.
func (s *Store) Delete(id string) error {
	if err := ValidID(id); err != nil {
		return err
	}
	if err := os.Remove(s.file(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("turn records: remove: %w", err)
	}
	blobs, _ := filepath.Glob(filepath.Join(s.dir, id+".*.orig"))
	for _, b := range blobs {
		if err := os.Remove(b); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("turn records: remove blob: %w", err)
		}
	}
	return nil
}

// SaveOriginals writes the original bytes of files to one new blob file of turn id
// (atomically, 0600, the file fsync'd; the directory entry becomes durable with the next
// Save) and fills in each record's Blob, Offset, Length and OriginalSHA256. originals[i]
// belongs to files[i], with its SHA-256 sums[i]; nil entries (new files) are skipped.
func (s *Store) SaveOriginals(id string, files []*FileRecord, originals [][]byte, sums [][32]byte) error {
	if err := ValidID(id); err != nil {
		return err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("blob name: %w", err)
	}
	name := id + "." + hex.EncodeToString(b[:]) + ".orig"
	var total int64
	for _, o := range originals {
		total += int64(len(o))
	}
	buf := make([]byte, 0, total)
	for i, fr := range files {
		if originals[i] == nil {
			continue
		}
		fr.Blob, fr.Offset, fr.Length = name, int64(len(buf)), int64(len(originals[i]))
		fr.OriginalSHA256 = hex.EncodeToString(sums[i][:])
		buf = append(buf, originals[i]...)
	}
	return s.writeAtomic(name, buf, true, false)
}

// Original returns the bytes fr recorded from before the turn (empty for a new file). It
// refuses bytes whose SHA-256 is not the recorded one.
func (s *Store) Original(fr *FileRecord) ([]byte, error) {
	if fr.NewFile || fr.Blob == "" {
		return nil, nil
	}
	if filepath.Base(fr.Blob) != fr.Blob || filepath.Ext(fr.Blob) != ".orig" {
		return nil, fmt.Errorf("turn record: blob name %q is invalid", fr.Blob)
	}
	f, err := os.Open(filepath.Join(s.dir, fr.Blob))
	if err != nil {
		return nil, fmt.Errorf("turn record: %w", err)
	}
	defer f.Close()
	out := make([]byte, fr.Length)
	if _, err := f.ReadAt(out, fr.Offset); err != nil {
		return nil, fmt.Errorf("turn record: read original of %s: %w", fr.Path, err)
	}
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != fr.OriginalSHA256 {
		return nil, fmt.Errorf("turn record: the saved original of %s does not match its SHA-256", fr.Path)
	}
	return out, nil
}

// validID reports whether id is 1-64 bytes of [A-Za-z0-9._-] not starting with a dot. It is
// a loop rather than a regular expression: compiling `[...]{0,63}` at package
// initialisation cost every s-code process about 3 million instructions (`s-code version`
// included), more than the rest of its start.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

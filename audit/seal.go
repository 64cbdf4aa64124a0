package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Seal keys (docs/audit.md, "Seals"): K_0 is 32 random bytes; after the seal with key K_i is
// written and on disk, K_{i+1} = SHA-256("evolve" || K_i) replaces K_i in memory and in the key
// state file. This is the forward-secure scheme of Schneier and Kelsey ("Secure Audit Logs to
// Support Computer Forensics", ACM TISSEC 1999): whoever takes the machine after seal i learns
// K_{i+1} at best and cannot forge seals 0..i.

// Default file names inside the log directory.
const (
	DefaultSealKeyFile   = "seal.key"   // key state: the current K_i and i
	DefaultVerifyKeyFile = "verify.key" // K_0, written once; move it off the machine
)

const (
	verifyKeyHeader = "s-code audit verification key v1\n"
	stateHeader     = "s-code audit seal state v1"
	sealMACLabel    = "s-code audit seal v1\n"
)

// stateLen is the fixed length of the key state file, so that every update overwrites the
// old key in place: header, " index=" 20 digits, " key=" 64 hex, " sum=" 16 hex, newline.
var stateLen = len(stateHeader) + len(" index=") + 20 + len(" key=") + 64 + len(" sum=") + 16 + 1

// ErrBadKey is returned when a verification key or key state file is not in its format.
var ErrBadKey = errors.New("not an s-code audit key file")

// evolveKey returns K_{i+1} = SHA-256("evolve" || K_i).
func evolveKey(k []byte) []byte {
	h := sha256.New()
	h.Write([]byte("evolve"))
	h.Write(k)
	return h.Sum(nil)
}

// keyAt returns K_i derived from K_0.
func keyAt(k0 []byte, i uint64) []byte {
	k := append([]byte(nil), k0...)
	for ; i > 0; i-- {
		k = evolveKey(k)
	}
	return k
}

// sealMAC returns the hex HMAC-SHA256 with key k over the seal input of the seal record with
// sequence number seq, seal index i and chain head prev (the hash of the record before it):
// "s-code audit seal v1\n" seq "\n" i "\n" prev "\n", numbers in decimal.
func sealMAC(k []byte, seq, i uint64, prev string) string {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(sealMACLabel))
	fmt.Fprintf(m, "%d\n%d\n%s\n", seq, i, prev)
	return hex.EncodeToString(m.Sum(nil))
}

// encodeState returns the fixed-length key state text for index i and key k.
func encodeState(i uint64, k []byte) []byte {
	body := fmt.Sprintf("%s index=%020d key=%s", stateHeader, i, hex.EncodeToString(k))
	sum := sha256.Sum256([]byte(body))
	return []byte(fmt.Sprintf("%s sum=%s\n", body, hex.EncodeToString(sum[:8])))
}

// parseState reads the key state text.
func parseState(b []byte) (uint64, []byte, error) {
	if len(b) != stateLen || !bytes.HasPrefix(b, []byte(stateHeader+" index=")) {
		return 0, nil, fmt.Errorf("seal key state: %w", ErrBadKey)
	}
	f := bytes.Fields(b)
	if len(f) != 8 {
		return 0, nil, fmt.Errorf("seal key state: %w", ErrBadKey)
	}
	idx, err := strconv.ParseUint(string(bytes.TrimPrefix(f[5], []byte("index="))), 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("seal key state index: %w", ErrBadKey)
	}
	k, err := hex.DecodeString(string(bytes.TrimPrefix(f[6], []byte("key="))))
	if err != nil || len(k) != 32 {
		return 0, nil, fmt.Errorf("seal key state key: %w", ErrBadKey)
	}
	if !bytes.Equal(encodeState(idx, k), b) {
		return 0, nil, fmt.Errorf("seal key state checksum (torn or edited): %w", ErrBadKey)
	}
	return idx, k, nil
}

// ReadVerifyKey reads K_0 from a verification key file written by Open.
func ReadVerifyKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read verification key: %w", err)
	}
	return ParseVerifyKey(b)
}

// ParseVerifyKey parses the contents of a verification key file.
func ParseVerifyKey(b []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(b, []byte(verifyKeyHeader))
	if !ok {
		return nil, fmt.Errorf("verification key: %w", ErrBadKey)
	}
	k, err := hex.DecodeString(string(bytes.TrimSpace(rest)))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("verification key: %w", ErrBadKey)
	}
	return k, nil
}

// sealState is the writer's current seal key, backed by the key state file.
type sealState struct {
	path  string
	f     *os.File
	index uint64 // i: the index of the next seal
	key   []byte // K_i
}

// newSealKey creates K_0, writes the key state file (via a temporary file, renamed) and the
// verification key file (created exclusively: an existing one is never overwritten).
func newSealKey(statePath, verifyPath string) (*sealState, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generate seal key: %w", err)
	}
	if err := writeFileSync(statePath, encodeState(0, k), false); err != nil {
		return nil, fmt.Errorf("write seal key state: %w", err)
	}
	vk := []byte(verifyKeyHeader + hex.EncodeToString(k) + "\n")
	if err := writeFileSync(verifyPath, vk, true); err != nil {
		return nil, fmt.Errorf("write verification key: %w", err)
	}
	return openSealState(statePath)
}

// openSealState opens the key state file for in-place updates.
func openSealState(path string) (*sealState, error) {
	f, err := openPrivate(path, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("open seal key state: %w", err)
	}
	b := make([]byte, stateLen+1)
	n, err := f.ReadAt(b, 0)
	if err != nil && n == 0 {
		f.Close()
		return nil, fmt.Errorf("read seal key state %s: %w", path, err)
	}
	idx, k, err := parseState(b[:n])
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sealState{path: path, f: f, index: idx, key: k}, nil
}

// advance evolves the key one step, overwrites the old key in memory and in the state file
// (in place, then fsync).
func (s *sealState) advance() error {
	next := evolveKey(s.key)
	clear(s.key)
	s.key = next
	s.index++
	if _, err := s.f.WriteAt(encodeState(s.index, s.key), 0); err != nil {
		return fmt.Errorf("write seal key state: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("fsync seal key state: %w", err)
	}
	return nil
}

func (s *sealState) close() error {
	clear(s.key)
	return s.f.Close()
}

// writeFileSync writes b to path with mode 0600 and fsyncs it and its directory. With
// exclusive, an existing file is an error; otherwise the file is written to a temporary
// name and renamed over path.
func writeFileSync(path string, b []byte, exclusive bool) error {
	target := path
	if !exclusive {
		target = path + ".tmp"
		os.Remove(target)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !exclusive {
		if err := os.Rename(target, path); err != nil {
			return err
		}
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes = 64 << 20 // rotate a file once it reaches 64 MiB
	DefaultSealEvery    = 1000     // seal after this many records
	// DefaultSealAfter is how long a record may stay unsealed: a seal is written at most
	// this long after the first record that follows the last seal.
	DefaultSealAfter = 60 * time.Second
)

// File names in the log directory: the records live in files named for the seq of their
// first record, so that name order is chain order.
const (
	filePrefix = "audit-"
	fileSuffix = ".jsonl"
	lockFile   = "lock"
)

// Errors of the writer. Every error of Append means "the record may not be on disk; do not
// run the command" (fail closed).
var (
	ErrClosed       = errors.New("audit log is closed")
	ErrLocked       = errors.New("audit log directory is in use by another writer")
	ErrBroken       = errors.New("audit log is broken; no further records are accepted")
	ErrReservedKind = errors.New("record kind is written by the log itself")
	ErrNoKind       = errors.New("record has no kind")
	ErrUnsupported  = errors.New("audit log is not supported on this system")
)

// PermissionError reports a log directory or file whose type, owner or mode is unsafe.
type PermissionError struct {
	Path    string
	Problem string
}

// Error returns "audit log: PATH PROBLEM".
func (e *PermissionError) Error() string {
	return fmt.Sprintf("audit log: %s %s", e.Path, e.Problem)
}

// Options configures a Log. The zero value is usable: 64 MiB files, no age rotation, no
// retention, a seal every 1000 records, keys beside the log, journald when it runs.
type Options struct {
	// MaxFileBytes rotates to a new file before a record once the current file has at least
	// this many bytes. 0 means DefaultMaxFileBytes; negative means never by size.
	MaxFileBytes int64
	// MaxFileAge rotates to a new file before a record once the current file's first record
	// is this old. 0 means never by age.
	MaxFileAge time.Duration
	// KeepFiles is the most files (the current one included) retention keeps; older files
	// are removed at rotation. 0 keeps all; 1 is treated as 2 (the current and the last).
	KeepFiles int
	// KeepAge removes, at rotation, files whose last write is older than this. 0 keeps all.
	KeepAge time.Duration
	// SealEvery writes a seal after this many records. 0 means DefaultSealEvery.
	SealEvery int
	// SealAfter writes a seal at most this long after the first record that follows the
	// last seal, however few records came since. 0 means DefaultSealAfter; negative
	// means by count only.
	SealAfter time.Duration
	// SealKeyFile is the key state file (the current seal key K_i); default dir/seal.key.
	SealKeyFile string
	// VerifyKeyFile receives K_0 once, when the log is created; default dir/verify.key.
	// Move it off the machine: with it anyone can forge seals.
	VerifyKeyFile string
	// DisableJournal turns off the journald mirror.
	DisableJournal bool
	// JournalSocket sends the mirror to this datagram socket (journald's native protocol)
	// instead of journald's own socket; for tests. Empty means journald's socket when
	// go-systemd's journal.Enabled reports it is there.
	JournalSocket string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Secrets are exact values replaced by [REDACTED:registered] in every record (each at
	// least MinSecretLen bytes).
	Secrets []string
	// Observer, when not nil, is told of every record the log writes (its own rotate, seal
	// and recover records included), in chain order; internal/auditexport is one.
	Observer Observer
}

// Observer is told of each record right after its line is written to the log's file (for
// a durable Append, before the fsync that makes it durable: a record whose fsync then fails
// has been observed, and the log is broken). Observe is called with the log's lock held, in
// chain order, once per record: it must return at once (no I/O, no waiting) and must not
// call the Log. line is the record's line, newline included, and must not be modified;
// sealIndex is the index of the seal that covers the record (the number of seals written
// before it; for a seal, its own index).
type Observer interface {
	Observe(seq, sealIndex uint64, line []byte)
}

// Log is an open audit log: a hash-chained, sealed JSON Lines log in one directory with one
// writer. Its methods are safe for concurrent use.
type Log struct {
	dir     string
	opts    Options
	red     *redactor
	lock    *os.File
	journal journalSink // nil when not configured
	absDir  string      // dir made absolute: the mirror's SCODE_LOG_DIR

	journalMu   sync.Mutex // guards journal sends and journalErrs; taken after mu (Close), never before
	journalErrs int

	// mu guards the fields below it.
	mu        sync.Mutex
	f         *os.File
	name      string // base name of the current file
	size      int64  // bytes of whole records in the current file
	fileStart time.Time
	seq       uint64 // seq of the last record written
	head      string // hash of the last record written
	sinceSeal int    // records since the last seal
	lastSeal  bool   // the last record written is a seal
	seal      *sealState
	sealTimer *time.Timer // armed while records are unsealed (SealAfter); nil otherwise
	broken    error
	// pendingSealIndex is the index of the last record's seal when Open found a seal last.
	pendingSealIndex *uint64
	closed           bool

	// smu guards syncing; scond (on smu) is broadcast when an fsync ends. Lock order: smu
	// is never held while taking mu.
	smu       sync.Mutex
	scond     *sync.Cond
	syncing   bool          // a leader is fsyncing
	syncedSeq atomic.Uint64 // every record up to this seq is on disk
	fsyncs    atomic.Uint64 // fsyncs of record files, for the benchmarks
	inflight  atomic.Int64  // appends between their start and their write
}

// commitDelay bounds how long an fsync leader waits for appends already under way to reach
// the file, so that one fsync covers them too.
const commitDelay = 100 * time.Microsecond

// fileName returns the name of the file whose first record has sequence number seq.
func fileName(seq uint64) string {
	return fmt.Sprintf("%s%020d%s", filePrefix, seq, fileSuffix)
}

// parseFileName returns the first seq a file name declares.
func parseFileName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, fileSuffix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n > 0
}

// logFile is one file of the log.
type logFile struct {
	name  string
	first uint64 // seq from the name
}

// listFiles returns the log's record files in chain order.
func listFiles(dir string) ([]logFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read audit log directory: %w", err)
	}
	var out []logFile
	for _, e := range ents {
		if n, ok := parseFileName(e.Name()); ok {
			out = append(out, logFile{e.Name(), n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out, nil
}

// ensureDir creates dir with mode 0700 when absent and checks that it is a directory (not a
// symbolic link) owned by the effective uid with no access for group or others.
func ensureDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create audit log directory: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("chmod audit log directory: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("stat audit log directory: %w", err)
	}
	return checkOwnerMode(dir, fi, true)
}

// openPrivate opens an existing file without following a symbolic link and checks that it
// is a regular file owned by the effective uid, mode 0600 or stricter.
func openPrivate(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkOwnerMode(path, fi, false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openForReading opens a file of the log directory for reading, as Verify, Read and Follow
// do: without following a symbolic link and without blocking (a FIFO planted under a log
// file's name must not hang the reader). A symbolic link or anything but a regular file is
// a *PermissionError; a missing file wraps fs.ErrNotExist.
func openForReading(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, &PermissionError{Path: path, Problem: "is a symbolic link"}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("fstat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &PermissionError{Path: path, Problem: "is not a regular file"}
	}
	return f, fi, nil
}

// readLogFile returns the contents of a file of the log directory, opened as
// openForReading does.
func readLogFile(path string) ([]byte, error) {
	f, _, err := openForReading(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// Open opens the audit log in dir for appending, creating dir (0700) and the first file
// (0600) when absent, and resumes the chain from the last whole record of the newest file.
// A torn final record left by a crash (bytes after the last newline) is cut off and a
// "recover" record saying so is appended. Open refuses a directory or file that is a
// symbolic link, has another owner or grants access to group or others (*PermissionError),
// a directory another Log holds (ErrLocked), and a newest record that does not verify.
func Open(dir string, opts Options) (*Log, error) {
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.SealEvery <= 0 {
		opts.SealEvery = DefaultSealEvery
	}
	if opts.SealAfter == 0 {
		opts.SealAfter = DefaultSealAfter
	}
	if opts.KeepFiles == 1 {
		opts.KeepFiles = 2
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SealKeyFile == "" {
		opts.SealKeyFile = filepath.Join(dir, DefaultSealKeyFile)
	}
	if opts.VerifyKeyFile == "" {
		opts.VerifyKeyFile = filepath.Join(dir, DefaultVerifyKeyFile)
	}
	red, err := newRedactor(opts.Secrets)
	if err != nil {
		return nil, err
	}
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, fmt.Errorf("audit log %s: %w", dir, err)
	}
	l := &Log{dir: dir, opts: opts, red: red, lock: lock}
	l.scond = sync.NewCond(&l.smu)
	if err := l.resume(); err != nil {
		l.closeFiles()
		return nil, fmt.Errorf("open audit log %s: %w", dir, err)
	}
	if !opts.DisableJournal {
		l.journal = newJournalSink(opts.JournalSocket)
		if l.absDir, err = filepath.Abs(dir); err != nil {
			l.absDir = dir
		}
	}
	l.mu.Lock()
	if !l.lastSeal && l.seq > 0 {
		// Records left unsealed by the last writer are sealed within SealAfter too.
		l.sinceSeal = max(l.sinceSeal, 1)
		l.armSealTimer()
	}
	l.mu.Unlock()
	return l, nil
}

// resume finds the end of the chain, repairs a torn tail and opens the key state.
func (l *Log) resume() error {
	files, err := listFiles(l.dir)
	if err != nil {
		return err
	}
	var torn int64
	var tornFile string
	// Drop files left empty by a crash between creating a file and writing its first record.
	for len(files) > 0 {
		last := files[len(files)-1]
		p := filepath.Join(l.dir, last.name)
		f, err := openPrivate(p, os.O_RDWR)
		if err != nil {
			return fmt.Errorf("open %s: %w", last.name, err)
		}
		data, err := readAll(f)
		if err != nil {
			f.Close()
			return fmt.Errorf("read %s: %w", last.name, err)
		}
		end := bytes.LastIndexByte(data, '\n') + 1
		if t := int64(len(data) - end); t > 0 {
			if err := f.Truncate(int64(end)); err != nil {
				f.Close()
				return fmt.Errorf("cut torn record off %s: ftruncate: %w", last.name, err)
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return fmt.Errorf("fsync %s: %w", last.name, err)
			}
			torn += t
			tornFile = last.name
		}
		if end == 0 {
			f.Close()
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove empty %s: %w", last.name, err)
			}
			if err := syncDir(l.dir); err != nil {
				return err
			}
			files = files[:len(files)-1]
			continue
		}
		if err := l.resumeFrom(f, last, data[:end]); err != nil {
			f.Close()
			return err
		}
		break
	}
	fresh := len(files) == 0
	if err := l.openSealKey(fresh); err != nil {
		return err
	}
	if fresh {
		if err := l.newFile(); err != nil {
			return err
		}
	}
	l.syncedSeq.Store(l.seq)
	if torn > 0 {
		rec := &Record{Kind: KindRecover, File: tornFile, TornBytes: torn,
			Reason: fmt.Sprintf("cut %d bytes of a torn final record (a crash during a write) off %s", torn, tornFile)}
		if _, err := l.appendLocked(rec); err != nil {
			return err
		}
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", l.name, err)
		}
		l.syncedSeq.Store(l.seq)
	}
	return nil
}

func readAll(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, fi.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && n != len(buf) {
		return nil, err
	}
	return buf[:n], nil
}

// resumeFrom takes the chain head from the last record of data, the whole records of f.
func (l *Log) resumeFrom(f *os.File, lf logFile, data []byte) error {
	body := data[:len(data)-1]
	lastLine := body[bytes.LastIndexByte(body, '\n')+1:]
	firstLine := data[:bytes.IndexByte(data, '\n')]
	rl, err := splitLine(lastLine)
	if err != nil {
		return fmt.Errorf("last record of %s: %w (run s-code audit verify)", lf.name, err)
	}
	if got := rl.sum(nil); !bytes.Equal(got, rl.hash) {
		return fmt.Errorf("last record of %s (seq %d) does not match its hash (run s-code audit verify)", lf.name, rl.seq)
	}
	var first, last Record
	if err := json.Unmarshal(firstLine, &first); err != nil {
		return fmt.Errorf("first record of %s: %w", lf.name, err)
	}
	if err := json.Unmarshal(lastLine, &last); err != nil {
		return fmt.Errorf("last record of %s: %w", lf.name, err)
	}
	if _, err := f.Seek(0, 2); err != nil {
		return fmt.Errorf("seek %s: %w", lf.name, err)
	}
	l.f, l.name, l.size = f, lf.name, int64(len(data))
	l.fileStart = first.Time
	l.seq, l.head = rl.seq, string(rl.hash)
	l.lastSeal = last.Kind == KindSeal
	// Reopened for appending: O_APPEND is needed so that a truncation after a failed write
	// and the next write agree on the end.
	af, err := openPrivate(filepath.Join(l.dir, lf.name), os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("open %s for appending: %w", lf.name, err)
	}
	f.Close()
	l.f = af
	if last.Kind == KindSeal && last.SealIndex != nil {
		l.pendingSealIndex = last.SealIndex
	}
	return nil
}

// openSealKey opens (or, for a fresh log, creates) the seal key state.
func (l *Log) openSealKey(fresh bool) error {
	_, err := os.Lstat(l.opts.SealKeyFile)
	switch {
	case errors.Is(err, fs.ErrNotExist) && fresh:
		s, err := newSealKey(l.opts.SealKeyFile, l.opts.VerifyKeyFile)
		if err != nil {
			return err
		}
		l.seal = s
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("seal key state %s is missing but the log has records; refusing to extend an unsealable chain", l.opts.SealKeyFile)
	case err != nil:
		return fmt.Errorf("stat seal key state: %w", err)
	}
	s, err := openSealState(l.opts.SealKeyFile)
	if err != nil {
		return err
	}
	l.seal = s
	// A crash between writing the key state and the verification key of a new log: K_0 is
	// still the state's key, so the verification key can be written now.
	if fresh && s.index == 0 {
		if _, err := os.Lstat(l.opts.VerifyKeyFile); errors.Is(err, fs.ErrNotExist) {
			vk := []byte(verifyKeyHeader + hex.EncodeToString(s.key) + "\n")
			if err := writeFileSync(l.opts.VerifyKeyFile, vk, true); err != nil {
				return fmt.Errorf("write verification key: %w", err)
			}
		}
	}
	if fresh && s.index > 0 {
		return fmt.Errorf("seal key state %s is at seal %d but the log is empty (its records were removed); move the key state away to start a new log", l.opts.SealKeyFile, s.index)
	}
	// A crash after a seal reached the disk and before the key state was updated: the last
	// record is the seal with the state's own index, so the key must evolve now.
	if p := l.pendingSealIndex; p != nil {
		switch {
		case *p == s.index:
			if err := s.advance(); err != nil {
				return err
			}
		case *p+1 != s.index:
			return fmt.Errorf("seal key state %s is at seal %d but the log's last seal is %d", l.opts.SealKeyFile, s.index, *p)
		}
	}
	return nil
}

// newFile starts the file for the next record. The caller holds mu (or is Open).
func (l *Log) newFile() error {
	name := fileName(l.seq + 1)
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	l.f, l.name, l.size, l.fileStart = f, name, 0, time.Time{}
	return nil
}

// Head returns the seq and hash of the last record written (0 and "" for an empty log).
func (l *Log) Head() (seq uint64, hash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq, l.head
}

// SealState reports the log's forward-secure seals: seals is how many have been written
// (the key state's epoch: the index of the next seal) and unsealed how many records follow
// the last one (a seal is written within Options.SealAfter, or after SealEvery records).
// enabled is false when the log keeps no seal key.
func (l *Log) SealState() (seals uint64, unsealed int, enabled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seal == nil {
		return 0, l.sinceSeal, false
	}
	return l.seal.index, l.sinceSeal, true
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Append writes r as the next record of the chain. It fills r's Seq, Time (UTC), Prev and
// Hash, redacts secrets and escapes control characters in r's strings (r itself then holds
// what was written), and may write a seal or rotate to a new file first. With durable, it
// returns only after the record is on disk (fsync); concurrent durable appends share one
// fsync (group commit). Any error means the record may not be on disk and the caller must
// not run the command it describes; a failed write is cut back so the chain stays whole, and
// a failure that leaves the file's state unknown (fsync, truncate) marks the log broken
// (ErrBroken) so every later Append fails too.
func (l *Log) Append(ctx context.Context, r *Record, durable bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit append: %w", err)
	}
	switch r.Kind {
	case "":
		return fmt.Errorf("audit append: %w", ErrNoKind)
	case KindSeal, KindRotate, KindRecover:
		return fmt.Errorf("audit append %q: %w", r.Kind, ErrReservedKind)
	}
	rec := *r
	rec.File, rec.PrunedThrough, rec.TornBytes, rec.SealIndex, rec.Seal = "", 0, 0, nil, ""
	l.red.record(&rec)

	l.inflight.Add(1)
	l.mu.Lock()
	lines, err := l.appendWithUpkeep(&rec)
	seq := l.seq
	l.mu.Unlock()
	l.inflight.Add(-1)
	if err != nil {
		return err
	}
	*r = rec
	l.mirror(lines)
	if durable {
		return l.syncTo(rec.Seq, seq)
	}
	return nil
}

// appendWithUpkeep rotates when due, appends rec, and seals when due. It returns the lines
// written, for the journald mirror. The caller holds mu.
func (l *Log) appendWithUpkeep(rec *Record) ([][]byte, error) {
	if l.closed {
		return nil, fmt.Errorf("audit append: %w", ErrClosed)
	}
	if l.broken != nil {
		return nil, fmt.Errorf("audit append: %w", l.broken)
	}
	var lines [][]byte
	if l.rotationDue() {
		ls, err := l.rotateLocked()
		lines = append(lines, ls...)
		if err != nil {
			return lines, err
		}
	}
	line, err := l.appendLocked(rec)
	if err != nil {
		return lines, err
	}
	lines = append(lines, line)
	if l.sinceSeal >= l.opts.SealEvery {
		line, err := l.sealLocked()
		if line != nil {
			lines = append(lines, line)
		}
		if err != nil {
			return lines, err
		}
	}
	l.armSealTimer()
	return lines, nil
}

// armSealTimer starts the SealAfter timer when records are unsealed and it is not running.
// The caller holds mu.
func (l *Log) armSealTimer() {
	if l.opts.SealAfter > 0 && l.sinceSeal > 0 && l.sealTimer == nil && !l.closed {
		l.sealTimer = time.AfterFunc(l.opts.SealAfter, l.sealByTime)
	}
}

// sealByTime writes the seal SealAfter asks for, unless one was written meanwhile.
func (l *Log) sealByTime() {
	l.mu.Lock()
	l.sealTimer = nil
	if l.closed || l.broken != nil || l.sinceSeal == 0 {
		l.mu.Unlock()
		return
	}
	line, _ := l.sealLocked() // a failure breaks the log: the next Append reports it
	l.mu.Unlock()
	if line != nil {
		l.mirror([][]byte{line})
	}
}

func (l *Log) rotationDue() bool {
	if l.size == 0 {
		return false
	}
	if l.opts.MaxFileBytes > 0 && l.size >= l.opts.MaxFileBytes {
		return true
	}
	return l.opts.MaxFileAge > 0 && !l.fileStart.IsZero() && l.opts.Now().Sub(l.fileStart) >= l.opts.MaxFileAge
}

// appendLocked numbers, links, encodes and writes rec to the current file. On a failed
// write it cuts the file back to its last whole record; when that fails too, the log is
// broken. The caller holds mu.
func (l *Log) appendLocked(rec *Record) ([]byte, error) {
	rec.Seq = l.seq + 1
	rec.Time = l.opts.Now().UTC()
	rec.Prev = l.head
	line, err := encodeLine(rec)
	if err != nil {
		return nil, fmt.Errorf("audit append: %w", err)
	}
	if _, err := l.f.Write(line); err != nil {
		werr := fmt.Errorf("audit append: write %s: %w", l.name, err)
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = fmt.Errorf("%w: %w (then ftruncate: %w)", ErrBroken, werr, terr)
			return nil, l.broken
		}
		return nil, werr
	}
	l.size += int64(len(line))
	if l.fileStart.IsZero() {
		l.fileStart = rec.Time
	}
	l.seq, l.head = rec.Seq, rec.Hash
	l.sinceSeal++
	l.lastSeal = rec.Kind == KindSeal
	if l.opts.Observer != nil {
		l.opts.Observer.Observe(rec.Seq, l.seal.index, line)
	}
	return line, nil
}

// fsyncLocked syncs the current file and records that everything up to l.seq is on disk.
// A failure breaks the log: after a failed fsync the kernel may have dropped the dirty
// pages, so nothing written since the last good fsync is known to be on disk.
func (l *Log) fsyncLocked() error {
	if err := l.f.Sync(); err != nil {
		l.broken = fmt.Errorf("%w: fsync %s: %w", ErrBroken, l.name, err)
		return l.broken
	}
	l.fsyncs.Add(1)
	l.markSynced(l.seq)
	return nil
}

func (l *Log) markSynced(seq uint64) {
	for {
		cur := l.syncedSeq.Load()
		if cur >= seq || l.syncedSeq.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// sealLocked writes a seal over the chain head with K_i, makes it durable, then evolves the
// key (erasing K_i). The caller holds mu.
func (l *Log) sealLocked() ([]byte, error) {
	idx := l.seal.index
	rec := &Record{Kind: KindSeal, SealIndex: &idx}
	rec.Seal = sealMAC(l.seal.key, l.seq+1, idx, l.head)
	line, err := l.appendLocked(rec)
	if err != nil {
		return nil, err
	}
	if err := l.fsyncLocked(); err != nil {
		return line, err
	}
	if err := l.seal.advance(); err != nil {
		l.broken = fmt.Errorf("%w: %w", ErrBroken, err)
		return line, l.broken
	}
	l.sinceSeal = 0
	if l.sealTimer != nil {
		l.sealTimer.Stop()
		l.sealTimer = nil
	}
	return line, nil
}

// rotateLocked seals and closes the current file, starts the next one with a rotate record
// linking to the old file's last hash, and applies retention. The caller holds mu.
func (l *Log) rotateLocked() ([][]byte, error) {
	var lines [][]byte
	if !l.lastSeal {
		line, err := l.sealLocked()
		if line != nil {
			lines = append(lines, line)
		}
		if err != nil {
			return lines, err
		}
	}
	old, oldName, oldSize, oldStart := l.f, l.name, l.size, l.fileStart
	pruned, through, err := l.pruneCandidates()
	if err != nil {
		return lines, err
	}
	if err := l.newFile(); err != nil {
		// Stay on the old file: nothing was written to a new one.
		return lines, fmt.Errorf("audit rotate: %w", err)
	}
	rec := &Record{Kind: KindRotate, File: oldName, PrunedThrough: through}
	if len(pruned) > 0 {
		rec.Reason = fmt.Sprintf("retention removes %d file(s): %s", len(pruned), strings.Join(pruned, " "))
	}
	line, err := l.appendLocked(rec)
	if err != nil {
		if l.broken != nil {
			return lines, err
		}
		// The write was cut back: drop the empty new file and stay on the old one, so that
		// a full disk does not break the log.
		newName := l.name
		l.f.Close()
		l.f, l.name, l.size, l.fileStart = old, oldName, oldSize, oldStart
		if rerr := os.Remove(filepath.Join(l.dir, newName)); rerr != nil {
			l.broken = fmt.Errorf("%w: %w (then remove %s: %w)", ErrBroken, err, newName, rerr)
			return lines, l.broken
		}
		if rerr := syncDir(l.dir); rerr != nil {
			l.broken = fmt.Errorf("%w: %w (then %w)", ErrBroken, err, rerr)
			return lines, l.broken
		}
		return lines, fmt.Errorf("audit rotate: %w", err)
	}
	old.Close()
	lines = append(lines, line)
	if len(pruned) == 0 {
		return lines, nil
	}
	// The claim is on disk before the files go, so a crash leaves extra files, never
	// missing ones.
	if err := l.fsyncLocked(); err != nil {
		return lines, err
	}
	for _, name := range pruned {
		if err := os.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return lines, fmt.Errorf("audit retention: remove %s: %w", name, err)
		}
	}
	return lines, syncDir(l.dir)
}

// pruneCandidates returns the files retention removes at this rotation (oldest first, never
// the current one) and the last seq they hold. It runs before the new file is created.
func (l *Log) pruneCandidates() ([]string, uint64, error) {
	if l.opts.KeepFiles == 0 && l.opts.KeepAge == 0 {
		return nil, 0, nil
	}
	files, err := listFiles(l.dir)
	if err != nil {
		return nil, 0, err
	}
	// files are the existing ones, the current (last) included; the new file is not yet
	// created but counts toward KeepFiles. files[:n] are removed, never the current one.
	n := 0
	if l.opts.KeepFiles > 0 && len(files)+1 > l.opts.KeepFiles {
		n = len(files) + 1 - l.opts.KeepFiles
	}
	if l.opts.KeepAge > 0 {
		cutoff := l.opts.Now().Add(-l.opts.KeepAge)
		for n < len(files)-1 {
			fi, err := os.Lstat(filepath.Join(l.dir, files[n].name))
			if err != nil || !fi.ModTime().Before(cutoff) {
				break
			}
			n++
		}
	}
	if n > len(files)-1 {
		n = len(files) - 1
	}
	if n <= 0 {
		return nil, 0, nil
	}
	var names []string
	for _, f := range files[:n] {
		names = append(names, f.name)
	}
	return names, files[n].first - 1, nil
}

// syncTo returns once every record up to seq is on disk (group commit). One caller at a
// time is the leader and fsyncs; its fsync covers every record written before it began. The
// others wait on a condition variable and are all woken when an fsync ends: they return when
// it covered their record, or one of them leads the next fsync.
func (l *Log) syncTo(seq, _ uint64) error {
	if l.syncedSeq.Load() >= seq {
		return nil
	}
	l.smu.Lock()
	for l.syncing && l.syncedSeq.Load() < seq {
		l.scond.Wait()
	}
	if l.syncedSeq.Load() >= seq {
		l.smu.Unlock()
		return nil
	}
	l.syncing = true
	l.smu.Unlock()
	defer func() {
		l.smu.Lock()
		l.syncing = false
		l.scond.Broadcast()
		l.smu.Unlock()
	}()

	// Let the appends already under way reach the file first, so that this fsync covers them
	// too (at most commitDelay).
	for deadline := time.Now().Add(commitDelay); l.inflight.Load() > 0 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	l.mu.Lock()
	f, target, broken, name := l.f, l.seq, l.broken, l.name
	l.mu.Unlock()
	if broken != nil {
		return fmt.Errorf("audit append: %w", broken)
	}
	if err := f.Sync(); err != nil {
		if l.syncedSeq.Load() >= seq { // the file was rotated (synced) and closed meanwhile
			return nil
		}
		l.mu.Lock()
		if l.broken == nil {
			l.broken = fmt.Errorf("%w: fsync %s: %w", ErrBroken, name, err)
		}
		err = l.broken
		l.mu.Unlock()
		return fmt.Errorf("audit append: %w", err)
	}
	l.fsyncs.Add(1)
	l.markSynced(target)
	return nil
}

// Close seals the chain (unless the last record is a seal), syncs and closes the log.
// It returns the error that broke the log, if one did.
func (l *Log) Close() error {
	l.smu.Lock()
	for l.syncing {
		l.scond.Wait()
	}
	l.syncing = true // no fsync leader from here on: the file is being closed
	l.smu.Unlock()
	defer func() {
		l.smu.Lock()
		l.syncing = false
		l.scond.Broadcast()
		l.smu.Unlock()
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.closed = true
	if l.sealTimer != nil {
		l.sealTimer.Stop()
		l.sealTimer = nil
	}
	var err error
	if l.broken == nil && !l.lastSeal && l.seq > 0 {
		var line []byte
		line, err = l.sealLocked()
		if line != nil {
			l.mirror([][]byte{line})
		}
	} else if l.broken == nil {
		err = l.fsyncLocked()
	}
	if err == nil && l.broken != nil {
		err = l.broken
	}
	if cerr := l.closeFiles(); err == nil {
		err = cerr
	}
	return err
}

func (l *Log) closeFiles() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	if l.seal != nil {
		if cerr := l.seal.close(); err == nil {
			err = cerr
		}
	}
	if l.lock != nil {
		l.lock.Close()
	}
	if l.journal != nil {
		l.journal.close()
	}
	return err
}

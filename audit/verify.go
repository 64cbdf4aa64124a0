package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// ProblemKind names what is wrong with a log.
type ProblemKind string

// The problems Verify reports.
const (
	ProblemModified    ProblemKind = "modified"     // a record's bytes differ from what was hashed, or its hash was recomputed
	ProblemMissing     ProblemKind = "missing"      // records are absent from the middle of a file
	ProblemReordered   ProblemKind = "reordered"    // records are out of order
	ProblemInserted    ProblemKind = "inserted"     // a line that is not part of the chain was added
	ProblemTruncated   ProblemKind = "truncated"    // the end of a file or of the log was cut off
	ProblemBadSeal     ProblemKind = "bad-seal"     // a seal does not verify with the key, or seals are missing
	ProblemMissingFile ProblemKind = "missing-file" // a rotated file was removed (not by retention)
)

// Problem locates the first bad record of a log.
type Problem struct {
	Kind   ProblemKind `json:"kind"`
	File   string      `json:"file,omitempty"` // base name
	Line   int         `json:"line,omitempty"` // 1-based; 0 when the problem is about a whole file or the log
	Seq    uint64      `json:"seq,omitempty"`  // the record's seq, or the first missing one
	Detail string      `json:"detail"`
}

// String returns "FILE:LINE seq N: KIND: DETAIL" (line and seq when known).
func (p *Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	if p.Seq > 0 {
		loc += " seq " + strconv.FormatUint(p.Seq, 10)
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Kind, p.Detail)
}

// Report is what Verify found.
type Report struct {
	Dir          string `json:"dir"`
	Whole        bool   `json:"whole"` // the chain (and, with a key, the seals) verified with no problem
	Files        int    `json:"files"`
	Records      uint64 `json:"records"`
	Bytes        int64  `json:"bytes"`
	FirstSeq     uint64 `json:"first_seq,omitempty"`
	LastSeq      uint64 `json:"last_seq,omitempty"` // the last whole record verified
	LastHash     string `json:"last_hash,omitempty"`
	Seals        int    `json:"seals"`
	SealsChecked bool   `json:"seals_checked"`           // a key was given and the seals were checked with it
	UnsealedTail uint64 `json:"unsealed_tail,omitempty"` // records after the last seal (chain-protected only)
	// UnsealedSince is the time of the oldest record after the last seal (zero when none).
	UnsealedSince time.Time `json:"unsealed_since,omitzero"`
	// SealEpoch is the key state's seal index (how many seals the writer has made), when
	// a key was given and the state was read.
	SealEpoch *uint64  `json:"seal_epoch,omitempty"`
	Witness   *Witness `json:"witness,omitempty"` // what the witness said, when one was asked for
	Problem   *Problem `json:"problem,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// VerifyOptions are the inputs of VerifyWith besides the directory.
type VerifyOptions struct {
	// Key is K_0 from the verification key file (ReadVerifyKey). Nil checks the chain only.
	Key []byte
	// StateFile is the seal key state to check the log's end against; default dir/seal.key.
	// With a key it must exist: it is how a cut after the last seal is caught.
	StateFile string
	// Witness, when set, is compared with the log's seals: a rollback of the whole
	// directory (log and key state) to an earlier copy is caught where the witness saw
	// later seals (witness.go).
	Witness WitnessSource
}

// Verify checks the log in dir: the chain (each record's hash, each prev, dense seq, file
// links, retention claims) and, when key (K_0) is not nil, every seal and the end of the log
// against the seal key state. It returns an error only when the log cannot be read; what is
// wrong with the log is in the Report's Problem (the first bad record).
func Verify(dir string, key []byte) (Report, error) {
	return VerifyWith(dir, VerifyOptions{Key: key})
}

// VerifyWith is Verify with options.
func VerifyWith(dir string, opts VerifyOptions) (Report, error) {
	v := &verifier{rep: Report{Dir: dir}, key: opts.Key}
	if opts.StateFile == "" {
		opts.StateFile = filepath.Join(dir, DefaultSealKeyFile)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return v.rep, fmt.Errorf("audit log directory: %w", err)
	}
	if !fi.IsDir() {
		return v.rep, fmt.Errorf("audit log directory %s: not a directory", dir)
	}
	files, err := listFiles(dir)
	if err != nil {
		return v.rep, err
	}
	v.notePermissions(dir, fi, true)
	v.rep.Files = len(files)
	var buf []byte
	for i, f := range files {
		data, fi, err := readInto(filepath.Join(dir, f.name), buf)
		if err != nil {
			return v.rep, fmt.Errorf("read %s: %w", f.name, err)
		}
		v.notePermissions(filepath.Join(dir, f.name), fi, false)
		buf = data
		v.rep.Bytes += int64(len(data))
		if !v.file(f, data, i == len(files)-1) {
			return v.rep, nil
		}
	}
	if v.rep.FirstSeq > 1 && v.prunedThrough+1 < v.rep.FirstSeq {
		v.fail(ProblemMissingFile, files[0].name, 0, 1, seqRange(1, v.rep.FirstSeq-1)+" missing and no rotate record says retention removed them")
		return v.rep, nil
	}
	if v.lastSealSeq > 0 {
		v.rep.UnsealedTail = v.rep.LastSeq - v.lastSealSeq
	} else {
		v.rep.UnsealedTail = v.rep.Records
	}
	if v.rep.UnsealedTail > 0 && v.afterSeal != nil {
		if r, err := decodeRecord(v.afterSeal); err == nil {
			v.rep.UnsealedSince = r.Time
		}
	}
	if opts.Key != nil {
		v.rep.SealsChecked = true
		if !v.checkState(opts.StateFile) {
			return v.rep, nil
		}
	}
	if opts.Witness != nil {
		if !v.witness(opts.Witness) {
			return v.rep, nil
		}
	}
	if v.rep.UnsealedTail > 0 {
		since := ""
		if !v.rep.UnsealedSince.IsZero() {
			since = " (the oldest written " + v.rep.UnsealedSince.UTC().Format(time.RFC3339) + ")"
		}
		v.note(fmt.Sprintf("%d record(s) after the last seal%s are protected by the chain only (a cut there is not detectable until the next seal, which the writer makes within its seal interval)", v.rep.UnsealedTail, since))
	}
	if opts.Key == nil && v.rep.Seals > 0 {
		v.note("seals not checked: no verification key given")
	}
	if _, err := os.Stat(filepath.Join(dir, DefaultVerifyKeyFile)); err == nil {
		v.note(DefaultVerifyKeyFile + " is still beside the log: move it off the machine (with it anyone can forge seals)")
	}
	v.rep.Whole = true
	return v.rep, nil
}

// verifier is the state of one Verify run.
type verifier struct {
	rep           Report
	key           []byte
	prevHash      []byte // hex hash of the last record verified
	prevFile      string
	prevLine      int
	started       bool
	prevIsSeal    bool
	prunedThrough uint64
	lastSealIdx   uint64
	lastSealSeq   uint64
	keyIdx        uint64 // curKey is K_keyIdx
	curKey        []byte
	seen          map[uint64]bool // only filled after a mismatch
	afterSeal     []byte          // a copy of the record after the last seal (or the first record)
	sealHashes    map[uint64]sealSeen
}

// sealSeen is one seal of the log as the witness check needs it.
type sealSeen struct {
	seq  uint64
	hash string
}

func (v *verifier) fail(kind ProblemKind, file string, line int, seq uint64, detail string) {
	v.rep.Problem = &Problem{Kind: kind, File: file, Line: line, Seq: seq, Detail: detail}
}

func (v *verifier) note(s string) { v.rep.Notes = append(v.rep.Notes, s) }

// notePermissions notes a log directory or file whose owner or mode Open would refuse: the
// chain can still be whole, but others could read (or, with write access, rewrite) it.
func (v *verifier) notePermissions(path string, fi fs.FileInfo, dir bool) {
	var pe *PermissionError
	if errors.As(checkOwnerMode(path, fi, dir), &pe) {
		v.note(pe.Error() + "; the helper refuses to open a log like this")
	}
}

// file verifies one file's records; false means a problem was found.
func (v *verifier) file(f logFile, data []byte, last bool) bool {
	if len(data) == 0 {
		if last {
			v.note(f.name + " is empty (a crash right after rotation; the next Open removes it)")
			return true
		}
		v.fail(ProblemTruncated, f.name, 0, f.first, "the file is empty")
		return false
	}
	// Split into lines, then check every line's shape and hash in parallel (each line holds
	// all its hash needs), then walk the chain in order.
	var ends []int // ends[i] is the offset of line i's newline
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		ends = append(ends, off+nl)
		off += nl + 1
	}
	checks := checkLines(data, ends)
	start := 0
	for i, end := range ends {
		if !v.record(f, i+1, data[start:end], data[end+1:], &checks[i]) {
			return false
		}
		start = end + 1
	}
	if start < len(data) {
		line := len(ends) + 1
		if last {
			v.fail(ProblemTruncated, f.name, line, v.expect(), fmt.Sprintf("the final record is cut off (%d bytes, no newline): a torn write from a crash, which the next Open cuts off and records, or a cut tail", len(data)-start))
		} else {
			v.fail(ProblemTruncated, f.name, line, v.expect(), "the file's last record is cut off")
		}
		return false
	}
	return true
}

// lineCheck is the order-independent part of checking one line.
type lineCheck struct {
	rl     rawLine
	err    error // the line's shape is wrong
	hashOK bool  // the line's bytes match its hash
}

// checkLines splits and hashes the lines of data (ending at ends) on up to GOMAXPROCS
// goroutines.
func checkLines(data []byte, ends []int) []lineCheck {
	out := make([]lineCheck, len(ends))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(ends)/256))
	per := (len(ends) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, len(ends))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			var sum []byte
			start := 0
			if lo > 0 {
				start = ends[lo-1] + 1
			}
			for i := lo; i < hi; i++ {
				c := &out[i]
				c.rl, c.err = splitLine(data[start:ends[i]])
				if c.err == nil {
					sum = c.rl.sumWith(h, sum[:0])
					c.hashOK = bytes.Equal(sum, c.rl.hash)
				}
				start = ends[i] + 1
			}
		}()
	}
	wg.Wait()
	return out
}

func (v *verifier) expect() uint64 {
	if !v.started {
		return 0
	}
	return v.rep.LastSeq + 1
}

// continues reports whether the first line of rest is the record the chain expects next.
func (v *verifier) continues(rest []byte) bool {
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return false
	}
	rl, err := splitLine(rest[:nl])
	return err == nil && rl.seq == v.expect() && bytes.Equal(rl.prev, v.prevHash)
}

// seqLater reports whether a record with seq appears among the lines of rest.
func seqLater(rest []byte, seq uint64) bool {
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		if rl, err := splitLine(rest[:nl]); err == nil && rl.seq == seq {
			return true
		}
		if nl == len(rest) {
			break
		}
		rest = rest[nl+1:]
	}
	return false
}

// record verifies one line; false means a problem was found.
func (v *verifier) record(f logFile, line int, b, rest []byte, lc *lineCheck) bool {
	rl, err := lc.rl, lc.err
	if err != nil {
		if v.started && v.continues(rest) {
			v.fail(ProblemInserted, f.name, line, 0, "a line that is not a record of the chain was inserted ("+err.Error()+")")
		} else {
			v.fail(ProblemModified, f.name, line, v.expect(), err.Error())
		}
		return false
	}
	if !lc.hashOK {
		if v.started && v.continues(rest) {
			v.fail(ProblemInserted, f.name, line, rl.seq, "a line that is not a record of the chain was inserted (its hash does not match its bytes)")
		} else {
			v.fail(ProblemModified, f.name, line, rl.seq, "the record's bytes do not match its hash")
		}
		return false
	}
	firstOfFile := line == 1
	if !v.started {
		if rl.seq != f.first {
			v.fail(ProblemMissing, f.name, line, f.first, fmt.Sprintf("the file's name says it starts at seq %d but its first record is seq %d", f.first, rl.seq))
			return false
		}
		if rl.seq == 1 && rl.prev != nil {
			v.fail(ProblemModified, f.name, line, 1, "the first record of the log has a prev")
			return false
		}
		if rl.seq > 1 && string(rl.kind) != string(KindRotate) {
			v.fail(ProblemMissingFile, f.name, line, 1, fmt.Sprintf("the log starts at seq %d with a %s record, not with seq 1 or a rotate record", rl.seq, rl.kind))
			return false
		}
		v.rep.FirstSeq = rl.seq
	} else {
		exp := v.expect()
		switch {
		case rl.seq > exp && firstOfFile:
			prevName := ""
			if r, err := decodeRecord(b); err == nil {
				prevName = r.File
			}
			if prevName == v.prevFile {
				v.fail(ProblemTruncated, v.prevFile, v.prevLine, exp, fmt.Sprintf("%s missing from the end of %s (the next file links to seq %d)", seqRange(exp, rl.seq-1), v.prevFile, rl.seq-1))
				return false
			}
			v.fail(ProblemMissingFile, f.name, line, exp, fmt.Sprintf("%s missing: the file before %s (%s) was removed", seqRange(exp, rl.seq-1), f.name, prevName))
			return false
		case rl.seq > exp && seqLater(rest, exp):
			v.fail(ProblemReordered, f.name, line, rl.seq, fmt.Sprintf("seq %d comes before seq %d", rl.seq, exp))
			return false
		case rl.seq > exp:
			v.fail(ProblemMissing, f.name, line, exp, seqRange(exp, rl.seq-1)+" missing before this line")
			return false
		case rl.seq < exp:
			v.fail(ProblemInserted, f.name, line, rl.seq, fmt.Sprintf("seq %d appears again after seq %d", rl.seq, exp-1))
			return false
		case !bytes.Equal(rl.prev, v.prevHash):
			if firstOfFile {
				v.fail(ProblemTruncated, v.prevFile, v.prevLine, exp-1, fmt.Sprintf("%s does not link to the last record of %s: that file was cut or replaced", f.name, v.prevFile))
			} else {
				v.fail(ProblemModified, v.prevFile, v.prevLine, exp-1, fmt.Sprintf("the next record's prev does not match this record's hash: this record (or the next one) was changed and its hash recomputed"))
			}
			return false
		}
		if firstOfFile && string(rl.kind) != string(KindRotate) {
			v.fail(ProblemInserted, f.name, line, rl.seq, "a file that does not start with a rotate record")
			return false
		}
	}
	switch string(rl.kind) {
	case string(KindRotate):
		r, err := decodeRecord(b)
		if err != nil {
			v.fail(ProblemModified, f.name, line, rl.seq, "rotate record: "+err.Error())
			return false
		}
		if r.PrunedThrough > v.prunedThrough {
			v.prunedThrough = r.PrunedThrough
		}
		if v.started && firstOfFile && r.File != v.prevFile {
			v.fail(ProblemMissingFile, f.name, line, rl.seq, fmt.Sprintf("the rotate record names %s as the previous file, but it is %s", r.File, v.prevFile))
			return false
		}
	case string(KindSeal):
		if !v.seal(f, line, b, rl) {
			return false
		}
	}
	if !v.started || v.prevIsSeal {
		v.afterSeal = append(v.afterSeal[:0], b...)
	}
	v.prevIsSeal = string(rl.kind) == string(KindSeal)
	if v.prevIsSeal {
		if v.sealHashes == nil {
			v.sealHashes = map[uint64]sealSeen{}
		}
		v.sealHashes[v.lastSealIdx] = sealSeen{seq: rl.seq, hash: string(rl.hash)}
	}
	v.started = true
	v.rep.Records++
	v.rep.LastSeq = rl.seq
	v.prevHash = append(v.prevHash[:0], rl.hash...)
	v.rep.LastHash = string(v.prevHash)
	v.prevFile, v.prevLine = f.name, line
	return true
}

func decodeRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// seal checks a seal record: consecutive index and, with a key, its HMAC.
func (v *verifier) seal(f logFile, line int, b []byte, rl rawLine) bool {
	r, err := decodeRecord(b)
	if err != nil || r.SealIndex == nil {
		v.fail(ProblemModified, f.name, line, rl.seq, "seal record without a seal index")
		return false
	}
	idx := *r.SealIndex
	if v.rep.Seals > 0 && idx != v.lastSealIdx+1 {
		v.fail(ProblemBadSeal, f.name, line, rl.seq, fmt.Sprintf("seal %d follows seal %d: seals are missing or reordered", idx, v.lastSealIdx))
		return false
	}
	if v.rep.Seals == 0 && v.rep.FirstSeq == 1 && idx != 0 {
		v.fail(ProblemBadSeal, f.name, line, rl.seq, fmt.Sprintf("the first seal of a log that starts at seq 1 has index %d, not 0", idx))
		return false
	}
	if v.key != nil {
		k, ok := v.keyAt(idx)
		if !ok {
			v.fail(ProblemBadSeal, f.name, line, rl.seq, "seal index out of range")
			return false
		}
		want := sealMAC(k, rl.seq, idx, string(rl.prev))
		if !hmac.Equal([]byte(want), []byte(r.Seal)) {
			v.fail(ProblemBadSeal, f.name, line, rl.seq, fmt.Sprintf("seal %d does not verify with this key: the log up to here was rewritten or the key is another log's", idx))
			return false
		}
	}
	v.rep.Seals++
	v.lastSealIdx = idx
	v.lastSealSeq = rl.seq
	return true
}

// maxSealGap bounds how far keyAt evolves the key in one step, so that a forged index cannot
// make verification spin.
const maxSealGap = 1 << 26

// keyAt returns K_idx, evolving forward from the last key derived.
func (v *verifier) keyAt(idx uint64) ([]byte, bool) {
	if v.curKey == nil || idx < v.keyIdx {
		v.curKey, v.keyIdx = append([]byte(nil), v.key...), 0
	}
	if idx-v.keyIdx > maxSealGap {
		return nil, false
	}
	for v.keyIdx < idx {
		v.curKey = evolveKey(v.curKey)
		v.keyIdx++
	}
	return v.curKey, true
}

// checkState compares the end of the log with the seal key state: the state's key must
// derive from K_0, and its index must be one past the log's last seal.
func (v *verifier) checkState(path string) bool {
	b, err := readLogFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		v.fail(ProblemBadSeal, filepath.Base(path), 0, 0, "the seal key state file is missing, so a cut tail cannot be ruled out")
		return false
	}
	if err != nil {
		v.fail(ProblemBadSeal, filepath.Base(path), 0, 0, "read seal key state: "+err.Error())
		return false
	}
	idx, k, err := parseState(b)
	if err != nil {
		v.fail(ProblemBadSeal, filepath.Base(path), 0, 0, err.Error())
		return false
	}
	v.rep.SealEpoch = &idx
	want, ok := v.keyAt(idx)
	if !ok || !hmac.Equal(want, k) {
		v.fail(ProblemBadSeal, filepath.Base(path), 0, 0, fmt.Sprintf("the key state (seal %d) does not derive from this verification key: it was forged or belongs to another log", idx))
		return false
	}
	switch {
	case v.rep.Seals == 0 && idx == 0:
		v.note("no seal yet: the log is younger than one seal interval and was not closed")
	case v.rep.Seals == 0:
		v.fail(ProblemTruncated, "", 0, 0, fmt.Sprintf("the key state has passed %d seal(s) but the log holds none: the log was cut or replaced", idx))
		return false
	case v.lastSealIdx+1 < idx:
		v.fail(ProblemTruncated, v.prevFile, 0, v.lastSealSeq+1, fmt.Sprintf("the log's last seal is %d but the key state has passed seal %d: the tail after seq %d was cut", v.lastSealIdx, idx-1, v.lastSealSeq))
		return false
	case v.lastSealIdx == idx:
		v.note("the last seal is on disk but the key state was not yet advanced (a crash); the next Open advances it")
	case v.lastSealIdx > idx:
		v.fail(ProblemBadSeal, filepath.Base(path), 0, 0, fmt.Sprintf("the key state (seal %d) is behind the log's last seal %d: it was replaced by an older copy", idx, v.lastSealIdx))
		return false
	}
	// A log that still starts at seq 1 (no retention) holds every seal the key state has
	// passed: as many as the epoch, one more after a crash before the state advanced.
	if v.rep.FirstSeq == 1 {
		want := idx
		if v.rep.Seals > 0 && v.lastSealIdx == idx {
			want = idx + 1
		}
		if uint64(v.rep.Seals) != want {
			v.fail(ProblemTruncated, v.prevFile, 0, v.lastSealSeq+1, fmt.Sprintf("the log holds %d seal(s) but the key state's epoch is %d: seals were cut", v.rep.Seals, idx))
			return false
		}
	}
	return true
}

// sumWith is sum using h (reset first).
func (rl *rawLine) sumWith(h hash.Hash, dst []byte) []byte {
	h.Reset()
	if len(rl.prev) == 64 {
		var raw [32]byte
		hex.Decode(raw[:], rl.prev) //nolint:errcheck // checked by isHex in splitLine
		h.Write(raw[:])
	}
	h.Write(rl.body)
	h.Write([]byte{'}'})
	var s [32]byte
	return hex.AppendEncode(dst, h.Sum(s[:0]))
}

// seqRange describes the records a..b.
func seqRange(a, b uint64) string {
	if a == b {
		return fmt.Sprintf("record %d is", a)
	}
	return fmt.Sprintf("records %d..%d are", a, b)
}

// readInto reads the file at path (see openForReading) into buf (grown when too small) and
// returns the bytes and the file's status.
func readInto(path string, buf []byte) ([]byte, fs.FileInfo, error) {
	f, fi, err := openForReading(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	n := int(fi.Size())
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	got, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, err
	}
	return buf[:got], fi, nil
}

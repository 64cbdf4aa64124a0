package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// WitnessSeal is one seal as a witness outside the log saw it when it was written.
type WitnessSeal struct {
	Index uint64 // the seal index i
	Seq   uint64 // the seal record's seq
	Hash  string // the seal record's hash: the chain head once the seal was written
}

// WitnessSource gives the seals a witness outside the log directory saw for the log in dir.
type WitnessSource interface {
	// Name says what the witness is, for reports ("journal").
	Name() string
	// Seals returns the seals witnessed for the log in dir, in any order.
	Seals(ctx context.Context, dir string) ([]WitnessSeal, error)
}

// Witness is what VerifyWith found comparing the log with a witness.
type Witness struct {
	Source    string  `json:"source"`
	Seals     int     `json:"seals"`                // seals the witness saw for this log
	LastIndex *uint64 `json:"last_index,omitempty"` // the highest seal index it saw
	Matched   int     `json:"matched"`              // of those, seals the log still holds with the same hash
	Pruned    int     `json:"pruned,omitempty"`     // seals older than the log's first (removed by retention)
}

// ErrNoWitness is returned by a WitnessSource that cannot be read at all (no journal).
var ErrNoWitness = errors.New("the witness is not available")

// witness compares the log's seals with the witness's; false means a problem was found.
func (v *verifier) witness(src WitnessSource) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := filepath.Abs(v.rep.Dir)
	if err != nil {
		dir = v.rep.Dir
	}
	seals, err := src.Seals(ctx, dir)
	w := &Witness{Source: src.Name()}
	v.rep.Witness = w
	if err != nil {
		v.fail(ProblemBadSeal, "", 0, 0, fmt.Sprintf("the %s witness cannot be read: %v", src.Name(), err))
		return false
	}
	w.Seals = len(seals)
	var first uint64 = 0
	haveFirst := false
	for idx := range v.sealHashes {
		if !haveFirst || idx < first {
			first, haveFirst = idx, true
		}
	}
	var worst *WitnessSeal
	for i := range seals {
		s := &seals[i]
		if w.LastIndex == nil || s.Index > *w.LastIndex {
			x := s.Index
			w.LastIndex = &x
		}
		got, ok := v.sealHashes[s.Index]
		switch {
		case ok && got.hash == s.Hash && got.seq == s.Seq:
			w.Matched++
		case ok:
			v.fail(ProblemBadSeal, "", 0, got.seq, fmt.Sprintf("seal %d is seq %d hash %s in the log but the %s witness saw seq %d hash %s: the log was replaced by another chain", s.Index, got.seq, got.hash, src.Name(), s.Seq, s.Hash))
			return false
		case haveFirst && s.Index < first, !haveFirst && v.rep.FirstSeq > 1 && s.Seq < v.rep.FirstSeq:
			w.Pruned++
		default:
			if worst == nil || s.Index > worst.Index {
				worst = s
			}
		}
	}
	if worst != nil {
		last := "holds no seal"
		if v.rep.Seals > 0 {
			last = fmt.Sprintf("ends at seal %d (seq %d)", v.lastSealIdx, v.lastSealSeq)
		}
		v.fail(ProblemTruncated, "", 0, worst.Seq, fmt.Sprintf("the %s witness saw seal %d (seq %d, hash %s) but the log %s: the log directory was rolled back to an earlier copy or its tail was cut", src.Name(), worst.Index, worst.Seq, worst.Hash, last))
		return false
	}
	return true
}

// JournalWitness reads the seals the journald mirror recorded (journalFields), with
// journalctl. Only entries journald itself stamped with the uid that owns the log
// directory count (_UID, a field no sender can set), so another user cannot plant seals.
type JournalWitness struct {
	// Journalctl is the journalctl executable; empty means "journalctl" from PATH.
	Journalctl string
	// Directory, when set, reads the journal files in this directory (journalctl
	// --directory) instead of the system's journal.
	Directory string
}

// Name returns "journal".
func (JournalWitness) Name() string { return "journal" }

// Seals runs journalctl for the mirror's seal entries of dir and returns them. It returns
// an error wrapping ErrNoWitness when journalctl cannot run or finds no journal.
func (j JournalWitness) Seals(ctx context.Context, dir string) ([]WitnessSeal, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("audit log directory: %w", err)
	}
	owner, ok := fileOwner(fi)
	if !ok {
		return nil, fmt.Errorf("owner of %s: %w", dir, ErrUnsupported)
	}
	bin := j.Journalctl
	if bin == "" {
		bin = "journalctl"
	}
	args := []string{"--output=json", "--no-pager", "--quiet", "--all"}
	if j.Directory != "" {
		args = append(args, "--directory="+j.Directory)
	}
	args = append(args, "MESSAGE_ID="+JournalMessageID, "SCODE_KIND=seal", "SCODE_LOG_DIR="+dir, "_UID="+strconv.FormatUint(uint64(owner), 10))
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: journalctl: %v: %s", ErrNoWitness, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return parseJournalSeals(out, dir, owner)
}

// parseJournalSeals reads journalctl's JSON lines (journalctl(1) --output=json; every value
// a string) and keeps the seal entries of dir written by uid.
func parseJournalSeals(out []byte, dir string, uid uint32) ([]WitnessSeal, error) {
	var seals []WitnessSeal
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("journalctl output: %w", err)
		}
		str := func(k string) string { s, _ := e[k].(string); return s }
		if str("MESSAGE_ID") != JournalMessageID || str("SCODE_KIND") != string(KindSeal) || str("SCODE_LOG_DIR") != dir || str("_UID") != strconv.FormatUint(uint64(uid), 10) {
			continue
		}
		idx, err1 := strconv.ParseUint(str("SCODE_SEAL_INDEX"), 10, 64)
		seq, err2 := strconv.ParseUint(str("SCODE_SEQ"), 10, 64)
		if err1 != nil || err2 != nil || str("SCODE_HASH") == "" {
			continue
		}
		seals = append(seals, WitnessSeal{Index: idx, Seq: seq, Hash: str("SCODE_HASH")})
	}
	return seals, sc.Err()
}

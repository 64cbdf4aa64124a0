package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Filter selects records for review. A zero field selects everything.
type Filter struct {
	Since     time.Time // records at or after this time
	Until     time.Time // records before this time
	UID       *uint32   // the peer's uid
	Kinds     []Kind    // any of these kinds
	Decision  string    // the record's decision (see Decision)
	Rule      string    // a rule id among the helper's or the client's findings
	Helper    string    // "user" or "root"
	Text      string    // case-insensitive substring of command, cwd, workspace, reason, request id or executable
	RequestID string    // exact request id
}

// Decision returns a record's decision: the helper's verdict when it has one, else the
// client's, else "deny" for a denied record and "" otherwise.
func Decision(r *Record) string {
	switch {
	case r.Verdict != nil && r.Verdict.Decision != "":
		return r.Verdict.Decision
	case r.Client != nil && r.Client.Decision != "":
		return r.Client.Decision
	case r.Kind == KindDenied:
		return "deny"
	}
	return ""
}

// Rules returns the rule ids of a record's helper and client verdicts, without repeats.
func Rules(r *Record) []string {
	var out []string
	for _, v := range []*VerdictSummary{r.Verdict, r.Client} {
		if v == nil {
			continue
		}
		for _, id := range v.Rules {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// Match reports whether r passes every field of f.
func (f *Filter) Match(r *Record) bool {
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !r.Time.Before(f.Until) {
		return false
	}
	if f.UID != nil && (r.Peer == nil || r.Peer.UID != *f.UID) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, r.Kind) {
		return false
	}
	if f.Decision != "" && !strings.EqualFold(Decision(r), f.Decision) {
		return false
	}
	if f.Rule != "" && !slices.Contains(Rules(r), f.Rule) {
		return false
	}
	if f.Helper != "" && r.Helper != f.Helper {
		return false
	}
	if f.RequestID != "" && r.RequestID != f.RequestID {
		return false
	}
	if f.Text != "" {
		t := strings.ToLower(f.Text)
		hay := []string{r.Command, r.Cwd, r.Workspace, r.Reason, r.RequestID}
		if r.Peer != nil {
			hay = append(hay, r.Peer.Exe)
		}
		found := false
		for _, h := range hay {
			if strings.Contains(strings.ToLower(h), t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ErrStop may be returned by a Read or Follow callback to end the walk without an error.
var ErrStop = errors.New("stop reading")

// RecordError reports a line of a log file that is not a record.
type RecordError struct {
	File string
	Line int
	Err  error
}

// Error returns "FILE:LINE: not an audit record: CAUSE".
func (e *RecordError) Error() string {
	return fmt.Sprintf("%s:%d: not an audit record: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the decoding error.
func (e *RecordError) Unwrap() error { return e.Err }

// Read calls fn with each record of the log in dir that f matches, in chain order. It does
// not verify the chain (Verify does); a torn final line is skipped, any other line that is
// not a record is a *RecordError. A callback error other than ErrStop is returned.
func Read(dir string, f Filter, fn func(*Record) error) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("audit log directory: %w", err)
	}
	files, err := listFiles(dir)
	if err != nil {
		return err
	}
	for _, lf := range files {
		data, err := readLogFile(filepath.Join(dir, lf.name))
		if err != nil {
			return fmt.Errorf("read %s: %w", lf.name, err)
		}
		if _, _, err := eachRecord(lf.name, data, 0, func(r *Record) error {
			if f.Match(r) {
				return fn(r)
			}
			return nil
		}); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// eachRecord decodes the whole lines of data (a file's bytes after its line number line)
// and returns the offset after the last whole line decoded and the number of that line.
func eachRecord(name string, data []byte, line int, fn func(*Record) error) (int, int, error) {
	off := 0
	for {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return off, line, nil
		}
		var r Record
		if err := json.Unmarshal(data[off:off+nl], &r); err != nil {
			return off, line, &RecordError{File: name, Line: line + 1, Err: err}
		}
		line++
		off += nl + 1
		if err := fn(&r); err != nil {
			return off, line, err
		}
	}
}

// Follow calls fn with each record f matches whose seq is greater than after, then keeps
// polling the log every interval for new records (across rotation) until ctx is done or fn
// returns an error. It returns nil when ctx ends or fn returns ErrStop.
func Follow(ctx context.Context, dir string, after uint64, interval time.Duration, f Filter, fn func(*Record) error) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("audit log directory: %w", err)
	}
	var (
		curName string
		curOff  int64
		curLine int
		last    = after
	)
	for {
		files, err := listFiles(dir)
		if err != nil {
			return err
		}
		// Start with the file that holds last+1: the last file whose first seq is <= last+1.
		start := 0
		for i, lf := range files {
			if lf.first <= last+1 {
				start = i
			}
		}
		for _, lf := range files[min(start, len(files)):] {
			off, line := int64(0), 0
			if lf.name == curName {
				off, line = curOff, curLine
			}
			data, err := readFrom(filepath.Join(dir, lf.name), off)
			if err != nil {
				return err
			}
			n, line, err := eachRecord(lf.name, data, line, func(r *Record) error {
				if r.Seq <= last {
					return nil
				}
				last = r.Seq
				if f.Match(r) {
					return fn(r)
				}
				return nil
			})
			curName, curOff, curLine = lf.name, off+int64(n), line
			if err != nil {
				if errors.Is(err, ErrStop) {
					return nil
				}
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func readFrom(path string, off int64) ([]byte, error) {
	f, fi, err := openForReading(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) { // removed by retention meanwhile
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	if fi.Size() <= off {
		return nil, nil
	}
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && n < len(buf) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:n], nil
}

// Stats are counts of records over a period.
type Stats struct {
	Records    int            `json:"records"`
	ByKind     map[string]int `json:"by_kind"`
	ByDecision map[string]int `json:"by_decision"`
	ByRule     map[string]int `json:"by_rule"`
	ByUID      map[string]int `json:"by_uid"`
}

// NewStats returns empty Stats.
func NewStats() *Stats {
	return &Stats{ByKind: map[string]int{}, ByDecision: map[string]int{}, ByRule: map[string]int{}, ByUID: map[string]int{}}
}

// Add counts r. Decisions and rules are counted on the records that carry a verdict.
func (s *Stats) Add(r *Record) {
	s.Records++
	s.ByKind[string(r.Kind)]++
	if d := Decision(r); d != "" {
		s.ByDecision[d]++
	}
	for _, id := range Rules(r) {
		s.ByRule[id]++
	}
	if r.Peer != nil {
		s.ByUID[fmt.Sprint(r.Peer.UID)]++
	}
}

package filetools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Applied is one file a batch changed.
type Applied struct {
	Path     string `json:"path"`
	Revision string `json:"revision"` // the file's new revision
	Created  bool   `json:"created,omitempty"`
}

// Result is a successful apply_patch.
type Result struct {
	Turn    string    `json:"turn"`
	Applied []Applied `json:"applied"`
}

// Applier applies batches to one workspace and keeps their turn-undo records.
type Applier struct {
	Root  *wsfs.Root
	Turns *turns.Store

	// writer, when set (by tests, to inject faults), replaces Root for the batch's writes.
	writer fileWriter
}

// fileWriter is the one operation a batch's writes go through (wsfs.Root.WriteFile).
type fileWriter interface {
	WriteFile(p string, data []byte, opts wsfs.WriteOptions) error
}

// planned is one file of a batch after preflight.
type planned struct {
	f       *patch.File
	rel     string
	exists  bool
	info    wsfs.Info
	orig    []byte
	origSum [32]byte
	result  []byte
}

// ApprovalTarget returns the approval summary target of a batch: a JSON-encoded array of
// the complete (absolute) paths it would write, in request order. Paths that do not
// resolve inside the workspace are an error.
func ApprovalTarget(root *wsfs.Root, req *patch.Request) (string, error) {
	paths := make([]string, 0, len(req.Files))
	for _, f := range req.Files {
		rel, err := root.CheckWritable(f.Path)
		if err != nil {
			return "", err
		}
		paths = append(paths, root.Abs(rel))
	}
	b, err := json.Marshal(paths)
	if err != nil {
		return "", fmt.Errorf("encode approval target: %w", err)
	}
	return string(b), nil
}

func refuse(err error) *BatchError {
	return &BatchError{Code: Code(err), Message: err.Error(), Applied: []Applied{}, Err: err}
}

// Apply validates the whole batch (paths, revisions, aliases, edits, limits) before the first
// write, then writes file by file, each after a final revision check, and records each
// applied change in the turn's undo record. On failure it returns a *BatchError: before any
// write, nothing changed; during the writes, Applied lists exactly the files written and
// Failed the one that failed.
func (a *Applier) Apply(req *patch.Request, turn string) (*Result, error) {
	if err := turns.ValidID(turn); err != nil {
		return nil, refuse(err)
	}
	plan, err := a.preflight(req)
	if err != nil {
		return nil, refuse(err)
	}

	// The undo record is on disk, every entry pending, before the first write.
	rec, err := a.Turns.Load(turn)
	if errors.Is(err, turns.ErrNoTurn) {
		rec, err = &turns.Record{Turn: turn}, nil
	}
	if err != nil {
		return nil, refuse(err)
	}
	if rec.Undone {
		return nil, refuse(fmt.Errorf("turn %q was undone; use a new turn id: %w", turn, turns.ErrInvalidID))
	}
	prev := append([]turns.FileRecord(nil), rec.Files...)
	existed := len(prev) > 0
	for _, p := range plan {
		if bytes.Equal(p.orig, p.result) && p.exists {
			continue
		}
		sum := sha256.Sum256(p.result)
		if fr := rec.File(p.rel); fr != nil {
			// The file changed earlier in this turn: undo goes back to the turn's start.
			fr.Written, fr.State = hex.EncodeToString(sum[:]), turns.StatePending
			continue
		}
		rec.Files = append(rec.Files, turns.FileRecord{
			Path: p.rel, NewFile: !p.exists, Original: p.orig, Mode: p.info.Mode,
			Written: hex.EncodeToString(sum[:]), State: turns.StatePending,
		})
	}
	if err := a.Turns.Save(rec); err != nil {
		return nil, refuse(err)
	}

	res := &Result{Turn: turn, Applied: []Applied{}}
	var failure *BatchError
	written := map[string]bool{}
	for _, p := range plan {
		if bytes.Equal(p.orig, p.result) && p.exists {
			res.Applied = append(res.Applied, Applied{Path: p.rel, Revision: Revision(p.result)})
			continue
		}
		err := a.write(p)
		var de *wsfs.DurabilityError
		if err == nil || errors.As(err, &de) {
			written[p.rel] = true
			res.Applied = append(res.Applied, Applied{Path: p.rel, Revision: Revision(p.result), Created: !p.exists})
		}
		if err != nil {
			failure = &BatchError{Code: Code(err), Message: err.Error(), Applied: res.Applied, Failed: p.rel, Written: de != nil, Err: err}
			if failure.Code == "error" {
				failure.Code = "write_failed"
			}
			break
		}
	}

	// Finalize the record: written entries applied; the others back to what they were.
	final := rec.Files[:0]
	for _, fr := range rec.Files {
		if written[fr.Path] {
			fr.State = turns.StateApplied
			final = append(final, fr)
			continue
		}
		for _, old := range prev {
			if old.Path == fr.Path {
				final = append(final, old)
			}
		}
	}
	rec.Files = final
	var serr error
	if len(rec.Files) == 0 && !existed {
		serr = a.Turns.Delete(turn)
	} else {
		serr = a.Turns.Save(rec)
	}
	if failure != nil {
		return nil, failure
	}
	if serr != nil {
		return nil, &BatchError{Code: "record_failed", Message: "files written, but the undo record was not finalized (its entries stay pending; undo still checks them by content): " + serr.Error(), Applied: res.Applied, Err: serr}
	}
	return res, nil
}

func (a *Applier) write(p *planned) error {
	var w fileWriter = a.Root
	if a.writer != nil {
		w = a.writer
	}
	err := w.WriteFile(p.rel, p.result, wsfs.WriteOptions{
		Perm:         0o644,
		MkdirParents: !p.exists,
		MaxCheckSize: patch.MaxBytes,
		Check: func(cur []byte, info wsfs.Info) error {
			switch {
			case !p.exists && info.Exists:
				return fmt.Errorf("path %q: created by someone else since the preflight: %w", p.rel, ErrStale)
			case p.exists && !info.Exists:
				return fmt.Errorf("path %q: removed since the preflight: %w", p.rel, ErrStale)
			case p.exists && sha256.Sum256(cur) != p.origSum:
				return fmt.Errorf("path %q: changed since the preflight (now revision %s): %w", p.rel, Revision(cur), ErrStale)
			}
			return nil
		},
	})
	var de *wsfs.DurabilityError
	if err != nil && !errors.As(err, &de) && !errors.Is(err, ErrStale) {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return err
}

// preflight checks every path, revision, alias, edit and limit of the batch and computes
// every result, touching nothing.
func (a *Applier) preflight(req *patch.Request) ([]*planned, error) {
	plan := make([]*planned, 0, len(req.Files))
	byRel := map[string]*planned{}
	var snapshots, results int64
	for i := range req.Files {
		f := &req.Files[i]
		rel, err := a.Root.CheckWritable(f.Path)
		if err != nil {
			return nil, err
		}
		if other, ok := byRel[rel]; ok {
			return nil, &patch.Error{Path: f.Path, Msg: fmt.Sprintf("names the same file as %q", other.f.Path), Err: patch.ErrDuplicatePath}
		}
		p := &planned{f: f, rel: rel}
		data, info, err := a.Root.ReadFile(rel, patch.MaxBytes)
		switch {
		case err == nil:
			p.exists, p.info, p.orig = true, info, data
		case errors.Is(err, wsfs.ErrNotExist):
		default:
			return nil, err
		}
		p.origSum = sha256.Sum256(p.orig)
		cur := hex.EncodeToString(p.origSum[:])
		switch {
		case f.New && p.exists:
			return nil, fmt.Errorf("path %q: exists (revision %s) but expected_revision is null (a new file); read it and send its revision: %w", f.Path, cur[:16], ErrStale)
		case !f.New && !p.exists:
			return nil, fmt.Errorf("path %q: does not exist, but an expected revision was given; use null to create it: %w", f.Path, ErrStale)
		case f.Revision != "" && f.Revision != cur[:16]:
			return nil, fmt.Errorf("path %q: revision is %s, not the expected %s; read the file again: %w", f.Path, cur[:16], f.Revision, ErrStale)
		case f.SHA256 != "" && f.SHA256 != cur:
			return nil, fmt.Errorf("path %q: SHA-256 is %s, not the expected %s; read the file again: %w", f.Path, cur, f.SHA256, ErrStale)
		}
		snapshots += int64(len(p.orig))
		if snapshots > patch.MaxBytes {
			return nil, &patch.Error{Path: f.Path, Msg: fmt.Sprintf("the files of the batch total over %d bytes", patch.MaxBytes), Err: patch.ErrLimit}
		}
		byRel[rel] = p
		plan = append(plan, p)
	}
	if err := a.checkAliases(plan); err != nil {
		return nil, err
	}
	for _, p := range plan {
		out, err := p.f.Apply(p.orig)
		if err != nil {
			return nil, err
		}
		results += int64(len(out))
		if results > patch.MaxBytes {
			return nil, &patch.Error{Path: p.f.Path, Msg: fmt.Sprintf("the results of the batch total over %d bytes", patch.MaxBytes), Err: patch.ErrLimit}
		}
		p.result = out
	}
	return plan, nil
}

// checkAliases refuses two paths of one batch that are, or could become, the same file:
// names differing only in case where one is new (any volume) or where the directory folds
// case (probed with wsfs.Root.FoldsCase), and existing files with the same device and inode.
func (a *Applier) checkAliases(plan []*planned) error {
	for i, p := range plan {
		for _, q := range plan[:i] {
			if !strings.EqualFold(p.rel, q.rel) {
				continue
			}
			if !p.exists || !q.exists {
				return fmt.Errorf("paths %q and %q differ only in letter case; on a case-insensitive volume they are one file, so one batch may not create both: %w", q.rel, p.rel, ErrCaseAlias)
			}
			folds, err := a.Root.FoldsCase(p.rel)
			if err != nil {
				return err
			}
			if folds {
				return fmt.Errorf("paths %q and %q name one file on this case-insensitive volume: %w", q.rel, p.rel, ErrCaseAlias)
			}
		}
	}
	type key struct{ dev, ino uint64 }
	seen := map[key]string{}
	for _, p := range plan {
		if !p.exists {
			continue
		}
		k := key{p.info.Dev, p.info.Ino}
		if other, ok := seen[k]; ok {
			return fmt.Errorf("paths %q and %q are the same file (hard links: device %d, inode %d); edit it through one path: %w", other, p.rel, p.info.Dev, p.info.Ino, ErrHardLink)
		}
		seen[k] = p.rel
	}
	return nil
}

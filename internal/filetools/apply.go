package filetools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

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

	// commitHook, when set (by tests, to inject faults), is called for each file's commit
	// with the function that performs it; what it returns is taken as the commit's result.
	commitHook func(rel string, commit func() error) error
	// syncHook, when set (by tests), is called for each staged file's directory fsync with
	// the function that performs it; what it returns is taken as the fsync's result.
	syncHook func(rel string, sync func() error) error
}

// stageWorkers bounds the files staged at once: concurrent fsyncs let the file system
// commit them together.
const stageWorkers = 8

// planned is one file of a batch after preflight.
type planned struct {
	f         *patch.File
	rel       string
	exists    bool
	info      wsfs.Info
	orig      []byte
	origSum   [32]byte
	result    []byte
	resultSum [32]byte
}

// revision returns the revision of the file's new content.
func (p *planned) revision() string { return hex.EncodeToString(p.resultSum[:8]) }

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
	// The workspace lock covers preflight through the finalized record: another s-code
	// process neither changes a file between its check and its write nor rewrites the
	// turn record in between.
	unlock, err := a.Turns.Lock()
	if err != nil {
		return nil, refuse(err)
	}
	defer unlock()
	plan, err := a.preflight(req)
	if err != nil {
		return nil, refuse(err)
	}

	// Stage every file at once (temporary file written and fsync'd beside it) while the
	// undo record is saved; a file whose directory does not exist yet is staged later, in
	// order. Nothing is visible yet.
	var (
		staged    []*wsfs.Staged
		failedAt  int
		stageErr  error
		stageDone = make(chan struct{})
	)
	go func() {
		defer close(stageDone)
		staged, failedAt, stageErr = a.stageAll(plan)
	}()
	abortFrom := func(i int) {
		for j := i; j < len(staged); j++ {
			if staged[j] != nil {
				staged[j].Abort()
			}
		}
	}
	refuseStaged := func(err error) (*Result, error) {
		<-stageDone
		abortFrom(0)
		return nil, refuse(err)
	}

	// The undo record is on disk, every entry pending, before the first rename.
	rec, err := a.Turns.Load(turn)
	if errors.Is(err, turns.ErrNoTurn) {
		rec, err = &turns.Record{Turn: turn}, nil
	}
	if err != nil {
		return refuseStaged(err)
	}
	if rec.Undone {
		return refuseStaged(fmt.Errorf("turn %q was undone; use a new turn id: %w", turn, turns.ErrInvalidID))
	}
	prev := append([]turns.FileRecord(nil), rec.Files...)
	existed := len(prev) > 0
	var added []turns.FileRecord
	var origs [][]byte
	var sums [][32]byte
	for _, p := range plan {
		if bytes.Equal(p.orig, p.result) && p.exists {
			continue
		}
		if fr := rec.File(p.rel); fr != nil {
			// The file changed earlier in this turn: undo goes back to the turn's start.
			fr.Written, fr.State = hex.EncodeToString(p.resultSum[:]), turns.StatePending
			continue
		}
		added = append(added, turns.FileRecord{
			Path: p.rel, NewFile: !p.exists, Mode: p.info.Mode,
			Written: hex.EncodeToString(p.resultSum[:]), State: turns.StatePending,
		})
		sums = append(sums, p.origSum)
		var o []byte
		if p.exists {
			o = p.orig
			if o == nil {
				o = []byte{}
			}
		}
		origs = append(origs, o)
	}
	if len(added) > 0 {
		ptrs := make([]*turns.FileRecord, len(added))
		for i := range added {
			ptrs[i] = &added[i]
		}
		if err := a.Turns.SaveOriginals(turn, ptrs, origs, sums); err != nil {
			return refuseStaged(err)
		}
		rec.Files = append(rec.Files, added...)
	}
	if err := a.Turns.Save(rec); err != nil {
		return refuseStaged(err)
	}

	<-stageDone
	res := &Result{Turn: turn, Applied: []Applied{}}
	var failure *BatchError
	written := map[string]bool{}
	if stageErr != nil {
		abortFrom(0)
		failure = &BatchError{Code: Code(stageErr), Message: stageErr.Error() + " (nothing applied)", Applied: res.Applied, Failed: plan[failedAt].rel, Err: stageErr}
		if failure.Code == "error" {
			failure.Code = "write_failed"
		}
	}
	// Commit one file at a time, in request order: the final check and the rename. Each
	// file's directory fsync runs while the next file is checked and renamed, so the kernel
	// can commit several renames in one journal transaction; a failed fsync stops further
	// renames. Every fsync is waited for before Apply returns.
	type synced struct {
		i   int
		err error
	}
	syncs := make(chan synced, len(plan))
	inflight := 0
	syncErrs := make([]error, len(plan))
	syncFailed := -1
	collect := func(r synced) {
		inflight--
		if r.err == nil {
			return
		}
		syncErrs[r.i] = r.err
		if syncFailed < 0 || r.i < syncFailed {
			syncFailed = r.i
		}
	}
	for i, p := range plan {
		for ready := true; ready; {
			select {
			case r := <-syncs:
				collect(r)
			default:
				ready = false
			}
		}
		if failure != nil || syncFailed >= 0 {
			abortFrom(i)
			break
		}
		if bytes.Equal(p.orig, p.result) && p.exists {
			res.Applied = append(res.Applied, Applied{Path: p.rel, Revision: p.revision()})
			continue
		}
		st := staged[i]
		commit := func() error {
			if st == nil {
				opts := a.writeOptions(p)
				opts.MkdirParents = true
				return a.Root.WriteFile(p.rel, p.result, opts)
			}
			if err := st.Rename(); err != nil {
				return err
			}
			staged[i] = nil // the fsync goroutine owns it now
			inflight++
			go func() {
				var err error
				if a.syncHook != nil {
					err = a.syncHook(p.rel, st.Sync)
				} else {
					err = st.Sync()
				}
				syncs <- synced{i, err}
			}()
			return nil
		}
		var err error
		if a.commitHook != nil {
			err = a.commitHook(p.rel, commit)
		} else {
			err = commit()
		}
		var de *wsfs.DurabilityError
		errors.As(err, &de)
		if err != nil && de == nil && !errors.Is(err, ErrStale) {
			err = fmt.Errorf("%w: %w", ErrWrite, err)
		}
		if de != nil {
			syncErrs[i] = err
		}
		if err == nil || de != nil {
			written[p.rel] = true
			res.Applied = append(res.Applied, Applied{Path: p.rel, Revision: p.revision(), Created: !p.exists})
		}
		if err != nil {
			abortFrom(i)
			failure = &BatchError{Code: Code(err), Message: err.Error(), Applied: res.Applied, Failed: p.rel, Written: de != nil, Err: err}
			if failure.Code == "error" {
				failure.Code = "write_failed"
			}
		}
	}
	for inflight > 0 {
		collect(<-syncs)
	}
	var unconfirmed []string
	for i, err := range syncErrs {
		if err != nil {
			unconfirmed = append(unconfirmed, plan[i].rel)
		}
	}
	if syncFailed >= 0 && failure == nil {
		err := syncErrs[syncFailed]
		failure = &BatchError{Code: Code(err), Message: err.Error(), Applied: res.Applied, Failed: plan[syncFailed].rel, Written: true, Err: err}
	}
	if failure != nil {
		failure.Unconfirmed = unconfirmed
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
		// Not waiting for the disk is safe here: after a crash the durable pending form
		// comes back, and undo checks pending entries by content.
		serr = a.Turns.Update(rec)
	}
	if failure != nil {
		return nil, failure
	}
	if serr != nil {
		return nil, &BatchError{Code: "record_failed", Message: "files written, but the undo record was not finalized (its entries stay pending; undo still checks them by content): " + serr.Error(), Applied: res.Applied, Err: serr}
	}
	return res, nil
}

// writeOptions returns the options of p's write, with its final revision check: the file
// must still hold exactly the bytes preflight read (or still be absent).
func (a *Applier) writeOptions(p *planned) wsfs.WriteOptions {
	return wsfs.WriteOptions{
		Perm:         0o644,
		MaxCheckSize: patch.MaxBytes,
		Check: func(cur []byte, info wsfs.Info) error {
			switch {
			case !p.exists && info.Exists:
				return fmt.Errorf("path %q: created by someone else since the preflight: %w", p.rel, ErrStale)
			case p.exists && !info.Exists:
				return fmt.Errorf("path %q: removed since the preflight: %w", p.rel, ErrStale)
			case p.exists && !bytes.Equal(cur, p.orig):
				return fmt.Errorf("path %q: changed since the preflight (now revision %s): %w", p.rel, Revision(cur), ErrStale)
			}
			return nil
		},
	}
}

// stageAll stages the changed files of plan concurrently (at most stageWorkers at once). A
// new file whose directory is missing is left nil, to be written in order. On failure it
// returns the error of the first failing file in plan order and its index; the caller
// aborts what was staged.
func (a *Applier) stageAll(plan []*planned) ([]*wsfs.Staged, int, error) {
	staged := make([]*wsfs.Staged, len(plan))
	errs := make([]error, len(plan))
	sem := make(chan struct{}, stageWorkers)
	var wg sync.WaitGroup
	for i, p := range plan {
		if bytes.Equal(p.orig, p.result) && p.exists {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := a.Root.StageUnsynced(p.rel, p.result, a.writeOptions(p))
			if err != nil && !p.exists && errors.Is(err, wsfs.ErrNotExist) {
				return // its directory is made when its turn comes
			}
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrWrite, err)
			}
			staged[i], errs[i] = st, err
		}()
	}
	wg.Wait()
	// Then fsync them together, so that their journal commits can be shared.
	for i, st := range staged {
		if st == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := st.SyncTemp(); err != nil {
				errs[i] = fmt.Errorf("%w: %w", ErrWrite, err)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return staged, i, err
		}
	}
	return staged, -1, nil
}

// preflight checks every path, revision, alias, edit and limit of the batch and computes
// every result, touching nothing. Files are read and edited on up to 4 goroutines; errors
// are reported for the first failing file in request order.
func (a *Applier) preflight(req *patch.Request) ([]*planned, error) {
	plan := make([]*planned, 0, len(req.Files))
	byRel := map[string]*planned{}
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
		byRel[rel] = p
		plan = append(plan, p)
	}

	// Read every file. The budget stops reading once the snapshots pass the limit, so
	// memory stays bounded whatever the batch names.
	errs := make([]error, len(plan))
	var budget atomic.Int64
	errLimit := func(p *planned, what string) error {
		return &patch.Error{Path: p.f.Path, Msg: fmt.Sprintf("the %s of the batch total over %d bytes", what, patch.MaxBytes), Err: patch.ErrLimit}
	}
	forEach(len(plan), func(i int) {
		p := plan[i]
		if budget.Load() > patch.MaxBytes {
			errs[i] = errLimit(p, "files")
			return
		}
		data, info, err := a.Root.ReadFile(p.rel, patch.MaxBytes)
		switch {
		case err == nil:
			p.exists, p.info, p.orig = true, info, data
			budget.Add(int64(len(data)))
		case !errors.Is(err, wsfs.ErrNotExist):
			errs[i] = err
			return
		}
		p.origSum = sha256.Sum256(p.orig)
	})
	var snapshots int64
	for i, p := range plan {
		if errs[i] != nil {
			return nil, errs[i]
		}
		f, cur := p.f, hex.EncodeToString(p.origSum[:])
		switch {
		case f.New && p.exists:
			return nil, &StaleError{Path: f.Path, Current: cur[:16], ExpectedNew: true, msg: fmt.Sprintf("path %q: exists (revision %s) but expected_revision is null (a new file); read it and send its revision", f.Path, cur[:16])}
		case !f.New && !p.exists:
			return nil, &StaleError{Path: f.Path, Missing: true, msg: fmt.Sprintf("path %q: does not exist, but an expected revision was given; use null to create it", f.Path)}
		case f.Revision != "" && f.Revision != cur[:16]:
			return nil, fmt.Errorf("path %q: revision is %s, not the expected %s; read the file again: %w", f.Path, cur[:16], f.Revision, ErrStale)
		case f.SHA256 != "" && f.SHA256 != cur:
			return nil, fmt.Errorf("path %q: SHA-256 is %s, not the expected %s; read the file again: %w", f.Path, cur, f.SHA256, ErrStale)
		}
		snapshots += int64(len(p.orig))
		if snapshots > patch.MaxBytes {
			return nil, errLimit(p, "files")
		}
	}
	if err := a.checkAliases(plan); err != nil {
		return nil, err
	}

	// Compute every result.
	forEach(len(plan), func(i int) {
		p := plan[i]
		out, err := p.f.Apply(p.orig)
		if err != nil {
			errs[i] = err
			return
		}
		p.result, p.resultSum = out, sha256.Sum256(out)
	})
	var results int64
	for i, p := range plan {
		if errs[i] != nil {
			return nil, errs[i]
		}
		results += int64(len(p.result))
		if results > patch.MaxBytes {
			return nil, errLimit(p, "results")
		}
	}
	return plan, nil
}

// forEach calls f(0) … f(n-1) on up to 4 goroutines (at most GOMAXPROCS) and waits.
func forEach(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), 4, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
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

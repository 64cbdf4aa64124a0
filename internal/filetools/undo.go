package filetools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Skipped is a file undo left alone, with the reason.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// UndoResult is what undo did to a turn's files.
type UndoResult struct {
	Turn     string    `json:"turn"`
	Restored []string  `json:"restored"` // rewritten with their bytes from before the turn
	Deleted  []string  `json:"deleted"`  // created by the turn, removed
	Skipped  []Skipped `json:"skipped"`  // changed since the turn, or never written
}

// Undo reverts turn (the latest undoable turn of the workspace when turn is ""): each file
// whose current content is still what the turn wrote gets its original bytes back (files
// the turn created are deleted); a file changed since is left alone and reported in
// Skipped. The record is then marked undone (a second undo of it is refused). The error wraps
// turns.ErrNoTurn when there is nothing to undo, ErrNotUndone when a file was skipped as
// changed or failed. It holds the workspace lock (turns.Store.Lock) throughout.
func Undo(root *wsfs.Root, store *turns.Store, turn string) (*UndoResult, error) {
	unlock, err := store.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var rec *turns.Record
	if turn == "" {
		rec, err = store.Latest()
	} else {
		rec, err = store.Load(turn)
	}
	if err != nil {
		return nil, err
	}
	if rec.Undone {
		return nil, fmt.Errorf("turn %q was already undone: %w", rec.Turn, turns.ErrNoTurn)
	}
	res := &UndoResult{Turn: rec.Turn, Restored: []string{}, Deleted: []string{}, Skipped: []Skipped{}}
	var failed []error
	for i := len(rec.Files) - 1; i >= 0; i-- {
		fr := rec.Files[i]
		original, oerr := store.Original(&fr)
		if oerr != nil {
			res.Skipped = append(res.Skipped, Skipped{fr.Path, oerr.Error()})
			failed = append(failed, oerr)
			continue
		}
		origSum := sha256.Sum256(original)
		check := func(cur []byte, info wsfs.Info) error {
			sum := sha256.Sum256(cur)
			if !info.Exists || hex.EncodeToString(sum[:]) != fr.Written {
				return fmt.Errorf("path %q: changed since the turn: %w", fr.Path, ErrStale)
			}
			return nil
		}
		cur, _, rerr := root.ReadFile(fr.Path, patch.MaxBytes)
		curSum := sha256.Sum256(cur)
		switch {
		case errors.Is(rerr, wsfs.ErrNotExist) && fr.NewFile:
			res.Skipped = append(res.Skipped, Skipped{fr.Path, "already gone"})
			continue
		case errors.Is(rerr, wsfs.ErrNotExist):
			res.Skipped = append(res.Skipped, Skipped{fr.Path, "deleted since the turn; left alone"})
			failed = append(failed, fmt.Errorf("path %q: deleted since the turn", fr.Path))
			continue
		case rerr != nil:
			res.Skipped = append(res.Skipped, Skipped{fr.Path, rerr.Error()})
			failed = append(failed, rerr)
			continue
		case hex.EncodeToString(curSum[:]) == fr.Written:
		case fr.State == turns.StatePending && !fr.NewFile && curSum == origSum:
			res.Skipped = append(res.Skipped, Skipped{fr.Path, "never written by the turn"})
			continue
		default:
			res.Skipped = append(res.Skipped, Skipped{fr.Path, fmt.Sprintf("changed since the turn (now revision %s); left alone", Revision(cur))})
			failed = append(failed, fmt.Errorf("path %q: changed since the turn", fr.Path))
			continue
		}
		var werr error
		if fr.NewFile {
			werr = root.Remove(fr.Path, wsfs.WriteOptions{Check: check, MaxCheckSize: patch.MaxBytes})
		} else {
			werr = root.WriteFile(fr.Path, original, wsfs.WriteOptions{Perm: fr.Mode, Check: check, MaxCheckSize: patch.MaxBytes})
		}
		var de *wsfs.DurabilityError
		switch {
		case werr == nil || errors.As(werr, &de):
			if fr.NewFile {
				res.Deleted = append(res.Deleted, fr.Path)
			} else {
				res.Restored = append(res.Restored, fr.Path)
			}
			if werr != nil {
				failed = append(failed, werr)
			}
		default:
			res.Skipped = append(res.Skipped, Skipped{fr.Path, werr.Error()})
			failed = append(failed, werr)
		}
	}
	rec.Undone = true
	if err := store.Save(rec); err != nil {
		return res, fmt.Errorf("mark turn %q undone: %w", rec.Turn, err)
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("turn %q: %w: %w", rec.Turn, ErrNotUndone, errors.Join(failed...))
	}
	return res, nil
}

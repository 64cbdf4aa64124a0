//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// MaxCheckEntries bounds the directory entries QuarantineGit reads in one workspace; past
// it the check stops with ErrCheckIncomplete (what it found so far is still quarantined).
const MaxCheckEntries = 500_000

// ErrCheckIncomplete means QuarantineGit stopped before it had read the whole workspace.
var ErrCheckIncomplete = errors.New("the post-run check of Git directories stopped early")

// QuarantineSuffix is inserted between a quarantined entry's name and the check's tag: a
// quarantined .git/hooks becomes .git/hooks.s-code-quarantine-TAG, a name Git never reads.
const QuarantineSuffix = ".s-code-quarantine-"

// Since returns the change-time mark of a command about to start: the first status-change
// time (ctime) of a file in dir that is later than the ctime the file got when created now.
// File times come from the kernel's coarse clock (one tick, 1 to 10 ms), so everything
// changed before Since was called has a ctime before the mark, and everything the command
// changes after Since returns has one at or after it. Waiting for the next tick costs half
// a tick on average. dir must exist and be writable (the profile's cache namespace).
func Since(dir string) (time.Time, error) {
	f, err := os.CreateTemp(dir, ".since-*")
	if err != nil {
		return time.Time{}, fmt.Errorf("post-run check mark: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return time.Time{}, fmt.Errorf("post-run check mark: fstat: %w", err)
	}
	first := time.Unix(st.Ctim.Unix())
	for range 400 {
		time.Sleep(100 * time.Microsecond)
		// fchmod(2) sets the ctime to the current time.
		if err := unix.Fchmod(fd, 0o600); err != nil {
			return time.Time{}, fmt.Errorf("post-run check mark: fchmod: %w", err)
		}
		if err := unix.Fstat(fd, &st); err != nil {
			return time.Time{}, fmt.Errorf("post-run check mark: fstat: %w", err)
		}
		if t := time.Unix(st.Ctim.Unix()); t.After(first) {
			return t, nil
		}
	}
	return time.Time{}, errors.New("post-run check mark: the file system clock did not advance in 40 ms")
}

// QuarantineGit is the post-run check of a workspace, run when no process of the command is
// left (the launcher's PID namespace is gone). It finds every Git directory in the
// workspace (a directory named .git, or one holding HEAD, objects and refs, as Git finds
// bare repositories; with the submodules in modules/ and the linked worktrees in
// worktrees/), and moves aside, by renaming it to NAME.s-code-quarantine-TAG in the same
// directory, every entry changed since the mark since (its ctime, or for a directory the
// ctime of anything beneath it, is at or after since; rename(2), link(2) and every write
// set the ctime, and no system call sets it back) that Git would read as configuration or
// indirection:
//
//   - the entries of gitControlNames (config, hooks, info, commondir, alternates, …);
//   - any other new entry at the top of a Git directory that is not one ordinary work
//     writes (gitWritableTop), since Git renames lock files into place there and a mount
//     cannot allow those and refuse new names;
//   - a rebase or sequencer to-do list with exec lines (rebase-merge, sequencer);
//   - a .git file or symbolic link (a gitdir: pointer) anywhere in the workspace.
//
// It returns the quarantined paths relative to the workspace, sorted. Symbolic links are
// never followed. It stops with ErrCheckIncomplete after MaxCheckEntries entries. An entry
// that cannot be renamed is removed; one that can be neither is an error.
func QuarantineGit(workspace string, since time.Time, tag string) ([]string, error) {
	c := &checker{ws: workspace, since: since, tag: tag}
	c.walk(workspace)
	slices.Sort(c.out)
	return c.out, errors.Join(c.errs...)
}

type checker struct {
	ws    string
	since time.Time
	tag   string
	seen  int
	full  bool
	out   []string
	errs  []error
}

// newer reports whether path (not followed) exists and changed at or after c.since.
func (c *checker) newer(path string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false
	}
	return !time.Unix(st.Ctim.Unix()).Before(c.since)
}

// changed reports whether path or anything beneath it changed at or after c.since.
func (c *checker) changed(path string) bool {
	if c.newer(path) {
		return true
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	entries, err := c.readDir(path)
	if err != nil {
		return true // unreadable: treat as changed (fail closed)
	}
	for _, e := range entries {
		if c.changed(filepath.Join(path, e.Name())) {
			return true
		}
	}
	return false
}

func (c *checker) readDir(dir string) ([]os.DirEntry, error) {
	if c.full {
		return nil, ErrCheckIncomplete
	}
	entries, err := os.ReadDir(dir)
	c.seen += len(entries)
	if c.seen > MaxCheckEntries {
		c.full = true
		c.errs = append(c.errs, fmt.Errorf("%w after %d entries (at %s)", ErrCheckIncomplete, MaxCheckEntries, dir))
		return nil, ErrCheckIncomplete
	}
	return entries, err
}

// walk looks for Git directories in dir and beneath it.
func (c *checker) walk(dir string) {
	entries, err := c.readDir(dir)
	if err != nil {
		if !errors.Is(err, ErrCheckIncomplete) && !errors.Is(err, os.ErrNotExist) {
			c.errs = append(c.errs, fmt.Errorf("post-run check: %w", err))
		}
		return
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	if dir != c.ws && gitShaped(filepath.Base(dir), names) {
		c.gitDir(dir, names)
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == ".git" && !e.IsDir():
			if c.newer(p) {
				c.quarantine(p) // a gitdir: pointer (or a link) the command wrote
			}
		case e.IsDir():
			c.walk(p)
		}
	}
}

// gitDir checks the Git directory dir, whose entries are names.
func (c *checker) gitDir(dir string, names []string) {
	for _, name := range names {
		p := filepath.Join(dir, name)
		switch {
		case slices.Contains(gitControlNames, name):
			if c.changed(p) {
				c.quarantine(p)
			}
		case name == "objects":
			for _, n := range gitControlNames {
				if rest, ok := strings.CutPrefix(n, "objects/"); ok {
					if q := filepath.Join(p, rest); c.changed(q) {
						c.quarantine(q)
					}
				}
			}
			// objects/info itself replaced by a link would lead the alternates elsewhere.
			if info := filepath.Join(p, "info"); isLink(info) && c.newer(info) {
				c.quarantine(info)
			}
		case name == "modules":
			if isLink(p) {
				if c.newer(p) {
					c.quarantine(p)
				}
				continue
			}
			c.walk(p)
		case name == "worktrees":
			if isLink(p) {
				if c.newer(p) {
					c.quarantine(p)
				}
				continue
			}
			entries, err := c.readDir(p)
			if err != nil {
				continue
			}
			for _, e := range entries {
				wt := filepath.Join(p, e.Name())
				if !e.IsDir() {
					if c.newer(wt) {
						c.quarantine(wt)
					}
					continue
				}
				sub, err := c.readDir(wt)
				if err != nil {
					continue
				}
				subNames := make([]string, len(sub))
				for i, s := range sub {
					subNames[i] = s.Name()
				}
				c.gitDir(wt, subNames)
			}
		case name == "rebase-merge" || name == "sequencer":
			for _, todo := range gitTodoFiles {
				if !strings.HasPrefix(todo, name+"/") {
					continue
				}
				tp := filepath.Join(dir, todo)
				if b, err := os.ReadFile(tp); err == nil && c.newer(tp) && todoRunsPrograms(string(b)) {
					c.quarantine(p)
				}
			}
		case gitWritableTop(name):
		default:
			if c.newer(p) {
				c.quarantine(p) // a new name at the top that ordinary work does not write
			}
		}
	}
}

func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// quarantine renames path aside (or removes it) and records it.
func (c *checker) quarantine(path string) {
	rel, err := filepath.Rel(c.ws, path)
	if err != nil {
		rel = path
	}
	if err := os.Rename(path, path+QuarantineSuffix+c.tag); err != nil {
		if err2 := os.RemoveAll(path); err2 != nil {
			c.errs = append(c.errs, fmt.Errorf("quarantine %s: %w", rel, errors.Join(err, err2)))
			return
		}
	}
	c.out = append(c.out, rel)
}

//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"io"
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
// never followed, in any component. It stops with ErrCheckIncomplete after MaxCheckEntries
// entries. An entry that cannot be renamed is an error.
func QuarantineGit(workspace string, since time.Time, tag string) ([]string, error) {
	ws, err := unix.Open(workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("post-run check: open workspace %s: %w", workspace, err)
	}
	defer unix.Close(ws)
	c := &checker{ws: workspace, wsfd: ws, since: since, tag: tag}
	c.walk(workspace)
	slices.Sort(c.out)
	return c.out, errors.Join(c.errs...)
}

// checker is one post-run check. Every path it touches is opened relative to the workspace
// descriptor wsfd without following a symbolic link (openBeneath), so that even a process
// that outlived the command (where there is no PID namespace) cannot lead it out of the
// workspace by swapping a directory for a link.
type checker struct {
	ws    string
	wsfd  int
	since time.Time
	tag   string
	seen  int
	full  bool
	out   []string
	errs  []error
}

// openDir opens the directory path (in the workspace) for reading, following no link.
func (c *checker) openDir(path string) (int, error) {
	rel, err := filepath.Rel(c.ws, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, fmt.Errorf("post-run check: %s lies outside the workspace", path)
	}
	return openBeneath(c.wsfd, rel)
}

// lstat reads the status of path without following a link in any component.
func (c *checker) lstat(path string, st *unix.Stat_t) error {
	dir, err := c.openDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return unix.Fstatat(dir, filepath.Base(path), st, unix.AT_SYMLINK_NOFOLLOW)
}

// newer reports whether path (not followed) exists and changed at or after c.since.
func (c *checker) newer(path string) bool {
	var st unix.Stat_t
	if err := c.lstat(path, &st); err != nil {
		return false
	}
	return !time.Unix(st.Ctim.Unix()).Before(c.since)
}

// isLink reports whether path is a symbolic link.
func (c *checker) isLink(path string) bool {
	var st unix.Stat_t
	return c.lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// changed reports whether path or anything beneath it changed at or after c.since.
func (c *checker) changed(path string) bool {
	if c.newer(path) {
		return true
	}
	var st unix.Stat_t
	if err := c.lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
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

// readFile returns the first 1 MiB of the regular file path, following no link.
func (c *checker) readFile(path string) ([]byte, error) {
	dir, err := c.openDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, filepath.Base(path), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

func (c *checker) readDir(dir string) ([]os.DirEntry, error) {
	if c.full {
		return nil, ErrCheckIncomplete
	}
	fd, err := c.openDir(dir)
	if err != nil {
		return nil, err
	}
	// Unsorted, with the types getdents(2) gives: no stat of each entry.
	d := os.NewFile(uintptr(fd), dir)
	entries, err := d.ReadDir(-1)
	d.Close()
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
			if info := filepath.Join(p, "info"); c.isLink(info) && c.newer(info) {
				c.quarantine(info)
			}
		case name == "modules":
			if c.isLink(p) {
				if c.newer(p) {
					c.quarantine(p)
				}
				continue
			}
			c.walk(p)
		case name == "worktrees":
			if c.isLink(p) {
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
				if b, err := c.readFile(tp); err == nil && c.newer(tp) && todoRunsPrograms(string(b)) {
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

// quarantine renames path aside in its own directory (renameat(2) relative to the
// directory opened without following links) and records it.
func (c *checker) quarantine(path string) {
	rel, err := filepath.Rel(c.ws, path)
	if err != nil {
		rel = path
	}
	dir, err := c.openDir(filepath.Dir(path))
	if err == nil {
		base := filepath.Base(path)
		err = unix.Renameat(dir, base, dir, base+QuarantineSuffix+c.tag)
		unix.Close(dir)
	}
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("quarantine %s: %w", rel, err))
		return
	}
	c.out = append(c.out, rel)
}

//go:build linux || darwin

package wsfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Root is a workspace opened as a directory handle. Every path it is given is resolved from
// that handle, never following a symlink in any component. A Root is safe for concurrent
// use; Close it when done.
type Root struct {
	fd   int    // directory handle on the workspace root, O_RDONLY|O_DIRECTORY
	path string // canonical absolute path of the root (symlinks in it resolved once, at Open)
	// given is the clean absolute path Open was given when it differs from path (it passes
	// through a symlink, e.g. /tmp -> /private/tmp): absolute paths under it are accepted too.
	given string

	// walkOnly, when set, makes resolution use the per-component O_NOFOLLOW walk instead of
	// openat2: set once openat2 reports ENOSYS (kernels before 5.6), or by tests.
	walkOnly atomic.Bool

	// syncDir syncs a directory descriptor; nil means fsync(2). Tests set it to inject a
	// failure of the directory sync alone.
	syncDir func(fd int) error

	// openat2Fn replaces openat2 when set (tests: a kernel without openat2).
	openat2Fn func(dirfd int, path string, flags int) (int, error)
}

// Open opens the directory dir as a workspace root. dir is made absolute and its own
// symlinks are resolved once (the root may live under a link such as /tmp -> /private/tmp);
// nothing below it is ever followed. Absolute paths are accepted under either form (see Rel).
// It returns an error when dir is not a directory.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	fd, err := unix.Open(canon, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: open: %w", canon, err)
	}
	r := &Root{fd: fd, path: canon}
	if abs != canon {
		r.given = abs
	}
	return r, nil
}

// Path returns the canonical absolute path of the workspace root.
func (r *Root) Path() string { return r.path }

// Close releases the directory handle.
func (r *Root) Close() error {
	if err := unix.Close(r.fd); err != nil {
		return fmt.Errorf("close workspace handle: %w", err)
	}
	return nil
}

// Rel returns p (relative to the root, or absolute inside it) as a clean relative path, or a
// *PathError when it is empty, contains NUL, names the root itself or leaves the root. An
// absolute p may start with the canonical root or with the path Open was given: both name
// the directory whose handle Open holds.
func (r *Root) Rel(p string) (string, error) {
	if r.given != "" && filepath.IsAbs(p) {
		if c := filepath.Clean(p); c == r.given || strings.HasPrefix(c, r.given+"/") {
			rest := c[len(r.given):]
			if strings.HasSuffix(p, "/") {
				rest += "/"
			}
			p = r.path + rest
		}
	}
	return cleanRel(r.path, p)
}

// Abs returns the complete path of the clean relative path rel.
func (r *Root) Abs(rel string) string { return r.path + "/" + rel }

// resolve opens rel (clean, relative, non-empty) beneath dirfd with flags, never following
// a symlink. Errors are *PathError where the cause is the path, naming p as given.
func (r *Root) resolve(dirfd int, p, rel string, flags int) (int, error) {
	if !r.walkOnly.Load() {
		open := openat2
		if r.openat2Fn != nil {
			open = r.openat2Fn
		}
		fd, err := open(dirfd, rel, flags)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS):
			r.walkOnly.Store(true)
		default:
			return -1, r.diagnose(dirfd, p, rel, err)
		}
	}
	return r.walk(dirfd, p, rel, flags)
}

// walk opens rel beneath dirfd one component at a time, each with O_NOFOLLOW, the way the
// kernel's RESOLVE_NO_SYMLINKS would.
func (r *Root) walk(dirfd int, p, rel string, flags int) (int, error) {
	comps := strings.Split(rel, "/")
	fd := dirfd
	closeFd := func() {
		if fd != dirfd {
			unix.Close(fd)
		}
	}
	for i, c := range comps {
		last := i == len(comps)-1
		fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		nfd, err := unix.Openat(fd, c, fl, 0)
		if err != nil {
			perr := classify(fd, p, c, last, err)
			closeFd()
			return -1, perr
		}
		closeFd()
		fd = nfd
	}
	return fd, nil
}

// diagnose turns an openat2 failure into a *PathError naming the component, by walking the
// path again with O_NOFOLLOW. The walk only explains: the refusal already happened.
func (r *Root) diagnose(dirfd int, p, rel string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
	default:
		return &PathError{Path: p, Reason: fmt.Sprintf("openat2: %v", err), Err: err}
	}
	fd, werr := r.walk(dirfd, p, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if werr != nil {
		return werr
	}
	unix.Close(fd)
	// The walk succeeded: the path changed between the two lookups.
	if errors.Is(err, unix.ENOENT) {
		return &PathError{Path: p, Reason: "does not exist", Err: ErrNotExist}
	}
	return &PathError{Path: p, Reason: fmt.Sprintf("was refused by openat2 (%v); a component changed during resolution", err), Err: ErrSymlink}
}

// classify explains why opening component c beneath dirfd failed.
func classify(dirfd int, p, c string, last bool, err error) error {
	var st unix.Stat_t
	if serr := unix.Fstatat(dirfd, c, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return &PathError{Path: p, Component: c, Reason: "is a symlink", Err: ErrSymlink}
		case !last && st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return &PathError{Path: p, Component: c, Reason: "is not a directory", Err: ErrNotRegular}
		}
	} else if errors.Is(serr, unix.ENOENT) {
		return &PathError{Path: p, Component: c, Reason: "does not exist", Err: ErrNotExist}
	}
	if errors.Is(err, unix.ELOOP) {
		return &PathError{Path: p, Component: c, Reason: "is a symlink", Err: ErrSymlink}
	}
	if errors.Is(err, unix.ENOENT) {
		return &PathError{Path: p, Component: c, Reason: "does not exist", Err: ErrNotExist}
	}
	return &PathError{Path: p, Component: c, Reason: fmt.Sprintf("cannot be opened: %v", err), Err: err}
}

// openDir opens the directory rel ("" for the root) beneath the root; with create, missing
// directories are made (0755) one at a time, each relative to its parent's handle, and
// returned (relative paths, in creation order) so that a failed write can remove them.
func (r *Root) openDir(p, rel string, create bool) (int, []string, error) {
	if rel == "" {
		fd, err := unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, nil, fmt.Errorf("openat workspace root: %w", err)
		}
		return fd, nil, nil
	}
	fd, err := r.resolve(r.fd, p, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err == nil || !create || !errors.Is(err, ErrNotExist) {
		return fd, nil, err
	}
	fd, err = unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("openat workspace root: %w", err)
	}
	var created []string
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		nfd, err := r.resolve(fd, p, c, unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, ErrNotExist) {
			merr := unix.Mkdirat(fd, c, 0o755)
			if merr == nil {
				created = append(created, strings.Join(comps[:i+1], "/"))
			} else if !errors.Is(merr, unix.EEXIST) {
				unix.Close(fd)
				r.removeDirs(created)
				return -1, nil, fmt.Errorf("path %q: mkdirat %q: %w", p, c, merr)
			}
			nfd, err = r.resolve(fd, p, c, unix.O_RDONLY|unix.O_DIRECTORY)
		}
		unix.Close(fd)
		if err != nil {
			r.removeDirs(created)
			return -1, nil, err
		}
		fd = nfd
	}
	return fd, created, nil
}

// removeDirs removes the directories a failed write created, deepest first, each only if
// still empty (unlinkat AT_REMOVEDIR), relative to its parent's handle. Best effort.
func (r *Root) removeDirs(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		dir, base := splitRel(created[i])
		pfd, _, err := r.openDir(created[i], dir, false)
		if err != nil {
			return
		}
		unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
		unix.Close(pfd)
	}
}

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Exists:  true,
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
		Mode:    uint32(st.Mode) & 0o777,
		Uid:     int(st.Uid),
		Gid:     int(st.Gid),
		Nlink:   uint64(st.Nlink),
		Size:    st.Size,
		ModTime: st.Mtim.Nano(),
	}
}

// readFd reads the regular file open on fd, refusing other kinds and files over max bytes.
// It closes fd. It reads with read(2) directly: an os.File would first try to register the
// (O_NONBLOCK) descriptor with the runtime's poller, a wasted system call per file.
func readFd(fd int, p string, max int64) ([]byte, Info, error) {
	return readFdInto(fd, p, max, nil)
}

// readFdInto is readFd reading into buf's storage when it is large enough.
func readFdInto(fd int, p string, max int64, buf []byte) ([]byte, Info, error) {
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, Info{}, fmt.Errorf("path %q: fstat: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, Info{}, &PathError{Path: p, Reason: "is not a regular file", Err: ErrNotRegular}
	}
	info := infoOf(&st)
	if max > 0 && st.Size > max {
		return nil, info, fmt.Errorf("path %q: %d bytes, over the limit of %d: %w", p, st.Size, max, ErrTooLarge)
	}
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	buf = buf[:0]
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, info, fmt.Errorf("path %q: read: %w", p, err)
		}
		buf = buf[:len(buf)+n]
		if max > 0 && int64(len(buf)) > max {
			return nil, info, fmt.Errorf("path %q: grew over the limit of %d bytes: %w", p, max, ErrTooLarge)
		}
		if n == 0 {
			break
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, info, nil
}

// ReadFile returns the bytes of the regular file p (relative to the root, or absolute inside
// it) and the fstat of the descriptor they were read from. Errors: *PathError wrapping
// ErrSymlink, ErrEscape, ErrInvalidPath, ErrNotExist or ErrNotRegular; ErrTooLarge when the
// file has more than max bytes (max <= 0: no limit).
func (r *Root) ReadFile(p string, max int64) ([]byte, Info, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, Info{}, err
	}
	fd, err := r.resolve(r.fd, p, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, Info{}, err
	}
	return readFd(fd, p, max)
}

// ReadFileInto is ReadFile reading into buf's storage when it is large enough (a search
// reading many files reuses one buffer). The returned slice may alias buf.
func (r *Root) ReadFileInto(p string, max int64, buf []byte) ([]byte, Info, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, Info{}, err
	}
	fd, err := r.resolve(r.fd, p, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, Info{}, err
	}
	return readFdInto(fd, p, max, buf)
}

// readAt reads base in the directory dirfd without following a symlink; a missing file
// gives Info{Exists: false} and no error.
func readAt(dirfd int, p, base string, max int64) ([]byte, Info, error) {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, Info{}, nil
	}
	if err != nil {
		return nil, Info{}, classify(dirfd, p, base, true, err)
	}
	return readFd(fd, p, max)
}

func (r *Root) protected(p, rel string) error {
	if c, ok := ProtectedComponent(rel); ok {
		return &PathError{Path: p, Component: c, Reason: "is protected (Git metadata or an agent/IDE control file); the file tools do not write it", Err: ErrProtected}
	}
	return nil
}

// CheckWritable returns an error when p may never be written by the file tools: an invalid
// or escaping path, or a protected component (see ProtectedComponent).
func (r *Root) CheckWritable(p string) (string, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return "", err
	}
	return rel, r.protected(p, rel)
}

func (r *Root) fsyncDir(fd int) error {
	if r.syncDir != nil {
		return r.syncDir(fd)
	}
	return unix.Fsync(fd)
}

// WriteFile replaces (or creates) the file p with data atomically: Stage, then Commit. A
// symlink at p is refused, never followed. If only the directory fsync fails, the returned
// error is a *DurabilityError: the file was written. Any other error means p is unchanged
// (and directories MkdirParents made for it are removed again).
func (r *Root) WriteFile(p string, data []byte, opts WriteOptions) error {
	st, err := r.Stage(p, data, opts)
	if err != nil {
		return err
	}
	return st.Commit()
}

// Staged is new content for one file, written and fsync'd under a temporary name in the
// file's directory, held by a handle on that directory until Commit or Abort.
type Staged struct {
	r       *Root
	p       string
	dfd     int
	base    string
	tmp     string   // temporary name, "" once renamed or removed
	tmpFile *os.File // the open temporary file until SyncTemp (StageUnsynced only)
	created []string // directories made for the file
	opts    WriteOptions
	done    bool
}

// Stage opens p's directory from the root handle (making missing directories with
// opts.MkdirParents), and writes data to a new temporary file there (0600 until the mode
// of the file it replaces, or opts.Perm, is set; owner kept when running as root), then
// fsyncs it. Nothing is visible at p until Commit. The caller must Commit or Abort.
func (r *Root) Stage(p string, data []byte, opts WriteOptions) (*Staged, error) {
	return r.stage(p, data, opts, false)
}

// StageUnsynced is Stage without the fsync: it starts the write-back of the temporary file
// (sync_file_range(2) on Linux) and leaves it open; SyncTemp must follow before Rename.
// Staging many files this way and then syncing them together lets the file system commit
// them in fewer journal transactions.
func (r *Root) StageUnsynced(p string, data []byte, opts WriteOptions) (*Staged, error) {
	return r.stage(p, data, opts, true)
}

func (r *Root) stage(p string, data []byte, opts WriteOptions, deferSync bool) (*Staged, error) {
	rel, err := r.CheckWritable(p)
	if err != nil {
		return nil, err
	}
	dir, base := splitRel(rel)
	dfd, created, err := r.openDir(p, dir, opts.MkdirParents)
	if err != nil {
		return nil, err
	}
	s := &Staged{r: r, p: p, dfd: dfd, base: base, created: created, opts: opts}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	uid, gid := -1, -1
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			perm, uid, gid = uint32(st.Mode)&0o777, int(st.Uid), int(st.Gid)
		case unix.S_IFLNK:
			s.Abort()
			return nil, &PathError{Path: p, Component: base, Reason: "is a symlink", Err: ErrSymlink}
		default:
			s.Abort()
			return nil, &PathError{Path: p, Reason: "is not a regular file", Err: ErrNotRegular}
		}
	}
	tmp, err := tempName()
	if err != nil {
		s.Abort()
		return nil, err
	}
	tfd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		s.Abort()
		return nil, fmt.Errorf("path %q: create temporary file: %w", p, err)
	}
	s.tmp = tmp
	f := os.NewFile(uintptr(tfd), tmp)
	fail := func(op string, err error) error {
		f.Close()
		s.Abort()
		return fmt.Errorf("path %q: %s: %w", p, op, err)
	}
	if uid >= 0 && os.Geteuid() == 0 {
		if err := unix.Fchown(tfd, uid, gid); err != nil {
			return nil, fail("fchown", err)
		}
	}
	if err := unix.Fchmod(tfd, perm); err != nil {
		return nil, fail("fchmod", err)
	}
	if _, err := f.Write(data); err != nil {
		return nil, fail("write", err)
	}
	s.tmpFile = f
	if deferSync {
		startWriteback(tfd)
		return s, nil
	}
	if err := s.SyncTemp(); err != nil {
		return nil, err
	}
	return s, nil
}

// SyncTemp fsyncs and closes the temporary file of a write staged with StageUnsynced
// (Stage does it itself). Rename refuses a staged write whose temporary file is not synced.
func (s *Staged) SyncTemp() error {
	if s.tmpFile == nil {
		return nil
	}
	f := s.tmpFile
	s.tmpFile = nil
	if err := f.Sync(); err != nil {
		f.Close()
		s.Abort()
		return fmt.Errorf("path %q: fsync: %w", s.p, err)
	}
	if err := f.Close(); err != nil {
		s.Abort()
		return fmt.Errorf("path %q: close: %w", s.p, err)
	}
	return nil
}

// Commit is Rename followed by Sync.
func (s *Staged) Commit() error {
	if err := s.Rename(); err != nil {
		return err
	}
	return s.Sync()
}

// Rename reads the file's current bytes through the directory handle, calls opts.Check
// with them, and renames the temporary file over the file (renameat(2) relative to the
// handle): from here on the new content is visible. A failed check or rename aborts the
// staged write and leaves the file unchanged. Sync must follow.
func (s *Staged) Rename() error {
	if s.done || s.tmp == "" {
		return fmt.Errorf("path %q: staged write already finished", s.p)
	}
	if s.tmpFile != nil {
		return fmt.Errorf("path %q: staged write not synced (SyncTemp)", s.p)
	}
	cur, info, err := readAt(s.dfd, s.p, s.base, s.opts.MaxCheckSize)
	if err != nil {
		s.Abort()
		return err
	}
	if s.opts.Check != nil {
		if err := s.opts.Check(cur, info); err != nil {
			s.Abort()
			return err
		}
	}
	if err := unix.Renameat(s.dfd, s.tmp, s.dfd, s.base); err != nil {
		s.Abort()
		return fmt.Errorf("path %q: renameat: %w", s.p, err)
	}
	s.tmp, s.created = "", nil
	return nil
}

// Sync fsyncs the directory after Rename, making the rename durable, and releases the
// directory handle. Its error is a *DurabilityError: the file was written, but may not
// survive a crash.
func (s *Staged) Sync() error {
	if s.done || s.tmp != "" {
		return fmt.Errorf("path %q: sync of a staged write that was not renamed", s.p)
	}
	defer s.Abort() // closes the directory handle
	if err := s.r.fsyncDir(s.dfd); err != nil {
		return &DurabilityError{Path: s.p, Err: err}
	}
	return nil
}

// Abort removes the temporary file and the directories made for it, and releases the
// directory handle. It does nothing after a Commit or a previous Abort.
func (s *Staged) Abort() {
	if s.done {
		return
	}
	s.done = true
	if s.tmpFile != nil {
		s.tmpFile.Close()
		s.tmpFile = nil
	}
	if s.tmp != "" {
		unix.Unlinkat(s.dfd, s.tmp, 0)
		s.tmp = ""
	}
	unix.Close(s.dfd)
	s.r.removeDirs(s.created)
}

// Remove deletes the file p after opts.Check (if set) accepts its current bytes, relative to
// the directory handle (unlinkat(2)), then fsyncs the directory. A symlink at p is refused.
// A *DurabilityError means the file was removed but the directory sync failed.
func (r *Root) Remove(p string, opts WriteOptions) error {
	rel, err := r.CheckWritable(p)
	if err != nil {
		return err
	}
	dir, base := splitRel(rel)
	dfd, _, err := r.openDir(p, dir, false)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	cur, info, err := readAt(dfd, p, base, opts.MaxCheckSize)
	if err != nil {
		return err
	}
	if !info.Exists {
		return &PathError{Path: p, Component: base, Reason: "does not exist", Err: ErrNotExist}
	}
	if opts.Check != nil {
		if err := opts.Check(cur, info); err != nil {
			return err
		}
	}
	if err := unix.Unlinkat(dfd, base, 0); err != nil {
		return fmt.Errorf("path %q: unlinkat: %w", p, err)
	}
	if err := r.fsyncDir(dfd); err != nil {
		return &DurabilityError{Path: p, Err: err}
	}
	return nil
}

// FoldsCase reports whether the directory holding the existing file p looks names up
// case-insensitively (a macOS or Windows volume, an ext4 or tmpfs casefold directory). The
// probe stats p's last component with its letters' case swapped: the same inode means the
// directory folds case. A name without cased letters cannot tell and reports false.
func (r *Root) FoldsCase(p string) (bool, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return false, err
	}
	dir, base := splitRel(rel)
	swapped := swapCase(base)
	if swapped == base {
		return false, nil
	}
	dfd, _, err := r.openDir(p, dir, false)
	if err != nil {
		return false, err
	}
	defer unix.Close(dfd)
	var a, b unix.Stat_t
	if err := unix.Fstatat(dfd, base, &a, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, fmt.Errorf("path %q: fstatat: %w", p, err)
	}
	if err := unix.Fstatat(dfd, swapped, &b, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("path %q: fstatat %q: %w", p, swapped, err)
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, nil
}

func swapCase(s string) string {
	b := []rune(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func tempName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("temporary name: %w", err)
	}
	return ".s-code-" + hex.EncodeToString(b[:]) + ".tmp", nil
}

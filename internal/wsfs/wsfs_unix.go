//go:build linux || darwin

package wsfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

	// walkOnly, when set, makes resolution use the per-component O_NOFOLLOW walk instead of
	// openat2: set once openat2 reports ENOSYS (kernels before 5.6), or by tests.
	walkOnly atomic.Bool

	// syncDir syncs a directory descriptor; nil means fsync(2). Tests set it to inject a
	// failure of the directory sync alone.
	syncDir func(fd int) error
}

// Open opens the directory dir as a workspace root. dir is made absolute and its own
// symlinks are resolved once (the root may live under a link such as /tmp -> /private/tmp);
// nothing below it is ever followed. It returns an error when dir is not a directory.
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
	return &Root{fd: fd, path: canon}, nil
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
// *PathError when it is empty, contains NUL, names the root itself or leaves the root.
func (r *Root) Rel(p string) (string, error) { return cleanRel(r.path, p) }

// Abs returns the complete path of the clean relative path rel.
func (r *Root) Abs(rel string) string { return r.path + "/" + rel }

// resolve opens rel (clean, relative, non-empty) beneath dirfd with flags, never following
// a symlink. Errors are *PathError where the cause is the path, naming p as given.
func (r *Root) resolve(dirfd int, p, rel string, flags int) (int, error) {
	if !r.walkOnly.Load() {
		fd, err := openat2(dirfd, rel, flags)
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
// directories are made (0755) one at a time, each relative to its parent's handle.
func (r *Root) openDir(p, rel string, create bool) (int, error) {
	if rel == "" {
		fd, err := unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("openat workspace root: %w", err)
		}
		return fd, nil
	}
	fd, err := r.resolve(r.fd, p, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err == nil || !create || !errors.Is(err, ErrNotExist) {
		return fd, err
	}
	fd, err = unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("openat workspace root: %w", err)
	}
	for _, c := range strings.Split(rel, "/") {
		nfd, err := r.resolve(fd, p, c, unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, ErrNotExist) {
			if merr := unix.Mkdirat(fd, c, 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
				unix.Close(fd)
				return -1, fmt.Errorf("path %q: mkdirat %q: %w", p, c, merr)
			}
			nfd, err = r.resolve(fd, p, c, unix.O_RDONLY|unix.O_DIRECTORY)
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = nfd
	}
	return fd, nil
}

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Exists: true,
		Dev:    uint64(st.Dev),
		Ino:    uint64(st.Ino),
		Mode:   uint32(st.Mode) & 0o777,
		Uid:    int(st.Uid),
		Gid:    int(st.Gid),
		Nlink:  uint64(st.Nlink),
		Size:   st.Size,
	}
}

// readFd reads the regular file open on fd, refusing other kinds and files over max bytes.
func readFd(fd int, p string, max int64) ([]byte, Info, error) {
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
	f := os.NewFile(uintptr(fd), p)
	buf := make([]byte, 0, st.Size+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if max > 0 && int64(len(buf)) > max {
			return nil, info, fmt.Errorf("path %q: grew over the limit of %d bytes: %w", p, max, ErrTooLarge)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, info, fmt.Errorf("path %q: read: %w", p, err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	// f owns fd now; the caller must not close it again.
	f.Close()
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

// WriteFile replaces (or creates) the file p with data atomically: it opens p's directory
// from the root handle, calls opts.Check with the file's current bytes, writes a temporary
// file in that directory, fsyncs it, renames it over p relative to the directory handle
// (renameat(2)), and fsyncs the directory. A symlink at p is refused, never followed. If
// only the directory fsync fails, the returned error is a *DurabilityError: the file was
// written. Any other error means p is unchanged.
func (r *Root) WriteFile(p string, data []byte, opts WriteOptions) error {
	rel, err := r.CheckWritable(p)
	if err != nil {
		return err
	}
	dir, base := splitRel(rel)
	dfd, err := r.openDir(p, dir, opts.MkdirParents)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	cur, info, err := readAt(dfd, p, base, opts.MaxCheckSize)
	if err != nil {
		return err
	}
	if opts.Check != nil {
		if err := opts.Check(cur, info); err != nil {
			return err
		}
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	if info.Exists {
		perm = info.Mode
	}
	tmp, err := tempName()
	if err != nil {
		return err
	}
	tfd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return fmt.Errorf("path %q: create temporary file: %w", p, err)
	}
	fail := func(op string, err error) error {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("path %q: %s: %w", p, op, err)
	}
	f := os.NewFile(uintptr(tfd), tmp)
	if err := unix.Fchmod(tfd, perm); err != nil {
		f.Close()
		return fail("fchmod", err)
	}
	if info.Exists && os.Geteuid() == 0 {
		if err := unix.Fchown(tfd, info.Uid, info.Gid); err != nil {
			f.Close()
			return fail("fchown", err)
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail("write", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail("fsync", err)
	}
	if err := f.Close(); err != nil {
		return fail("close", err)
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return fail("renameat", err)
	}
	if err := r.fsyncDir(dfd); err != nil {
		return &DurabilityError{Path: p, Err: err}
	}
	return nil
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
	dfd, err := r.openDir(p, dir, false)
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
	dfd, err := r.openDir(p, dir, false)
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

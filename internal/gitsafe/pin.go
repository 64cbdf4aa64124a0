package gitsafe

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RuleChanged is the rule id of a repository whose layout changed while git ran: its result
// is discarded, because git may have read something Check did not see.
const RuleChanged = "git.layout-changed"

// pinned is the view of a checked repository that one git command gets. git reads its
// configuration from $GIT_COMMON_DIR/config (and $GIT_DIR/config.worktree), so those
// directories are private copies: the checked configuration bytes, and symbolic links to
// every other entry of the real directory. $GIT_DIR and $GIT_COMMON_DIR are given to git, so
// it never reads a .git file or a commondir file again. What git still reads through the
// links (objects, refs, alternates, info) is fingerprinted before and compared after the
// command (stamp): a change refuses the result with RuleChanged.
type pinned struct {
	tmp       string // the private directory, removed by release
	gitDir    string // $GIT_DIR for git
	commonDir string // $GIT_COMMON_DIR for git
	stamp     []byte // layoutStamp when checked
}

// pinLayout builds the private view of l in a new temporary directory (mode 0700).
func pinLayout(l layout) (*pinned, error) {
	tmp, err := os.MkdirTemp(pinParent(), "s-code-git-")
	if err != nil {
		return nil, fmt.Errorf("gitsafe: pin the repository: %w", err)
	}
	p := &pinned{tmp: tmp, gitDir: l.gitDir, stamp: l.stamp}
	p.commonDir = filepath.Join(tmp, "common")
	if err := mirrorDir(l.commonDir, p.commonDir, map[string][]byte{"config": l.config}, false); err != nil {
		p.release()
		return nil, err
	}
	if l.worktreeConfig {
		// config.worktree lives in the gitdir: pin the gitdir too. HEAD is copied, since git
		// refuses a gitdir whose HEAD is a symbolic link not into refs/.
		head, err := readRepoFile(filepath.Join(l.gitDir, "HEAD"))
		if err != nil {
			p.release()
			return nil, &LayoutError{Rule: RuleNotRepository, Path: filepath.Join(l.gitDir, "HEAD"), Reason: "cannot read HEAD", Err: err}
		}
		p.gitDir = filepath.Join(tmp, "git")
		files := map[string][]byte{"config.worktree": l.configWorktree, "HEAD": head}
		if l.gitDir == l.commonDir {
			files["config"] = l.config
		}
		if err := mirrorDir(l.gitDir, p.gitDir, files, true); err != nil {
			p.release()
			return nil, err
		}
	}
	return p, nil
}

// pinParent returns where the private views are made: a memory file system when there is
// one (creating a dozen links on a disk costs milliseconds), else the temporary directory.
// Each view is a fresh directory of mode 0700 with a random name (os.MkdirTemp).
func pinParent() string {
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/dev/shm"} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && unixWritable(d) {
			return d
		}
	}
	return os.TempDir()
}

// commonNames are the entries git looks up in $GIT_COMMON_DIR rather than $GIT_DIR (git's
// path.c common_list): only these need links in a pinned common dir. Per-worktree paths
// below them (logs/HEAD, refs/bisect …) are read from $GIT_DIR.
var commonNames = map[string]bool{
	"branches": true, "common": true, "config": true, "hooks": true, "info": true, "logs": true,
	"lost-found": true, "objects": true, "refs": true, "remotes": true, "worktrees": true,
	"rr-cache": true, "svn": true, "shallow": true, "packed-refs": true, "reftable": true,
	"modules": true,
}

// mirrorDir creates dst holding, for each name of files, a copy of its bytes (a nil value
// leaves the name absent), and a symbolic link to src/NAME for every other entry of src
// that git reads there (every entry when all, else the commonNames).
func mirrorDir(src, dst string, files map[string][]byte, all bool) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return fmt.Errorf("gitsafe: pin the repository: %w", err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return &LayoutError{Rule: RuleNotRepository, Path: src, Reason: "cannot list the git directory", Err: err}
	}
	for _, e := range ents {
		if _, ok := files[e.Name()]; ok || (!all && !commonNames[e.Name()]) {
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return fmt.Errorf("gitsafe: pin the repository: %w", err)
		}
	}
	for name, data := range files {
		if data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o600); err != nil {
			return fmt.Errorf("gitsafe: pin the repository: %w", err)
		}
	}
	return nil
}

// verify returns a *LayoutError with RuleChanged when the repository's layout differs from
// when it was pinned.
func (p *pinned) verify(l layout) error {
	now, err := layoutStamp(l)
	if err != nil || !bytes.Equal(now, p.stamp) {
		return &LayoutError{Rule: RuleChanged, Path: l.gitDir, Reason: "the repository's directories, links or alternates changed while git ran; its output is discarded", Err: err}
	}
	return nil
}

// release removes the private directory.
func (p *pinned) release() { os.RemoveAll(p.tmp) }

// stampNames are the entries of a gitdir whose identity the stamp records: what git reads
// through the pinned links and what names other places (gitrepository-layout(5)).
var stampNames = append([]string{"commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates", "worktrees", "modules"}, gitdirParts...)

// layoutStamp returns a fingerprint of where l's parts are: the device and inode of the
// gitdir and common dir and of each of their stampNames (not followed), the target of
// each symbolic link among them, and the SHA-256 of the small indirection files.
func layoutStamp(l layout) ([]byte, error) {
	var b bytes.Buffer
	for _, dir := range []string{l.gitDir, l.commonDir} {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, &LayoutError{Rule: RuleChanged, Path: dir, Reason: "cannot stat the git directory", Err: err}
		}
		stampInfo(&b, dir, fi)
		for _, name := range stampNames {
			p := filepath.Join(dir, name)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(&b, "%s absent\n", p)
				continue
			}
			if err != nil {
				return nil, &LayoutError{Rule: RuleChanged, Path: p, Reason: "cannot stat", Err: err}
			}
			stampInfo(&b, p, fi)
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				t, _ := os.Readlink(p)
				fmt.Fprintf(&b, " -> %s\n", t)
			case fi.Mode().IsRegular() && (name == "commondir" || name == "gitdir" || filepath.Dir(name) == "objects/info"):
				data, _ := readRepoFile(p)
				fmt.Fprintf(&b, " sha256 %x\n", sha256.Sum256(data))
			}
		}
	}
	return b.Bytes(), nil
}

// stampInfo writes path's type and, for a directory, its device and inode: a directory
// swapped for another is caught, while files git itself rewrites (HEAD, index) are not
// taken for a change of layout.
func stampInfo(b *bytes.Buffer, path string, fi fs.FileInfo) {
	fmt.Fprintf(b, "%s %v", path, fi.Mode().Type())
	if fi.IsDir() {
		b.WriteString(" " + fileID(fi))
	}
	b.WriteByte('\n')
}

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// gitPlaceholders are the protected paths of the workspace's Git directory that the
// launcher makes when they are missing, so that a read-only mount can take their place and
// the command cannot create them: empty directories (as git init makes hooks and info, and
// Git reads an empty one as none), and an empty objects/info/alternates (no alternates).
// The other missing entries of the list (commondir, config.worktree, gitdir,
// objects/info/http-alternates) cannot be made: an empty commondir breaks the repository,
// so the post-run check (sandbox.QuarantineGit) moves them aside when a command makes one.
var gitPlaceholders = map[string]bool{ // path -> is a directory
	".git/hooks": true, ".git/info": true, ".git/modules": true, ".git/worktrees": true,
	".git/remotes": true, ".git/branches": true, ".git/objects/info/alternates": false,
}

// MakeGitPlaceholder makes the missing protected path rel beneath ws when gitPlaceholders
// names it, and reports whether it did. Its parent must be a directory reached without a
// symbolic link (objects/info is made in objects when missing); everything is made relative
// to descriptors opened so, and a file with O_EXCL|O_NOFOLLOW.
func MakeGitPlaceholder(ws int, rel string) (bool, error) {
	isDir, ok := gitPlaceholders[rel]
	if !ok {
		return false, nil
	}
	parent := filepath.Dir(rel)
	if !isDir {
		// objects/info/alternates: objects must exist; objects/info is made if missing.
		objects, err := openDirBeneath(ws, filepath.Dir(parent))
		if err != nil {
			return false, nil // no objects directory: not a repository Git would use
		}
		err = unix.Mkdirat(objects, filepath.Base(parent), 0o755)
		unix.Close(objects)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return false, fmt.Errorf("mkdir %s: %w", parent, err)
		}
	}
	dir, err := openDirBeneath(ws, parent)
	if err != nil {
		return false, fmt.Errorf("%s: %w", parent, err)
	}
	defer unix.Close(dir)
	if isDir {
		if err := unix.Mkdirat(dir, filepath.Base(rel), 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return false, fmt.Errorf("mkdir %s: %w", rel, err)
		}
		return true, nil
	}
	fd, err := unix.Openat(dir, filepath.Base(rel), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return false, fmt.Errorf("create %s: %w", rel, err)
	}
	if err == nil {
		unix.Close(fd)
	}
	return true, nil
}

// openDirBeneath opens the directory rel beneath ws as an O_PATH descriptor, following no
// symbolic link in any component; a link or a non-directory fails.
func openDirBeneath(ws int, rel string) (int, error) {
	return unix.Openat2(ws, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// MakeGitPlaceholders makes the missing placeholders (see MakeGitPlaceholder) of the
// workspace's .git directory when p keeps protected paths with mounts; a workspace without
// a .git directory gets none. Command calls it before it starts the launcher.
func MakeGitPlaceholders(p Profile) error {
	if p.Protection != ProtectionMountNamespace {
		return nil
	}
	ws, err := unix.Open(p.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open workspace %s: %w", p.Workspace, err)
	}
	defer unix.Close(ws)
	if fd, err := openDirBeneath(ws, ".git"); err != nil {
		return nil // no .git directory (none, a file or a link): nothing to make
	} else {
		unix.Close(fd)
	}
	rels := make([]string, 0, len(gitPlaceholders))
	for rel := range gitPlaceholders {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		if fd, err := unix.Openat2(ws, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}); err == nil {
			unix.Close(fd)
			continue
		} else if !errors.Is(err, unix.ENOENT) {
			continue // a link or worse: the launcher falls back and says so
		}
		if _, err := MakeGitPlaceholder(ws, rel); err != nil {
			return err
		}
	}
	return nil
}

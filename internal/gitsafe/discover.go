package gitsafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckConfigAt reports whether a git started in dir (no GIT_DIR, no -C) would find a
// repository whose own configuration could start a program. It finds the repository as
// git's discovery does (gitrepository-layout(5)): walking up from dir to the first directory
// holding .git (a directory, or a file naming "gitdir: PATH"), or that is itself a git
// directory (a bare repository); then it reads that repository's config, its
// config.worktree when extensions.worktreeConfig is on, and the files they include.
//
// It returns nil when no repository is found or none of its settings can start a program,
// a *ConfigError (rule RuleConfigExec) naming each setting that can, and a *LayoutError with
// RuleConfigSyntax when a configuration file cannot be read as git would. Unlike Check it
// does not require the repository to be owned by us or to lie inside a workspace: it is
// for the root helper, which runs git unsandboxed and must not run it in such a repository.
func CheckConfigAt(dir string) error {
	l, ok, err := discover(dir)
	if err != nil || !ok {
		return err
	}
	return checkConfig(&l)
}

// discover finds the repository git would use from dir (see CheckConfigAt).
func discover(dir string) (layout, bool, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, false, nil
	}
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			var l layout
			switch {
			case fi.IsDir():
				l.gitDir = dotGit
			case fi.Mode().IsRegular():
				target, err := readGitFile(dotGit)
				if err != nil {
					return layout{}, false, err
				}
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				l.gitDir = target
			}
			if l.gitDir != "" {
				return withCommonDir(l)
			}
		}
		if isGitDir(dir) {
			return withCommonDir(layout{gitDir: dir})
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return layout{}, false, nil
		}
		dir = parent
	}
}

// withCommonDir fills l's common dir from its commondir file.
func withCommonDir(l layout) (layout, bool, error) {
	l.commonDir = l.gitDir
	cf := filepath.Join(l.gitDir, "commondir")
	data, err := readRepoFile(cf)
	switch {
	case err == nil:
		target := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(target) {
			target = filepath.Join(l.gitDir, target)
		}
		l.commonDir = filepath.Clean(target)
	case !errors.Is(err, fs.ErrNotExist):
		return layout{}, false, &LayoutError{Rule: RuleConfigSyntax, Path: cf, Reason: "cannot read commondir", Err: err}
	}
	return l, true, nil
}

// isGitDir reports whether dir looks like a git directory to git's discovery: HEAD, objects
// and refs (setup.c is_git_directory).
func isGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

package sandbox

import (
	"slices"
	"strings"
)

// gitControlNames are the entries of a Git directory, relative to it, that Git reads as
// configuration or as an indirection to other files (gitrepository-layout(5)): config and
// config.worktree (core.fsmonitor, core.hooksPath, core.sshCommand, aliases, filters and
// include.path run programs or read other files), commondir and gitdir (they move the
// repository elsewhere), hooks (run on commit, checkout, merge, push), info (attributes,
// exclude, grafts, sparse-checkout: read as configuration), remotes and branches (the old
// remote configuration files), and objects/info/alternates and http-alternates (they make
// Git read objects from other directories). A sandboxed command must never leave one of
// them for a tool outside the sandbox: the launcher keeps those of the workspace's Git
// directory read-only, and QuarantineGit moves aside every one a command wrote in any Git
// directory of the workspace. modules/ and worktrees/ hold whole Git directories of
// submodules and linked worktrees, each with its own entries of this list.
var gitControlNames = []string{
	"config", "config.worktree", "commondir", "gitdir", "hooks", "info", "remotes", "branches",
	"objects/info/alternates", "objects/info/http-alternates",
}

// gitNestedDirs are the directories of a Git directory that hold other Git directories:
// submodules' (modules/NAME, nested to any depth) and linked worktrees' (worktrees/NAME).
var gitNestedDirs = []string{"modules", "worktrees"}

// gitWritableNames are the entries at the top of a Git directory that ordinary work (add,
// commit, checkout, branch, stash, merge, rebase, cherry-pick, revert, bisect, fetch, gc)
// creates or replaces; Git reads none of them as configuration. A command may create any
// of them; QuarantineGit moves aside any other new entry at the top of a Git directory.
// Names ending in ".lock" (Git's lock files, renamed into place) and the prefixes of
// gitWritablePrefixes are writable too.
var gitWritableNames = []string{
	"objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "MERGE_AUTOSTASH", "AUTO_MERGE",
	"SQUASH_MSG", "TAG_EDITMSG", "NOTES_EDITMSG", "EDIT_DESCRIPTION",
	"REBASE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "packed-refs", "shallow", "description",
	"rebase-merge", "rebase-apply", "sequencer", "rr-cache", "lost-found", "gc.pid", "gc.log",
	"reftable",
}

// gitWritablePrefixes are name prefixes at the top of a Git directory that ordinary work
// creates: bisect state, notes merges and the shared index files of a split index.
var gitWritablePrefixes = []string{"BISECT_", "NOTES_MERGE_", "sharedindex."}

// gitTodoFiles are the to-do lists of an interrupted rebase, cherry-pick or revert,
// relative to the Git directory: "git rebase --continue" on the host runs their exec lines.
var gitTodoFiles = []string{"rebase-merge/git-rebase-todo", "sequencer/todo"}

// GitControlNames returns the entries of a Git directory that Git reads as configuration or
// indirection (a fresh copy; see gitControlNames).
func GitControlNames() []string { return slices.Clone(gitControlNames) }

// GitWritableNames returns the entries at the top of a Git directory that ordinary work
// writes (a fresh copy; see gitWritableNames).
func GitWritableNames() []string { return slices.Clone(gitWritableNames) }

// gitWritableTop reports whether name, an entry at the top of a Git directory, is one that
// ordinary Git work creates (see gitWritableNames).
func gitWritableTop(name string) bool {
	if slices.Contains(gitWritableNames, name) || strings.HasSuffix(name, ".lock") {
		return true
	}
	for _, p := range gitWritablePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// gitShaped reports whether a directory with the entry names names is a Git directory as
// Git finds one (setup.c is_git_directory: HEAD, objects and refs), or is named .git.
func gitShaped(base string, names []string) bool {
	if base == ".git" {
		return true
	}
	return slices.Contains(names, "HEAD") && slices.Contains(names, "objects") && slices.Contains(names, "refs")
}

// todoRunsPrograms reports whether a rebase or sequencer to-do list holds an exec line
// (git-rebase(1): "x, exec <command>"), which the next "git rebase --continue" runs.
func todoRunsPrograms(todo string) bool {
	for _, line := range strings.Split(todo, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "x" || f[0] == "exec") {
			return true
		}
	}
	return false
}

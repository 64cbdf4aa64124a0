//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/safety"
)

// Quarantine is the whole post-run check of a workspace: QuarantineGit, then
// QuarantineControl, with their quarantined paths together (sorted) and their errors joined.
func Quarantine(workspace string, since time.Time, tag string) ([]string, error) {
	g, gerr := QuarantineGit(workspace, since, tag)
	c, cerr := QuarantineControl(workspace, since, tag)
	out := append(g, c...)
	slices.Sort(out)
	return out, errors.Join(gerr, cerr)
}

// QuarantineControl is the post-run check of the agent, editor and tool control files
// (safety.ControlFileNames: .vscode, .claude, .mcp.json, .envrc …, at any depth, in any
// letter case), run like QuarantineGit when no process of the command is left. The sandbox
// keeps those that exist at launch read-only, but one that does not exist yet can be
// created, and a .vscode/tasks.json, a .claude/settings.json hook or a .mcp.json server
// that survived the command would make an editor or agent outside the sandbox run what the
// command wrote. Every control entry changed since the mark since (itself, or anything
// beneath it) is moved aside to NAME.s-code-quarantine-TAG. Git directories are left to
// QuarantineGit; symbolic links are never followed. It returns the quarantined paths
// relative to the workspace, sorted.
func QuarantineControl(workspace string, since time.Time, tag string) ([]string, error) {
	ws, err := unix.Open(workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("post-run check: open workspace %s: %w", workspace, err)
	}
	defer unix.Close(ws)
	c := &checker{ws: workspace, wsfd: ws, since: since, tag: tag}
	c.walkControl(workspace, controlNames())
	slices.Sort(c.out)
	return c.out, errors.Join(c.errs...)
}

func controlNames() []string {
	names := safety.ControlFileNames()
	for i, n := range names {
		names[i] = strings.ToLower(n)
	}
	return names
}

// walkControl looks for changed control entries in dir and beneath it.
func (c *checker) walkControl(dir string, names []string) {
	entries, err := c.readDir(dir)
	if err != nil {
		if !errors.Is(err, ErrCheckIncomplete) && !errors.Is(err, unix.ENOENT) {
			c.errs = append(c.errs, fmt.Errorf("post-run check: %w", err))
		}
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case slices.Contains(names, strings.ToLower(e.Name())):
			if c.changed(p) {
				c.quarantine(p)
			}
		case e.IsDir() && e.Name() != ".git" && !strings.Contains(e.Name(), QuarantineSuffix):
			c.walkControl(p, names)
		}
	}
}

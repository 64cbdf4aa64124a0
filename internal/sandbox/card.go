package sandbox

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// commonLimits are the known limits of the Linux profile under either protection
// (docs/sandbox.md explains them).
var commonLimits = []string{
	"nested repositories (a .git below the top level, or made by the command) get no mounts: the post-run check moves aside their configuration, hooks and other indirections that the command changed, once it has ended",
	"a Git configuration or indirection the command creates at the top of .git (commondir, config.worktree) exists until the command ends and the post-run check moves it aside: a Git run outside the sandbox meanwhile could read it",
	"with network off no Internet socket can be opened at all, also not on loopback",
	"before Landlock ABI 9, a command can connect to any pathname Unix socket it can name outside the hidden paths (the helpers' sockets are hidden with mount-namespace, and both helpers refuse sandboxed callers)",
}

// protectionLimits are the known limits of each Profile.Protection on Linux.
var protectionLimits = map[string][]string{
	ProtectionMountNamespace: {
		"protected paths are read-only bind mounts in the command's own mount namespace; a control file that does not exist when the command starts (.claude, .vscode, .mcp.json, .envrc …) gets no mount and can be created: only ShellSafety verdicts guard it (missing .git/hooks, info, modules, worktrees, remotes, branches and objects/info/alternates are created empty so they can be mounted)",
		"if the kernel refuses the mount namespace at launch, the launcher says so on stderr and falls back to landlock-entries, with its limits",
	},
	ProtectionLandlockEntries: {
		"Landlock is an allow-list: the workspace root itself is read-only and each top-level entry except the protected ones is writable, so new top-level files and directories cannot be created, and top-level entries cannot be removed or renamed (create them before, e.g. mkdir target)",
		"the same holds one level down in .git: existing subdirectories (objects, refs) are writable, new entries in .git itself (index.lock) are not, so git add and commit fail inside the sandbox",
	},
}

// protectionNotes describe each Profile.Protection on the card.
var protectionNotes = map[string]string{
	ProtectionMountNamespace:  "mount-namespace (read-only bind mounts; the workspace tree is writable as a whole)",
	ProtectionLandlockEntries: "landlock-entries (the workspace root and .git are read-only, their other entries granted one by one; no private mount namespace here)",
}

// effectiveProtection returns p.Protection, with the empty value read as
// ProtectionLandlockEntries.
func effectiveProtection(p Profile) string {
	if p.Protection == "" {
		return ProtectionLandlockEntries
	}
	return p.Protection
}

// Card is the sandbox profile card: the profile, the kernel features found, and the network
// request of a command (if any). Its JSON form is the --json output of s-code sandbox.
type Card struct {
	Profile  Profile  `json:"profile"`
	Features Features `json:"features"`
	// Confined reports whether the command will run confined; when false, Reason says why
	// and a person must approve.
	Confined bool   `json:"confined"`
	Reason   string `json:"reason,omitempty"`
	// Command is the command to run, empty when only the profile is shown.
	Command []string `json:"command,omitempty"`
	// Limits are the known limits of the profile on this system.
	Limits []string `json:"limits"`
}

// NewCard returns the card for p on a machine with features f, for command (nil when only
// the profile is shown).
func NewCard(p Profile, f Features, command []string) Card {
	c := Card{Profile: p, Features: f, Confined: f.Confines(), Reason: f.Problem, Command: command, Limits: []string{}}
	if f.OS == "linux" {
		c.Limits = Limits(p.Protection)
	}
	return c
}

// Write prints the card as text to w.
func (c Card) Write(w io.Writer) error {
	var b strings.Builder
	p := c.Profile
	fmt.Fprintf(&b, "sandbox profile for %s\n", p.Workspace)
	list := func(title string, items []string) {
		fmt.Fprintf(&b, "  %s:\n", title)
		if len(items) == 0 {
			b.WriteString("    (none)\n")
		}
		for _, it := range items {
			fmt.Fprintf(&b, "    %s\n", it)
		}
	}
	list("writable roots", p.WritableRoots)
	list("read-only roots", p.ReadOnlyRoots)
	list("devices (read, write)", p.Devices)
	list("denied paths (no read, no write)", p.DeniedPaths)
	list("protected paths (read-only inside the workspace)", p.ProtectedPaths)
	if c.Features.OS == "linux" {
		fmt.Fprintf(&b, "  protection: %s\n", protectionNotes[effectiveProtection(p)])
	}
	if c.Features.OS == "linux" {
		if p.PIDNamespace {
			b.WriteString("  processes: own PID namespace (the launcher is its init; nothing the command starts outlives it)\n")
		} else {
			b.WriteString("  processes: process group only (no PID namespace here: a process that leaves the group, as setsid does, can outlive the command)\n")
		}
	}
	if p.Network {
		b.WriteString("  network: on (approved for this command)\n")
	} else {
		b.WriteString("  network: off (Internet, packet and raw sockets refused)\n")
	}
	b.WriteString("  caches:\n")
	for _, k := range p.Caches {
		fmt.Fprintf(&b, "    %-5s %s=%s\n", k.Tool, k.Var, k.Path)
	}
	b.WriteString("  environment changes:\n")
	for _, s := range p.Env.Set {
		fmt.Fprintf(&b, "    set   %s=%s\n", s.Name, s.Value)
	}
	for _, u := range p.Env.Unset {
		fmt.Fprintf(&b, "    unset %s\n", u)
	}
	fmt.Fprintf(&b, "  kernel features: %s\n", c.Features.Describe())
	if c.Confined {
		b.WriteString("  confinement: yes\n")
	} else {
		fmt.Fprintf(&b, "  confinement: NO: %s\n", c.Reason)
	}
	if len(c.Limits) > 0 {
		list("limits", c.Limits)
	}
	if len(c.Command) > 0 {
		fmt.Fprintf(&b, "command: %s\n", strings.Join(quoteArgs(c.Command), " "))
		if p.Network {
			b.WriteString("network request: this command asks for network access\n")
		} else {
			b.WriteString("network request: none\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// quoteArgs quotes the words of argv that a shell would split or expand.
func quoteArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`;&|<>*?()[]{}#~!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// Limits returns the known limits of a Linux profile with the given Protection (empty:
// ProtectionLandlockEntries), as printed on the card (a fresh slice).
func Limits(protection string) []string {
	if protection == "" {
		protection = ProtectionLandlockEntries
	}
	return append(slices.Clone(protectionLimits[protection]), commonLimits...)
}

package execrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits on the caller's PATH that MergePath reads.
const (
	// MaxCallerPathEntries is the most caller PATH entries MergePath looks at; later ones are
	// refused.
	MaxCallerPathEntries = 64
	// MaxCallerPathLen is the longest caller PATH MergePath reads, in bytes; a longer one is
	// refused as a whole.
	MaxCallerPathLen = 32 << 10
)

// PathRefusal is one entry of the caller's PATH that MergePath left out, and why.
type PathRefusal struct {
	// Dir is the entry as the caller sent it.
	Dir string
	// Reason says which rule of CheckPathEntry refused it.
	Reason string
}

// PathEntryError is returned by CheckPathEntry for an entry a command may not get.
type PathEntryError struct {
	// Dir is the entry as given.
	Dir string
	// Reason says which rule refused it ("inside the workspace …", "writable by group or
	// others …").
	Reason string
}

// Error returns "PATH entry DIR: reason".
func (e *PathEntryError) Error() string { return fmt.Sprintf("PATH entry %q: %s", e.Dir, e.Reason) }

// MergePath returns the PATH a command gets: the helper's own base directories, then the
// entries of callerPath (the caller's PATH) that CheckPathEntry accepts for workspace and uid,
// each in its resolved form, in the caller's order, without duplicates. The base comes first,
// so the helper's configured directories win and the caller's only add programs they lack
// (a toolchain such as /usr/local/go/bin or ~/.cargo/bin). base must pass ValidatePath;
// refused entries are left out (MergePathReport says which and why). uid is the user the
// commands run as: the user helper's own uid, 0 for the root helper, which so accepts only
// root-owned directories and never runs a program a user could replace.
func MergePath(base, callerPath, workspace string, uid int) string {
	p, _ := MergePathReport(base, callerPath, workspace, uid)
	return p
}

// MergePathReport is MergePath, also returning the caller's entries it left out, each with
// its reason (entries that merely repeat an earlier one are not reported).
func MergePathReport(base, callerPath, workspace string, uid int) (string, []PathRefusal) {
	out := strings.Split(base, ":")
	seen := map[string]bool{}
	for _, d := range out {
		seen[d] = true
		if r, err := filepath.EvalSymlinks(d); err == nil {
			seen[r] = true
		}
	}
	if callerPath == "" {
		return base, nil
	}
	if len(callerPath) > MaxCallerPathLen {
		return base, []PathRefusal{{Dir: fmt.Sprintf("(%d bytes)", len(callerPath)), Reason: fmt.Sprintf("the caller's PATH is longer than %d bytes", MaxCallerPathLen)}}
	}
	var refused []PathRefusal
	for i, d := range strings.Split(callerPath, ":") {
		if i >= MaxCallerPathEntries {
			refused = append(refused, PathRefusal{Dir: d, Reason: fmt.Sprintf("more than %d entries", MaxCallerPathEntries)})
			continue
		}
		if seen[d] {
			continue
		}
		r, err := CheckPathEntry(d, workspace, uid)
		if err != nil {
			var pe *PathEntryError
			reason := err.Error()
			if errors.As(err, &pe) {
				reason = pe.Reason
			}
			refused = append(refused, PathRefusal{Dir: d, Reason: reason})
			continue
		}
		if seen[r] {
			continue
		}
		seen[d], seen[r] = true, true
		out = append(out, r)
	}
	return strings.Join(out, ":"), refused
}

// CheckPathEntry returns the resolved form of one caller PATH entry dir when a command may
// get it, or a *PathEntryError saying why not. The rules: dir is absolute and clean (an empty
// or relative entry means a directory the command's cwd picks); it exists and is a
// directory (symbolic links resolved); neither dir nor its resolved form lies inside
// workspace (the command could plant programs there); the resolved directory is owned by
// root or uid and not writable by group or others; and so is every directory above it,
// except that a directory with the sticky bit (/tmp) may be writable by others, since they
// cannot rename or remove what they do not own there. workspace must be absolute and
// canonical (symbolic links resolved); an empty workspace refuses every entry.
func CheckPathEntry(dir, workspace string, uid int) (string, error) {
	refuse := func(format string, args ...any) (string, error) {
		return "", &PathEntryError{Dir: dir, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case dir == "":
		return refuse("empty (it means the working directory)")
	case !filepath.IsAbs(dir):
		return refuse("not absolute (it is looked up from the working directory)")
	case filepath.Clean(dir) != dir:
		return refuse("not clean (%q)", filepath.Clean(dir))
	case !filepath.IsAbs(workspace):
		return refuse("no workspace to check it against")
	case within(workspace, dir):
		return refuse("inside the workspace %s", workspace)
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return refuse("does not exist")
	}
	if within(workspace, r) {
		return refuse("resolves to %s, inside the workspace %s", r, workspace)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return refuse("cannot be read: %v", err)
	}
	if !fi.IsDir() {
		return refuse("not a directory")
	}
	for d := r; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			return refuse("cannot be read: %v", err)
		}
		if st.Uid != 0 && int(st.Uid) != uid {
			if d == r {
				return refuse("owned by uid %d, neither root nor uid %d", st.Uid, uid)
			}
			return refuse("its parent %s is owned by uid %d, neither root nor uid %d", d, st.Uid, uid)
		}
		writable := st.Mode&0o022 != 0
		if writable && (d == r || st.Mode&syscall.S_ISVTX == 0) {
			if d == r {
				return refuse("writable by group or others (mode %#o)", st.Mode&0o7777)
			}
			return refuse("its parent %s is writable by group or others (mode %#o)", d, st.Mode&0o7777)
		}
		if d == "/" {
			return r, nil
		}
	}
}

// within reports whether path is root or lies beneath it (both absolute and clean).
func within(root, path string) bool {
	if root == "/" || root == path {
		return true
	}
	return strings.HasPrefix(path, root+"/")
}

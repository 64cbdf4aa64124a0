package launch

import (
	"slices"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// access is what an entry of the plan grants.
type access int

const (
	accessNone   access = iota // denied: no rule, and a hole in every root above it
	accessRead                 // read and execute
	accessDevice               // read, write and ioctl on a device
	accessWrite                // full read and write
)

// entry is one path of the profile with the access it gets.
type entry struct {
	path   string
	access access
	// protected reports whether path is a protected path: it is opened without following
	// symbolic links, so a link planted there never grants its target.
	protected bool
	// holes are the other entries' paths strictly beneath path: the walk grants path's
	// other contents and leaves each hole to its own entry (or to nothing, when denied).
	holes []string
}

// plan returns the entries of p, one per path, sorted by path. A path named in several lists
// gets the most restrictive meaning: denied before protected (read-only) before writable,
// device and read-only. Entries beneath a denied path are dropped, and so are writable or
// device entries beneath a protected path.
func plan(p sandbox.Profile) []entry {
	rank := map[string]access{}
	fixed := map[string]bool{} // denied or protected: their meaning wins
	set := func(paths []string, a access, isFixed bool) {
		for _, path := range paths {
			if fixed[path] {
				continue
			}
			if old, ok := rank[path]; ok && !isFixed && old > a {
				continue // keep the stronger grant of two ordinary lists
			}
			rank[path] = a
			if isFixed {
				fixed[path] = true
			}
		}
	}
	set(p.DeniedPaths, accessNone, true)
	set(p.ProtectedPaths, accessRead, true)
	set(p.ReadOnlyRoots, accessRead, false)
	set(p.Devices, accessDevice, false)
	set(p.WritableRoots, accessWrite, false)
	var out []entry
	for path, a := range rank {
		out = append(out, entry{path: path, access: a})
	}
	slices.SortFunc(out, func(a, b entry) int {
		switch {
		case a.path < b.path:
			return -1
		case a.path > b.path:
			return 1
		}
		return 0
	})
	out = slices.DeleteFunc(out, func(e entry) bool {
		for _, d := range p.DeniedPaths {
			if d != e.path && sandbox.Within(d, e.path) {
				return true
			}
		}
		if e.access == accessWrite || e.access == accessDevice {
			for _, pr := range p.ProtectedPaths {
				if pr != e.path && sandbox.Within(pr, e.path) {
					return true
				}
			}
		}
		return false
	})
	for i := range out {
		out[i].protected = out[i].access == accessRead && slices.Contains(p.ProtectedPaths, out[i].path)
		for _, o := range out {
			if o.path != out[i].path && sandbox.Within(out[i].path, o.path) {
				out[i].holes = append(out[i].holes, o.path)
			}
		}
	}
	return out
}

// holeAt reports whether path is one of holes.
func holeAt(holes []string, path string) bool { return slices.Contains(holes, path) }

// holeBeneath reports whether some hole lies strictly beneath path.
func holeBeneath(holes []string, path string) bool {
	for _, h := range holes {
		if h != path && sandbox.Within(path, h) {
			return true
		}
	}
	return false
}

package sandbox

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxCachedProfiles bounds a ProfileCache: past it the cache starts again empty (a helper
// serves a handful of workspaces; each key is one workspace, network switch and host state).
const maxCachedProfiles = 256

// ProfileCache reuses, between the commands a Runner starts, the work that does not change
// while its inputs do not:
//
//   - the profile NewProfile computes, keyed by everything NewProfile reads: the Host that
//     Discover returned for this command and the network switch. Discover itself runs for
//     every command (it is the stat of each candidate root and the resolution of the
//     workspace, PATH and Git directories), so a new runtime root, a new linked-worktree Git
//     directory, a new S-Code directory to hide, a changed HOME, GOROOT or cache root, or a
//     moved workspace gives a new key and a new profile; nothing is reused on a guess.
//   - the namespace probes of Discover (MountNamespaceUsable, PIDNamespaceUsable: a cloned
//     child each), but only their successes, and only while the kernel settings that decide
//     them (see nsFingerprint) and the caller's CAP_SYS_ADMIN are unchanged. A failure is
//     probed again at the next command, so a passing refusal (the per-user namespace count at
//     its limit) never weakens later profiles; a success gone stale fails closed (the
//     launcher cannot make its PID namespace and the command does not start; a refused mount
//     namespace falls back to ProtectionLandlockEntries).
//
// Its methods are safe for concurrent use. The zero value is not usable: use
// NewProfileCache. Profiles it returns are copies: a caller may change them.
type ProfileCache struct {
	mu       sync.Mutex
	profiles map[string]Profile
	// mountProbe, pidProbe and fingerprint are MountNamespaceUsable, PIDNamespaceUsable and
	// nsFingerprint; tests replace them.
	mountProbe, pidProbe func() error
	fingerprint          func() string
	// usable holds, per probe name, the fingerprint under which it last succeeded.
	usable map[string]string
	// hits and misses count profile look-ups, for tests.
	hits, misses int
}

// NewProfileCache returns an empty cache.
func NewProfileCache() *ProfileCache {
	return &ProfileCache{
		profiles: map[string]Profile{}, usable: map[string]string{},
		mountProbe: MountNamespaceUsable, pidProbe: PIDNamespaceUsable, fingerprint: nsFingerprint,
	}
}

// probes returns the namespace probes of Discover with their successes reused.
func (c *ProfileCache) probes() namespaceProbes {
	return namespaceProbes{
		mount: func() error { return c.probe("mount", c.mountProbe) },
		pid:   func() error { return c.probe("pid", c.pidProbe) },
	}
}

// probe runs probe unless it succeeded before under the same kernel settings and
// capability.
func (c *ProfileCache) probe(name string, probe func() error) error {
	key := strconv.FormatBool(HasSysAdmin()) + "\x00" + c.fingerprint()
	c.mu.Lock()
	k, ok := c.usable[name]
	c.mu.Unlock()
	if ok && k == key {
		return nil
	}
	err := probe()
	c.mu.Lock()
	if err == nil {
		c.usable[name] = key
	} else {
		delete(c.usable, name)
	}
	c.mu.Unlock()
	return err
}

// profile returns NewProfile(h, network), computed once per distinct (h, network).
func (c *ProfileCache) profile(h Host, network bool) (Profile, error) {
	key := hostKey(h, network)
	c.mu.Lock()
	p, ok := c.profiles[key]
	if ok {
		c.hits++
	}
	c.mu.Unlock()
	if ok {
		return p.clone(), nil
	}
	p, err := NewProfile(h, network)
	if err != nil {
		return Profile{}, err
	}
	c.mu.Lock()
	c.misses++
	if len(c.profiles) >= maxCachedProfiles {
		clear(c.profiles)
	}
	c.profiles[key] = p.clone()
	c.mu.Unlock()
	return p, nil
}

// stats returns the numbers of profile look-ups answered from the cache and computed.
func (c *ProfileCache) stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// hostKey encodes every field of h and network, each list with its length, so that two
// different inputs never share a key.
func hostKey(h Host, network bool) string {
	var b strings.Builder
	str := func(s string) { b.WriteString(strconv.Itoa(len(s))); b.WriteByte(':'); b.WriteString(s) }
	list := func(l []string) {
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte('[')
		for _, s := range l {
			str(s)
		}
	}
	str(h.Home)
	str(h.Workspace)
	str(h.CacheRoot)
	list(h.SystemRoots)
	list(h.ToolRoots)
	list(h.RuntimeRoots)
	list(h.HomeConfigFiles)
	list(h.Devices)
	list(h.SystemDenied)
	list(h.StateDirs)
	b.WriteString(strconv.FormatBool(h.MountNamespace))
	b.WriteString(strconv.FormatBool(h.PIDNamespace))
	b.WriteString(strconv.FormatBool(network))
	return b.String()
}

// clone returns a copy of p that shares no slice with it.
func (p Profile) clone() Profile {
	p.WritableRoots = slices.Clone(p.WritableRoots)
	p.ReadOnlyRoots = slices.Clone(p.ReadOnlyRoots)
	p.Devices = slices.Clone(p.Devices)
	p.DeniedPaths = slices.Clone(p.DeniedPaths)
	p.ProtectedPaths = slices.Clone(p.ProtectedPaths)
	p.Caches = slices.Clone(p.Caches)
	p.Env.Set = slices.Clone(p.Env.Set)
	p.Env.Unset = slices.Clone(p.Env.Unset)
	return p
}

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// reuseFixture is a home directory, a workspace below it and a cache root outside it, with
// a Runner that has a ProfileCache; env is the environment its commands see.
type reuseFixture struct {
	home, ws string
	env      map[string]string
	r        Runner
}

func newReuseFixture(t *testing.T) *reuseFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &reuseFixture{home: filepath.Join(base, "home"), env: map[string]string{}}
	f.ws = filepath.Join(f.home, "src", "proj")
	for _, d := range []string{f.ws, filepath.Join(base, "cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env["HOME"] = f.home
	f.env["PATH"] = "/usr/bin:/bin"
	f.env["S_CODE_TOOL_CACHE_DIR"] = filepath.Join(base, "cache")
	f.r = Runner{Launcher: "/bin/true", Getenv: func(k string) string { return f.env[k] }, Cache: NewProfileCache()}
	return f
}

// check returns the profile through the cache and fails unless it equals the one computed
// from scratch (ForWorkspace) for the same state.
func (f *reuseFixture) check(t *testing.T, network bool) Profile {
	t.Helper()
	got, err := f.r.Profile(f.ws, network, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := (Runner{Launcher: f.r.Launcher, Getenv: f.r.Getenv}).Profile(f.ws, network, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cached profile differs from a fresh one:\ncached %+v\nfresh  %+v", got, want)
	}
	return got
}

// TestProfileCacheReuses: a second command of an unchanged workspace is answered from the
// cache, and changing the profile a caller got does not change the next one.
func TestProfileCacheReuses(t *testing.T) {
	f := newReuseFixture(t)
	p := f.check(t, false)
	p.WritableRoots[0] = "/tampered"
	p.ReadOnlyRoots = append(p.ReadOnlyRoots[:0], "/tampered")
	p.Env.Set[0].Value = "/tampered"
	f.check(t, false)
	if hits, misses := f.r.Cache.stats(); hits != 1 || misses != 1 {
		t.Fatalf("hits %d, misses %d; want 1 and 1", hits, misses)
	}
	if q := f.check(t, true); !q.Network {
		t.Fatal("network approval lost in the cache")
	}
}

// TestProfileCacheInvalidation changes, between two commands of one workspace, each input the
// profile depends on, and checks that the next profile sees it (and equals a fresh one).
func TestProfileCacheInvalidation(t *testing.T) {
	f := newReuseFixture(t)
	f.check(t, false)

	// A new runtime root: ~/.nvm/versions appears (a Node version installed meanwhile).
	nvm := filepath.Join(f.home, ".nvm", "versions")
	if err := os.MkdirAll(nvm, 0o755); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); !slices.Contains(p.ReadOnlyRoots, nvm) {
		t.Fatalf("new runtime root %s not in %v", nvm, p.ReadOnlyRoots)
	}
	// And it goes away again.
	if err := os.RemoveAll(filepath.Join(f.home, ".nvm")); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); slices.Contains(p.ReadOnlyRoots, nvm) {
		t.Fatalf("removed runtime root %s still in %v", nvm, p.ReadOnlyRoots)
	}

	// A new home configuration file.
	gitconfig := filepath.Join(f.home, ".gitconfig")
	if err := os.WriteFile(gitconfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); !slices.Contains(p.ReadOnlyRoots, gitconfig) {
		t.Fatalf("new %s not in %v", gitconfig, p.ReadOnlyRoots)
	}

	// The workspace becomes a linked worktree: its Git directories outside it are read-only
	// roots from the next command on.
	common := filepath.Join(filepath.Dir(f.home), "main.git")
	gitdir := filepath.Join(common, "worktrees", "proj")
	for _, d := range []string{filepath.Join(common, "objects"), filepath.Join(common, "refs"), gitdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(common, "HEAD"): "ref: refs/heads/main\n",
		filepath.Join(gitdir, "HEAD"): "ref: refs/heads/proj\n", filepath.Join(gitdir, "commondir"): "../..\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); !slices.Contains(p.ReadOnlyRoots, common) {
		t.Fatalf("linked worktree's common Git directory %s not in %v", common, p.ReadOnlyRoots)
	}

	// A new path to hide: S-Code's configuration directory appears (s-code was configured
	// meanwhile); from the next command on it is a denied path.
	conf := filepath.Join(f.home, ".config", "s-code")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); !slices.Contains(p.DeniedPaths, conf) {
		t.Fatalf("new S-Code directory %s not in the denied paths %v", conf, p.DeniedPaths)
	}

	// A changed environment: another cache root.
	cache2 := filepath.Join(filepath.Dir(f.home), "cache2")
	if err := os.MkdirAll(cache2, 0o755); err != nil {
		t.Fatal(err)
	}
	f.env["S_CODE_TOOL_CACHE_DIR"] = cache2
	if p := f.check(t, false); !Within(cache2, p.CacheNamespace) {
		t.Fatalf("cache namespace %s not below the new cache root %s", p.CacheNamespace, cache2)
	}

	// The workspace path now names another directory (moved aside, a new one made).
	if err := os.Rename(f.ws, f.ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.home, "src", "other"), f.ws); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.home, "src", "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p := f.check(t, false); p.Workspace != filepath.Join(f.home, "src", "other") {
		t.Fatalf("workspace %s, want the symbolic link's new target", p.Workspace)
	}
	// Eight states, of which the one after ~/.nvm went away is the first again.
	if hits, misses := f.r.Cache.stats(); hits != 1 || misses != 7 {
		t.Fatalf("hits %d, misses %d; want 1 and 7 (one per distinct state)", hits, misses)
	}
}

// TestProfileCacheProbes: a namespace probe that succeeded is not run again while the kernel
// settings are unchanged; it runs again when they change; a failure is never reused (the next
// command probes again), so a passing refusal cannot weaken later profiles.
func TestProfileCacheProbes(t *testing.T) {
	c := NewProfileCache()
	runs := map[string]int{}
	refuse := map[string]bool{}
	settings := "15000"
	fake := func(name string) func() error {
		return func() error {
			runs[name]++
			if refuse[name] {
				return ErrNoPIDNamespace
			}
			return nil
		}
	}
	c.mountProbe, c.pidProbe = fake("mount"), fake("pid")
	c.fingerprint = func() string { return settings }
	pr := c.probes()
	for range 3 {
		if pr.mount() != nil || pr.pid() != nil {
			t.Fatal("probe failed")
		}
	}
	if runs["mount"] != 1 || runs["pid"] != 1 {
		t.Fatalf("probes run %v for unchanged settings, want once each", runs)
	}
	settings, refuse["pid"] = "0", true // max_pid_namespaces set to 0
	if err := pr.pid(); !errors.Is(err, ErrNoPIDNamespace) {
		t.Fatalf("after the settings changed: %v, want the probe's refusal", err)
	}
	if err := pr.pid(); !errors.Is(err, ErrNoPIDNamespace) || runs["pid"] != 3 {
		t.Fatalf("a refusal was reused: %v after %d runs, want a third run", err, runs["pid"])
	}
	refuse["pid"] = false // the refusal passed (a namespace count below its limit again)
	if err := pr.pid(); err != nil || runs["pid"] != 4 {
		t.Fatalf("after the refusal passed: %v after %d runs", err, runs["pid"])
	}
	if pr.mount() != nil || runs["mount"] != 2 {
		t.Fatalf("mount probe not run again after the settings changed: %d runs", runs["mount"])
	}
}

// TestNSFingerprintReadsSettings: on Linux the fingerprint holds the settings' contents.
func TestNSFingerprintReadsSettings(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		t.Skipf("no /proc/sys/user/max_user_namespaces: %v", err)
	}
	if fp := nsFingerprint(); len(fp) < len(b) || fp[:len(b)] != string(b) {
		t.Fatalf("fingerprint %q does not start with max_user_namespaces %q", fp, b)
	}
}

// TestHostKeyCoversEveryField changes each field of a Host in turn (by reflection, so that a
// field added later is covered too) and fails if the cache key stays the same: a profile
// must never be reused for a host that differs in anything NewProfile reads.
func TestHostKeyCoversEveryField(t *testing.T) {
	base := testHost()
	k0 := hostKey(base, false)
	if hostKey(base, true) == k0 {
		t.Fatal("network not in the key")
	}
	ht := reflect.TypeOf(base)
	for i := range ht.NumField() {
		h := base
		v := reflect.ValueOf(&h).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.ValueOf("/x")))
		default:
			t.Fatalf("Host.%s has kind %v: teach hostKey and this test about it", ht.Field(i).Name, v.Kind())
		}
		if hostKey(h, false) == k0 {
			t.Errorf("changing Host.%s leaves the cache key unchanged", ht.Field(i).Name)
		}
	}
	// Moving a path from one list to the next changes the key too.
	a, b := base, base
	a.ToolRoots, a.RuntimeRoots = []string{"/p"}, nil
	b.ToolRoots, b.RuntimeRoots = nil, []string{"/p"}
	if hostKey(a, false) == hostKey(b, false) {
		t.Error("a path in ToolRoots and the same path in RuntimeRoots share a key")
	}
}

// TestProfileCacheConcurrent: commands of one workspace asking at once (run with -race)
// each get the same profile and may change their copy.
func TestProfileCacheConcurrent(t *testing.T) {
	f := newReuseFixture(t)
	want := f.check(t, false)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			p, err := f.r.Profile(f.ws, false, []string{"/extra"}, nil)
			if err == nil && !slices.Contains(p.WritableRoots, "/extra") {
				err = errors.New("extra writable root lost")
			}
			if err == nil && !reflect.DeepEqual(p.ReadOnlyRoots, want.ReadOnlyRoots) {
				err = errors.New("read-only roots differ")
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if p := f.check(t, false); slices.Contains(p.WritableRoots, "/extra") {
		t.Fatal("one command's extra writable root leaked into the cached profile")
	}
}

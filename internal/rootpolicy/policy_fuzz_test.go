package rootpolicy_test

import (
	"testing"

	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
)

// FuzzParse: Parse never panics, and a policy it accepts never admits a caller it does not
// name.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("[allow]\nusers = [0]\n"))
	f.Add([]byte("[allow]\ngroups = [\"0\"]\n[limits]\nmax_concurrent = 1\n"))
	f.Add([]byte("[safety]\nx = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := rootpolicy.Parse(data, "fuzz.toml")
		if err != nil {
			return
		}
		if p.MaxConcurrent < 1 || p.DefaultTimeout > p.MaxTimeout || p.KillGrace <= 0 {
			t.Fatalf("accepted limits %+v", p)
		}
		stranger := peercred.Creds{UID: 4000000000, GID: 4000000000, GroupsKnown: true}
		named := false
		for _, u := range p.UIDs {
			named = named || u == stranger.UID
		}
		for _, g := range p.GIDs {
			named = named || g == stranger.GID
		}
		if err := p.Authorize(stranger); err == nil && !named {
			t.Fatalf("policy %+v admits a caller it does not name", p)
		}
	})
}

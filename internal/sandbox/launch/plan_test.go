package launch

import (
	"slices"
	"testing"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

func TestPlan(t *testing.T) {
	p := sandbox.Profile{
		Workspace:      "/home/ada",
		WritableRoots:  []string{"/home/ada", "/cache/ns"},
		ReadOnlyRoots:  []string{"/usr", "/etc", "/home/ada/.ssh/sub", "/home/ada/.nvm/versions"},
		Devices:        []string{"/dev/null"},
		DeniedPaths:    []string{"/home/ada/.ssh", "/etc/shadow", "/cache/ns"},
		ProtectedPaths: []string{"/home/ada/.git/hooks", "/home/ada/.git/hooks/inner"},
	}
	got := map[string]entry{}
	for _, e := range plan(p) {
		got[e.path] = e
	}
	tests := []struct {
		name   string
		path   string
		access access
		absent bool
		holes  []string
	}{
		{"denied wins over writable", "/cache/ns", accessNone, false, nil},
		{"entry beneath a denied path is dropped", "/home/ada/.ssh/sub", 0, true, nil},
		{"protected path is read-only", "/home/ada/.git/hooks", accessRead, false, []string{"/home/ada/.git/hooks/inner"}},
		{"workspace has holes for every entry beneath it", "/home/ada", accessWrite, false, []string{"/home/ada/.git/hooks", "/home/ada/.git/hooks/inner", "/home/ada/.nvm/versions", "/home/ada/.ssh"}},
		{"read-only root with a denied file has a hole", "/etc", accessRead, false, []string{"/etc/shadow"}},
		{"plain read-only root has no holes", "/usr", accessRead, false, nil},
		{"device", "/dev/null", accessDevice, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := got[tt.path]
			if tt.absent {
				if ok {
					t.Fatalf("%s is in the plan: %+v", tt.path, e)
				}
				return
			}
			if !ok {
				t.Fatalf("%s is not in the plan", tt.path)
			}
			if e.access != tt.access || !slices.Equal(e.holes, tt.holes) {
				t.Fatalf("entry %+v, want access %d holes %v", e, tt.access, tt.holes)
			}
		})
	}
}

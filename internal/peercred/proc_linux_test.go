package peercred

import (
	"os"
	"slices"
	"testing"
)

// TestProcStatusGroups checks the /proc fallback used on kernels without SO_PEERGROUPS.
func TestProcStatusGroups(t *testing.T) {
	got, err := procStatusGroups(int32(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.Getgroups()
	for _, g := range want {
		if !slices.Contains(got, uint32(g)) {
			t.Errorf("group %d missing from %v", g, got)
		}
	}
	if _, err := procStatusGroups(-1); err == nil {
		t.Error("procStatusGroups(-1) succeeded")
	}
}

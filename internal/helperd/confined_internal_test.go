package helperd

import (
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/peercred"
)

// TestSandboxedPeer checks the judgement of a peer's accept-time status: confined (the
// launcher's no_new_privs and two filters) and unknown (gone at accept, another pid
// namespace) are refused; anything else passes.
func TestSandboxedPeer(t *testing.T) {
	if !peercred.ReadsProcStatus() {
		t.Skip("this system reports no peer status (macOS): the helpers do not judge it")
	}
	cases := []struct {
		name   string
		status peercred.ProcStatus
		refuse string // part of the refusal; "" means admitted
	}{
		{"plain", peercred.ProcStatus{Known: true, Pinned: true}, ""},
		{"no_new_privs alone", peercred.ProcStatus{Known: true, Pinned: true, NoNewPrivs: true, SeccompFilters: 1}, ""},
		{"filters without no_new_privs", peercred.ProcStatus{Known: true, Pinned: true, SeccompFilters: 3}, ""},
		{"sandboxed", peercred.ProcStatus{Known: true, Pinned: true, NoNewPrivs: true, SeccompFilters: 2}, "runs inside an S-Code sandbox"},
		{"sandboxed, nested filters", peercred.ProcStatus{Known: true, NoNewPrivs: true, SeccompFilters: 5}, "runs inside an S-Code sandbox"},
		{"unknown", peercred.ProcStatus{}, "cannot tell"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sandboxedPeer(peercred.Creds{UID: 1000, PID: 42, Status: tc.status})
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("err %v, want %q", err, tc.refuse)
			}
		})
	}
}

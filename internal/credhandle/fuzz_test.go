package credhandle

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; a handle it accepts prints back to itself; an error never
// repeats the input (which may be a secret) unless the input is part of the fixed advice.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"env:GITHUB_TOKEN", "keyring:svc/acct", "systemd:id", "file:/a/b", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "env:", "x:y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err == nil {
			if back, err := Parse(h.String()); err != nil || back != h {
				t.Fatalf("%q: %+v prints as %q, which parses to %+v, %v", s, h, h.String(), back, err)
			}
			return
		}
		msg := err.Error()
		var nh *NotHandleError
		fixed := msg
		if errors.As(err, &nh) {
			fixed = (&NotHandleError{Len: nh.Len, LooksSecret: nh.LooksSecret}).Error()
		} else {
			kind, _, _ := strings.Cut(s, ":")
			fixed = strings.ReplaceAll(msg, fmt.Sprintf("credential handle %s:...", kind), "")
		}
		if len(s) >= 6 && strings.Contains(fixed, s) && !strings.Contains(HowToStore+" is not a credential handle (env:, keyring:, systemd:, file:); values are never kept in the configuration: credential handle", s) {
			t.Fatalf("the error repeats the input %q: %s", s, msg)
		}
	})
}

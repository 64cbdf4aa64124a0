package redact

import "strings"

// Pending returns how many bytes at the end of s must wait for more text before s can be
// redacted and let out: the length of the longest suffix of s that is a proper prefix of a
// registered value (0 when none is). Text that arrives in pieces (a process's output) is
// redacted up to len(s)-Pending(s), so a registered value split between two pieces is still
// found whole.
func (r *Redactor) Pending(s string) int {
	if r == nil {
		return 0
	}
	most := 0
	for _, v := range r.secrets {
		n := len(v) - 1
		if n > len(s) {
			n = len(s)
		}
		for ; n > most; n-- {
			if strings.HasSuffix(s, v[:n]) {
				most = n
				break
			}
		}
	}
	return most
}

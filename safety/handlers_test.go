package safety

import "testing"

// TestHandlersNeverPanic gives every program of the command table odd argument lists, by
// name and by path, in both contexts: no handler may panic (a panic is internal.panic,
// deny, and would hide the real verdict).
func TestHandlersNeverPanic(t *testing.T) {
	names := []string{}
	for n := range commands {
		names = append(names, n)
	}
	args := []string{"", "-x", "-c 'rm -rf /'", "--help", "a b c", "-o /etc/x y", "-- -1", "$X", "-e x -f y", "x=y z", "-p 1 x", "-rf /", "show", "list", "set a b", "run x", "exec ls", "config core.pager x", "-h", "-l", "{}", ";", "-n 5 ls", "-i x"}
	for _, n := range names {
		for _, ar := range args {
			for _, prefix := range []string{"", "/usr/bin/"} {
				cmd := prefix + n + " " + ar
				for _, role := range []string{"user", "root"} {
					v := Check(cmd, caseContext(role))
					for _, f := range v.Findings {
						if f.Rule == "internal.panic" {
							t.Errorf("panic: %q (%s)", cmd, role)
						}
					}
				}
			}
		}
	}
}

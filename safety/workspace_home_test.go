package safety

import "testing"

func TestWorkspaceIsHome(t *testing.T) {
	ctx := Context{Workspace: "/home/dev", Cwd: "/home/dev", Home: "/home/dev"}
	for cmd, want := range map[string]Decision{
		"echo x >> ~/.bashrc":  Deny,
		"echo x >> .bashrc":    Deny,
		"cat ~/.ssh/id_rsa":    Ask,
		"cat .aws/credentials": Ask,
		"echo x > notes.txt":   Ask,
		"rm -rf ~":             Deny,
		"ls -la":               Allow,
	} {
		if v := Check(cmd, ctx); v.Decision != want {
			t.Errorf("%q: %s, want %s; %+v", cmd, v.Decision, want, v.Findings)
		}
	}
	ctx = Context{Workspace: "/home/dev/bin/tools", Home: "/home/dev"}
	if v := Check("echo x > x.sh", ctx); v.Decision != Ask {
		t.Errorf("workspace inside ~/bin: %+v", v)
	}
	if v := Check("echo x > ~/bin/other", ctx); v.Decision != Deny {
		t.Errorf("~/bin outside the workspace: %+v", v)
	}
}

package execrun_test

import (
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/execrun"
)

// FuzzBuildEnv: whatever the request asks for, an environment BuildEnv returns holds the
// helper's base values and only additions CheckEnvAddition accepts (and so CheckEnvName).
func FuzzBuildEnv(f *testing.F) {
	for _, s := range [][2]string{{"LD_PRELOAD", "/x.so"}, {"BASH_ENV", "/rc"}, {"GIT_SSH_COMMAND", "x"}, {"LANG", "C.UTF-8"},
		{"TZ", "../../etc/x"}, {"npm_config_script_shell", "/x"}, {"PATH", "/tmp"}, {"FOO", "bar"}, {"BASH_FUNC_f%%", "() { :; }"}} {
		f.Add(s[0], s[1])
	}
	base := execrun.Base{Path: execrun.SafePath, Home: "/home/dev", User: "dev", Shell: "/bin/bash"}
	f.Fuzz(func(t *testing.T, name, value string) {
		env, err := execrun.BuildEnv(base, map[string]string{name: value})
		if err != nil {
			return
		}
		if env[0] != "PATH="+execrun.SafePath || env[1] != "HOME=/home/dev" {
			t.Fatalf("base overridden: %q", env)
		}
		for _, kv := range env[5:] {
			n, _, _ := strings.Cut(kv, "=")
			if _, refused := execrun.CheckEnvAddition(n, nil); refused {
				t.Fatalf("refused name %q passed", n)
			}
			if strings.ContainsRune(kv, 0) {
				t.Fatalf("NUL in %q", kv)
			}
		}
	})
}

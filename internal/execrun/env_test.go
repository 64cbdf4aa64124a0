package execrun_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/safety"
)

func TestBuildEnv(t *testing.T) {
	// The policy admits these (PYTHON* and LD_* stay refused by the floor, except the
	// benign PYTHONUNBUFFERED).
	base := execrun.Base{Path: execrun.SafePath, Home: "/home/dev", User: "dev", Shell: "/bin/bash", Allow: []string{"RUST_BACKTRACE", "MYAPP_*", "LD_PRELOAD", "PYTHON*"}}
	cases := []struct {
		name    string
		add     map[string]string
		refused []string // names refused; nil means accepted
	}{
		{"none", nil, nil},
		{"locale-and-term", map[string]string{"LANG": "en_US.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", "TZ": "Europe/Berlin"}, nil},
		{"terminal", map[string]string{"CI": "1", "NO_COLOR": "1", "CLICOLOR": "0", "CLICOLOR_FORCE": "1", "COLUMNS": "80", "LINES": "24", "COLORTERM": "truecolor", "LANGUAGE": "de:en"}, nil},
		{"policy-admitted", map[string]string{"RUST_BACKTRACE": "1", "MYAPP_LEVEL": "debug", "PYTHONUNBUFFERED": "1"}, nil},
		{"off-the-allowlist", map[string]string{"RUST_BACKTRACE": "1", "TAR_OPTIONS": "--to-command=id", "RIPGREP_CONFIG_PATH": "/w/rc", "GOROOT": "/", "S_CODE_TOOL_CACHE_DIR": "/"}, []string{"GOROOT", "RIPGREP_CONFIG_PATH", "S_CODE_TOOL_CACHE_DIR", "TAR_OPTIONS"}},
		{"policy-cannot-admit-the-floor", map[string]string{"LD_PRELOAD": "/x.so", "PYTHONSTARTUP": "/w/x.py"}, []string{"LD_PRELOAD", "PYTHONSTARTUP"}},
		{"size-not-a-number", map[string]string{"COLUMNS": "80x", "LINES": ""}, []string{"COLUMNS", "LINES"}},
		{"control-character", map[string]string{"CI": "1\x1b]0;x\a", "NO_COLOR": "a\nb"}, []string{"CI", "NO_COLOR"}},
		{"ld-preload", map[string]string{"LD_PRELOAD": "/tmp/x.so"}, []string{"LD_PRELOAD"}},
		{"ld-library-path", map[string]string{"LD_LIBRARY_PATH": "/tmp"}, []string{"LD_LIBRARY_PATH"}},
		{"dyld", map[string]string{"DYLD_INSERT_LIBRARIES": "/tmp/x.dylib"}, []string{"DYLD_INSERT_LIBRARIES"}},
		{"bash-env", map[string]string{"BASH_ENV": "/tmp/rc"}, []string{"BASH_ENV"}},
		{"env", map[string]string{"ENV": "/tmp/rc"}, []string{"ENV"}},
		{"shellshock", map[string]string{"BASH_FUNC_ls%%": "() { :; }"}, []string{"BASH_FUNC_ls%%"}},
		{"git-ssh-command", map[string]string{"GIT_SSH_COMMAND": "touch /tmp/pwned"}, []string{"GIT_SSH_COMMAND"}},
		{"git-config", map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager"}, []string{"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0"}},
		{"path-override", map[string]string{"PATH": "/tmp"}, []string{"PATH"}},
		{"home-override", map[string]string{"HOME": "/tmp"}, []string{"HOME"}},
		{"glibc-tunables", map[string]string{"GLIBC_TUNABLES": "glibc.x=1"}, []string{"GLIBC_TUNABLES"}},
		{"gconv", map[string]string{"GCONV_PATH": "."}, []string{"GCONV_PATH"}},
		{"node-options", map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"}, []string{"NODE_OPTIONS"}},
		{"npm-lowercase", map[string]string{"npm_config_script_shell": "/tmp/x"}, []string{"npm_config_script_shell"}},
		{"pythonpath", map[string]string{"PYTHONPATH": "/tmp"}, []string{"PYTHONPATH"}},
		{"locale-path", map[string]string{"LC_ALL": "/tmp/evil"}, []string{"LC_ALL"}},
		{"term-path", map[string]string{"TERM": "../../tmp/x"}, []string{"TERM"}},
		{"tz-path", map[string]string{"TZ": "/etc/../tmp/zone"}, []string{"TZ"}},
		{"tz-dotdot", map[string]string{"TZ": "../../tmp/zone"}, []string{"TZ"}},
		{"bad-name", map[string]string{"A=B": "x", "1X": "y"}, []string{"1X", "A=B"}},
		{"nul-value", map[string]string{"TERM": "a\x00b"}, []string{"TERM"}},
		{"mixed", map[string]string{"TERM": "xterm", "LD_AUDIT": "x"}, []string{"LD_AUDIT"}},
		{"config-home", map[string]string{"XDG_CONFIG_HOME": "/w/cfg", "KUBECONFIG": "/w/k", "AWS_CONFIG_FILE": "/w/a"}, []string{"AWS_CONFIG_FILE", "KUBECONFIG", "XDG_CONFIG_HOME"}},
		{"prompts-and-less", map[string]string{"PS1": "$(id)", "LESS": "+!id", "LESSKEYIN": "/w/k", "ZDOTDIR": "/w"}, []string{"LESS", "LESSKEYIN", "PS1", "ZDOTDIR"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := execrun.BuildEnv(base, tc.add)
			if tc.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !slices.Contains(env, "PATH="+execrun.SafePath) || !slices.Contains(env, "HOME=/home/dev") || !slices.Contains(env, "LOGNAME=dev") {
					t.Errorf("base missing from %v", env)
				}
				for k, v := range tc.add {
					if !slices.Contains(env, k+"="+v) {
						t.Errorf("%s missing from %v", k, env)
					}
				}
				return
			}
			var ee *execrun.EnvError
			if !errors.As(err, &ee) || env != nil || !strings.Contains(err.Error(), tc.refused[0]) {
				t.Fatalf("BuildEnv = %v, %v; want an EnvError and no environment", env, err)
			}
			var got []string
			for _, r := range ee.Refused {
				got = append(got, r.Name)
				if r.Reason == "" {
					t.Errorf("%s refused without a reason", r.Name)
				}
			}
			if !slices.Equal(got, tc.refused) {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
		})
	}
}

func TestValidatePath(t *testing.T) {
	for _, p := range []string{"", "/usr/bin::/bin", ".:/bin", "/usr/bin/../bin", "bin"} {
		if execrun.ValidatePath(p) == nil {
			t.Errorf("ValidatePath(%q) accepted", p)
		}
	}
	if err := execrun.ValidatePath(execrun.SafePath); err != nil {
		t.Error(err)
	}
}

// TestEnvNamesCoverShellSafety checks that every name ShellSafety denies as env injection is
// refused by the helper too, including names only the verdict function knows.
func TestEnvNamesCoverShellSafety(t *testing.T) {
	for _, name := range []string{"LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "BASH_FUNC_ls%%",
		"PERL5OPT", "PYTHONSTARTUP", "NODE_OPTIONS", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "SSH_ASKPASS",
		"npm_config_userconfig", "PYTHONWARNINGS"} {
		if !safety.EnvInjection(name) {
			t.Fatalf("safety.EnvInjection(%q) = false; the test's premise is wrong", name)
		}
		if _, refused := execrun.CheckEnvName(name); !refused {
			t.Errorf("CheckEnvName(%q) passes a name ShellSafety denies as injection", name)
		}
	}
	for _, name := range []string{"CI", "RUST_LOG", "TERM"} {
		if _, refused := execrun.CheckEnvName(name); refused {
			t.Errorf("CheckEnvName(%q) refused an ordinary variable", name)
		}
	}
}

func TestMatchEnvAllow(t *testing.T) {
	pats := []string{"FOO", "BAR_*"}
	for name, want := range map[string]bool{"FOO": true, "FOOD": false, "BAR_": true, "BAR_X": true, "BAR": false, "foo": false} {
		if got := execrun.MatchEnvAllow(pats, name); got != want {
			t.Errorf("MatchEnvAllow(%q) = %v", name, got)
		}
	}
	if execrun.MatchEnvAllow([]string{"*"}, "X") {
		t.Error("a bare * matched")
	}
	for _, bad := range [][]string{{"*"}, {""}, {"A B"}, {"X*Y"}, {"1X"}, {"A=*"}} {
		if execrun.ValidateEnvAllow(bad) == nil {
			t.Errorf("ValidateEnvAllow(%q) accepted", bad)
		}
	}
	if err := execrun.ValidateEnvAllow([]string{"RUST_LOG", "MYAPP_*"}); err != nil {
		t.Error(err)
	}
	for _, n := range execrun.DefaultEnvAllow() {
		name := strings.TrimSuffix(n, "*") + "X"
		if _, refused := execrun.CheckEnvName(name); refused {
			t.Errorf("the floor refuses %s of the default allowlist", name)
		}
	}
}

package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/s-code-dev/s-code/internal/cli"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestMain lets testscript run this test binary as the real s-code-sandbox launcher and as
// the s-code client and as the user helper, so the scripts run commands end to end: s-code
// sandbox sends the command to the helper, which runs it through the launcher, which
// confines itself and execs the command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"s-code-sandbox":    func() { os.Exit(run(os.Args[1:])) },
		"s-code-userhelper": func() { os.Exit(userhelperMain()) },
		"s-code": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
		},
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. They need a kernel that can
// confine commands; without one they skip (or fail under S_CODE_REQUIRE_ROOT=1).
func TestScripts(t *testing.T) {
	if f := sandbox.ProbeFeatures(); !f.Confines() {
		testenv.Skip(t, "this kernel cannot confine commands: "+f.Problem)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"waitsock": cmdWaitSock},
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/cache")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/state")
			env.Setenv("XDG_RUNTIME_DIR", env.WorkDir+"/run")
			return nil
		},
	})
}

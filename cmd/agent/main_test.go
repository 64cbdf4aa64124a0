package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// TestMain lets testscript run this test binary as the real `s-code` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"s-code":            func() { os.Exit(run()) },
		"s-code-userhelper": func() { os.Exit(userhelperMain()) },
		"s-code-roothelper": func() { os.Exit(roothelperMain()) },
		"s-code-sandbox":    func() { os.Exit(sandboxMain()) },
	})
}

// TestScripts runs the CLI behaviour scripts in testdata/script: each txtar file runs
// s-code and checks its stdout, stderr and exit status.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// [landlock]: this kernel can confine commands (the sandbox checks need it).
		// [root]: the test runs as uid 0 (the root helper needs it).
		// [mcpclients]: node and the pinned MCP clients of test/mcp are installed.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				return sandbox.ProbeFeatures().Confines(), nil
			case "root":
				return os.Geteuid() == 0, nil
			case "mcpclients":
				return mcpClients()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"waitsock": cmdWaitSock, "waitfile": cmdWaitFile, "deafsock": cmdDeafSock, "mcpsession": cmdMCPSession,
			"otelcol": cmdOtelcol, "otelcheck": cmdOtelcheck, "otelwait": cmdOtelwait},
		Setup: func(env *testscript.Env) error {
			// Point the workspace-independent files of s-code into the script's sandbox.
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/state")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/cache")
			env.Setenv("XDG_RUNTIME_DIR", env.WorkDir+"/run")
			// The shipped files (the default root-helper policy, the units) for scripts that
			// check them.
			deploy, err := filepath.Abs("../../deploy")
			if err != nil {
				return err
			}
			env.Setenv("REPO_DEPLOY", deploy)
			// The sandbox's dependency caches must lie outside the workspace, and scripts use
			// $WORK as their workspace.
			cache, err := os.MkdirTemp("", "s-code-tool-cache-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(cache) })
			env.Setenv("S_CODE_TOOL_CACHE_DIR", cache)
			env.Setenv("MCP_CLIENTS", mcpClientsDir)
			return nil
		},
	})
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// cmdMCPSession runs a scripted MCP session against a real `s-code mcp` process over stdio,
// with the official Go SDK client: `mcpsession [-noelicit] SCRIPT -- COMMAND [ARG...]`.
// SCRIPT holds one step a line:
//
//	list                   print "tools: NAME ..." and "list bytes: N"
//	instructions           print the server's instructions
//	elicit ACTION          answer the next elicitations with accept, decline or cancel
//	call NAME JSON         call a tool; print "NAME: TEXT" or "NAME error: TEXT", and
//	                       "elicited: MESSAGE-LINE" for each elicitation it caused
//	                       ($rev in JSON is the revision of the last result that had one)
//
// -noelicit starts a client without the elicitation capability. Each output line is
// printed to the script's stdout.
func cmdMCPSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("mcpsession does not support !")
	}
	elicit := true
	if len(args) > 0 && args[0] == "-noelicit" {
		elicit, args = false, args[1:]
	}
	if len(args) < 3 || args[1] != "--" {
		ts.Fatalf("usage: mcpsession [-noelicit] SCRIPT -- COMMAND [ARG...]")
	}
	script := ts.ReadFile(args[0])
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"), "XDG_STATE_HOME="+ts.Getenv("XDG_STATE_HOME"),
		"XDG_RUNTIME_DIR="+ts.Getenv("XDG_RUNTIME_DIR"), "XDG_CACHE_HOME="+ts.Getenv("XDG_CACHE_HOME"),
		"S_CODE_TOOL_CACHE_DIR="+ts.Getenv("S_CODE_TOOL_CACHE_DIR"), "PATH="+ts.Getenv("PATH"))
	cmd.Stderr = os.Stderr

	var mu sync.Mutex
	answer := "accept"
	var elicited []string
	opts := &mcp.ClientOptions{}
	if elicit {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range strings.Split(req.Params.Message, "\n") {
				if strings.HasPrefix(l, "command:") || strings.HasPrefix(l, "file:") || strings.HasPrefix(l, "plan:") || strings.HasPrefix(l, "server:") || strings.HasPrefix(l, "tool:") {
					elicited = append(elicited, strings.TrimSpace(l))
				}
			}
			if len(elicited) == 0 {
				elicited = append(elicited, strings.SplitN(req.Params.Message, "\n", 3)[min(1, strings.Count(req.Params.Message, "\n"))])
			}
			return &mcp.ElicitResult{Action: answer}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "s-code-testscript", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		ts.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var out strings.Builder
	rev := ""
	sc := bufio.NewScanner(strings.NewReader(script))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "list":
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				ts.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, t := range res.Tools {
				names = append(names, t.Name)
			}
			sort.Strings(names)
			b, _ := json.Marshal(res)
			fmt.Fprintf(&out, "tools: %s\nlist bytes: %d\n", strings.Join(names, " "), len(b))
		case "instructions":
			fmt.Fprintf(&out, "%s\n", cs.InitializeResult().Instructions)
		case "elicit":
			mu.Lock()
			answer = rest
			mu.Unlock()
		case "call":
			name, argText, _ := strings.Cut(rest, " ")
			argText = strings.ReplaceAll(argText, "$rev", rev)
			var a map[string]any
			if argText != "" {
				if err := json.Unmarshal([]byte(argText), &a); err != nil {
					ts.Fatalf("call %s: arguments: %v", name, err)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
			if err != nil {
				fmt.Fprintf(&out, "%s protocol error: %v\n", name, err)
				continue
			}
			text := ""
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			var m map[string]any
			if json.Unmarshal([]byte(text), &m) == nil {
				if r, ok := m["revision"].(string); ok {
					rev = r
				}
				if ap, ok := m["applied"].([]any); ok && len(ap) == 1 {
					if r, ok := ap[0].(map[string]any)["revision"].(string); ok {
						rev = r
					}
				}
			}
			mu.Lock()
			for _, e := range elicited {
				fmt.Fprintf(&out, "elicited: %s\n", e)
			}
			elicited = nil
			mu.Unlock()
			if res.IsError {
				fmt.Fprintf(&out, "%s error: %s\n", name, text)
			} else {
				fmt.Fprintf(&out, "%s: %s\n", name, text)
			}
		default:
			ts.Fatalf("mcpsession: unknown step %q", verb)
		}
	}
	ts.Stdout().Write([]byte(out.String()))
}

// mcpClientsDir holds the pinned npm MCP clients (test/mcp, installed with npm ci).
var mcpClientsDir = func() string {
	d, err := filepath.Abs("../../test/mcp")
	if err != nil {
		panic(err)
	}
	return d
}()

// mcpClients reports whether node and the clients of test/mcp are installed. Where
// S_CODE_REQUIRE_ROOT=1 (CI) their absence is an error, not a skip.
func mcpClients() (bool, error) {
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(mcpClientsDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if nodeErr == nil && modErr == nil {
		return true, nil
	}
	if testenv.Required() {
		return false, fmt.Errorf("the MCP client tests need node and test/mcp/node_modules (scripts/ci-deps.sh runs npm ci there): node: %v; modules: %v", nodeErr, modErr)
	}
	return false, nil
}

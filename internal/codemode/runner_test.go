package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/tools"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// fixture is a real workspace and a runner over the real read-only core tools.
type fixture struct {
	ws  string
	env *tools.Env
	reg *tools.Registry
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	ws := t.TempDir()
	for p, c := range files {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := wsfs.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	reg, err := tools.NewRegistry(tools.Core(tools.EditLines)...)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{ws: ws, env: &tools.Env{Root: root}, reg: reg}
}

// runner gives the read-only core tools except update_plan (as mcpserver does) and makes the
// others direct.
func (f *fixture) runner(t *testing.T, b Budgets) *Runner {
	t.Helper()
	var given []tools.Tool
	var direct []string
	for _, tl := range f.reg.List() {
		if tl.ReadOnly() && tl.Name() != "update_plan" {
			given = append(given, tl)
		} else {
			direct = append(direct, tl.Name())
		}
	}
	r, err := New(given, direct, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) run(t *testing.T, b Budgets, code string) (*Result, *tools.Error) {
	t.Helper()
	res, err := f.runner(t, b).Run(context.Background(), f.env, code, nil)
	if res == nil {
		t.Fatal("Run returned no result")
	}
	if err == nil {
		return res, nil
	}
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %T %v, want *tools.Error", err, err)
	}
	return res, te
}

func value(t *testing.T, res *Result) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
	return v
}

func TestNewRefusesWritingTools(t *testing.T) {
	f := newFixture(t, nil)
	for _, name := range []string{"exec_command", "apply_patch", "undo_turn"} {
		tl, _ := f.reg.Lookup(name)
		if _, err := New([]tools.Tool{tl}, nil, Budgets{}); err == nil || !strings.Contains(err.Error(), "not read-only") {
			t.Errorf("New with %s: %v, want a refusal", name, err)
		}
	}
	if _, err := New(nil, nil, Budgets{Calls: -1}); err == nil {
		t.Error("a negative budget was accepted")
	}
	r := f.runner(t, Budgets{})
	want := []string{"git_blame", "git_diff", "git_log", "git_show", "git_status", "glob", "grep", "list_dir", "read_file"}
	if got := r.Tools(); !reflect.DeepEqual(got, want) {
		t.Fatalf("given %v, want %v", got, want)
	}
}

func TestReadsAndGrepsWithCallLog(t *testing.T) {
	f := newFixture(t, map[string]string{
		"a.go":       "package a\n// TODO: first\nfunc A() {}\n",
		"b.go":       "package b\nfunc B() {}\n",
		"sub/c.go":   "package c\n// TODO: second\n",
		"README.txt": "not go\n",
	})
	var observed []Call
	code := `
		const files = tools.glob({pattern: "**/*.go", sort: "path"}).matches.map(m => m.path);
		const firstLines = files.map(p => tools.read_file({path: p}).numbered_content.split("\n")[0].split("\t")[1]);
		const todos = tools.grep({pattern: "TODO"}).matches.map(m => m.path + ":" + m.line);
		return {files, firstLines, todos};`
	res, err := f.runner(t, Budgets{}).Run(context.Background(), f.env, code, func(c Call) { observed = append(observed, c) })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"files":      []any{"a.go", "b.go", "sub/c.go"},
		"firstLines": []any{"package a", "package b", "package c"},
		"todos":      []any{"a.go:2", "sub/c.go:2"},
	}
	if got := value(t, res); !reflect.DeepEqual(got, want) {
		t.Fatalf("value %v, want %v", got, want)
	}
	wantCalls := []struct{ tool, args string }{
		{"glob", `{"pattern":"**/*.go","sort":"path"}`},
		{"read_file", `{"path":"a.go"}`},
		{"read_file", `{"path":"b.go"}`},
		{"read_file", `{"path":"sub/c.go"}`},
		{"grep", `{"pattern":"TODO"}`},
	}
	if len(res.Calls) != len(wantCalls) || !reflect.DeepEqual(observed, res.Calls) {
		t.Fatalf("calls %+v (observed %+v), want %d", res.Calls, observed, len(wantCalls))
	}
	var total int64
	for i, c := range res.Calls {
		w := wantCalls[i]
		if c.Seq != i+1 || c.Tool != w.tool || string(c.Arguments) != w.args || !c.OK || c.Error != "" || c.DurationMS < 0 {
			t.Errorf("call %d: %+v, want %s %s", i+1, c, w.tool, w.args)
		}
		// The size is that of the tool's own JSON result for the same arguments.
		tl, _ := f.reg.Lookup(c.Tool)
		out, err := tl.Call(context.Background(), f.env, c.Arguments)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out)
		if c.Bytes != len(b) {
			t.Errorf("call %d: %d bytes, the tool's result is %d", c.Seq, c.Bytes, len(b))
		}
		total += int64(c.Bytes)
	}
	if res.ChildBytes != total {
		t.Errorf("child bytes %d, sum of calls %d", res.ChildBytes, total)
	}
}

func TestChildErrorsAreCatchable(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	res, err := f.run(t, Budgets{}, `
		try { tools.read_file({path: "missing.txt"}); return "read"; }
		catch (e) { return [e.name, e.code, e.message.startsWith("read_file: ")]; }`)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, res); !reflect.DeepEqual(got, []any{"ToolError", "not_found", true}) {
		t.Fatalf("caught %v", got)
	}
	if c := res.Calls[0]; c.OK || !strings.HasPrefix(c.Error, "not_found: ") || c.Bytes == 0 {
		t.Fatalf("failed call logged as %+v", c)
	}
	// Strict decoding holds as for the MCP tool: an unknown argument is refused.
	res, err = f.run(t, Budgets{}, `try { tools.read_file({path: "a.txt", bogus: 1}) } catch (e) { return e.code }`)
	if err != nil || string(res.Value) != `"invalid_arguments"` {
		t.Fatalf("unknown argument: %s %v", res.Value, err)
	}
}

func TestDirectToolsNameThemselves(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	for _, name := range []string{"exec_command", "apply_patch", "undo_turn", "update_plan"} {
		t.Run(name, func(t *testing.T) {
			res, err := f.run(t, Budgets{}, `tools.`+name+`({command: "touch pwned", files: []}); return "ran";`)
			if err == nil || err.Code != CodeProgram {
				t.Fatalf("%s from JavaScript: %s %v, want a program error", name, res.Value, err)
			}
			want := "call the " + name + " tool directly"
			if !strings.Contains(err.Message, want) || !strings.Contains(err.Message, "DirectToolError") {
				t.Fatalf("message %q does not say %q", err.Message, want)
			}
			if len(res.Calls) != 0 {
				t.Fatalf("a direct tool made child calls: %+v", res.Calls)
			}
			if _, serr := os.Stat(filepath.Join(f.ws, "pwned")); serr == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

func TestTimeBudgetStopsLoops(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	for name, code := range map[string]string{
		"for":          `for (;;) {}`,
		"catch-all":    `for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }`,
		"busy-strings": `let s = ""; for (;;) { s = String(Math.random()); }`,
		// A backtracking regular expression (regexp2) runs in one native call.
		"backtracking": `for (;;) { /^(a+)+\1$/.test("a".repeat(40) + "b"); }`,
	} {
		t.Run(name, func(t *testing.T) {
			t0 := time.Now()
			_, err := f.run(t, Budgets{Time: 300 * time.Millisecond}, code)
			el := time.Since(t0)
			if err == nil || err.Code != CodeTimeBudget || !strings.Contains(err.Message, "300ms") {
				t.Fatalf("err %v, want the time budget", err)
			}
			if el > 3*time.Second {
				t.Fatalf("stopped after %s", el)
			}
		})
	}
	// The caller's cancellation stops it too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := f.runner(t, Budgets{}).Run(ctx, f.env, `for (;;) {}`, nil)
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != CodeTimeBudget {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestCallBudgetHoldsEvenWhenCaught(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	res, err := f.run(t, Budgets{Calls: 5}, `
		let n = 0;
		for (let i = 0; i < 10; i++) { try { tools.read_file({path: "a.txt"}); n++; } catch (e) {} }
		return n;`)
	if err == nil || err.Code != CodeCallBudget || !strings.Contains(err.Message, "5 child calls") {
		t.Fatalf("err %v, want the call budget", err)
	}
	if len(res.Calls) != 5 {
		t.Fatalf("%d calls logged, want 5", len(res.Calls))
	}
	if res.Value != nil {
		t.Fatalf("a stopped program returned %s", res.Value)
	}
}

func TestBytesBudget(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 600) // 10200 bytes
	f := newFixture(t, map[string]string{"big.txt": big})
	res, err := f.run(t, Budgets{ChildBytes: 50_000}, `
		const sizes = [];
		for (let i = 0; i < 10; i++) { try { sizes.push(tools.read_file({path: "big.txt"}).numbered_content.length) } catch (e) {} }
		return sizes;`)
	if err == nil || err.Code != CodeBytesBudget {
		t.Fatalf("err %v, want the bytes budget", err)
	}
	last := res.Calls[len(res.Calls)-1]
	if last.OK || !strings.HasPrefix(last.Error, CodeBytesBudget) {
		t.Fatalf("the call over the budget: %+v", last)
	}
	var sum int64
	for _, c := range res.Calls[:len(res.Calls)-1] {
		if !c.OK {
			t.Fatalf("a call within the budget failed: %+v", c)
		}
		sum += int64(c.Bytes)
	}
	if sum > 50_000 || res.ChildBytes <= 50_000 || len(res.Calls) >= 10 {
		t.Fatalf("delivered %d bytes in %d calls (total %d)", sum, len(res.Calls), res.ChildBytes)
	}
}

func TestResultBudgetAndShape(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct{ name, code, code2, value string }{
		{"too big", `return "x".repeat(2000)`, CodeResultBudget, ""},
		{"function", `return function () {}`, CodeResult, ""},
		{"undefined", `let x = 1`, "", "null"},
		{"async", `return (async () => { await null; return 42 })()`, "", "42"},
		{"never settles", `return new Promise(() => {})`, CodeProgram, ""},
		{"syntax", `return (`, CodeProgram, ""},
		{"throw", `throw new Error("boom")`, CodeProgram, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := f.run(t, Budgets{ResultBytes: 1000}, c.code)
			if c.code2 == "" {
				if err != nil || string(res.Value) != c.value {
					t.Fatalf("value %s err %v, want %s", res.Value, err, c.value)
				}
				return
			}
			if err == nil || err.Code != c.code2 {
				t.Fatalf("err %v, want %s", err, c.code2)
			}
		})
	}
}

func TestMemoryBudget(t *testing.T) {
	f := newFixture(t, nil)
	for name, code := range map[string]string{
		"repeat":   `return "x".repeat(1e9).length`,
		"padStart": `return "x".padStart(1e9).length`,
		"doubling": `let s = "xxxxxxxx"; for (;;) { s = s + s; } `,
		"array":    `const a = []; for (;;) { a.push({n: a.length, s: "v".repeat(512) + a.length}); }`,
		"sparse":   `const a = []; a[1e9] = 1; return a.indexOf(2)`,
		"fill":     `return new Array(1e9).fill(0).length`,
		"join":     `const a = []; a.length = 1e9; return a.join("ab").length`,
		"from":     `return Array.from({length: 1e9}).length`,
		"call":     `return Array.prototype.map.call({length: 1e9}, x => x).length`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.run(t, Budgets{Memory: 64 << 20, Time: 20 * time.Second}, code)
			if err == nil || err.Code != CodeMemory {
				t.Fatalf("err %v, want the memory budget", err)
			}
		})
	}
	res, err := f.run(t, Budgets{Memory: 64 << 20}, `return ["ab".repeat(1000).length, [3, 1, 2].sort().join(""), Array.from({length: 3}, (_, i) => i).map(String).join(","), [1, 2, 3].indexOf(3)]`)
	if err != nil || string(res.Value) != `[2000,"123","0,1,2",2]` {
		t.Fatalf("small strings and arrays: %s %v", res.Value, err)
	}
}

// ecmaGlobals are the global bindings a program may see: ECMAScript's own (as goja provides
// them, less absentGlobals) and tools.
var ecmaGlobals = []string{
	"AggregateError", "Array", "BigInt", "Boolean", "Date", "Error", "EvalError", "Function", "Infinity", "JSON", "Map", "Math",
	"NaN", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set", "String",
	"Symbol", "SyntaxError", "TypeError", "URIError", "WeakMap", "WeakSet", "decodeURI", "decodeURIComponent", "encodeURI",
	"encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "tools", "undefined", "unescape",
}

func TestNoReachBeyondTools(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("outside\n"), 0o644)
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	t.Setenv("CODEMODE_SECRET", "leak")

	// The global scope is exactly ECMAScript's and tools: nothing of the host.
	res, err := f.run(t, Budgets{}, `return Reflect.ownKeys(globalThis).filter(k => typeof k === "string")`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	json.Unmarshal(res.Value, &got)
	sort.Strings(got)
	want := append([]string(nil), ecmaGlobals...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("globals %v\nwant %v", got, want)
	}

	for _, c := range []struct{ name, code, want string }{
		{"require", `return typeof require`, `"undefined"`},
		{"process", `return [typeof process, typeof Deno, typeof Bun, typeof os, typeof fs]`, `["undefined","undefined","undefined","undefined","undefined"]`},
		{"timers and console", `return [typeof setTimeout, typeof setInterval, typeof queueMicrotask, typeof console, typeof fetch, typeof XMLHttpRequest]`,
			`["undefined","undefined","undefined","undefined","undefined","undefined"]`},
		{"Function constructor", `return Function("return [typeof require, typeof process, this === globalThis]")()`, `["undefined","undefined",true]`},
		{"constructor chain", `return tools.read_file.constructor("return typeof require")()`, `"undefined"`},
		{"indirect eval", `return (0, eval)("typeof process + typeof require")`, `"undefinedundefined"`},
		{"Reflect on tools", `return [Reflect.set(tools, "read_file", () => "fake"), Reflect.defineProperty(tools, "exec", {value: 1}), Reflect.deleteProperty(tools, "grep"), Object.isFrozen(tools), Object.isFrozen(tools.read_file)]`,
			`[false,false,false,true,true]`},
		{"global tools", `globalThis.tools = {read_file: () => "fake"}; return tools.read_file({path: "a.txt"}).numbered_content`, `"     1\ta\n"`},
		{"prototype pollution", `Object.prototype.path = "` + secret + `"; Object.prototype.exec_command = () => "ran";
			Function.prototype.call = () => "hijacked";
			let r; try { tools.read_file({}) } catch (e) { r = e.code }
			return [r, tools.exec_command === Object.prototype.exec_command]`, `["invalid_arguments",false]`},
		{"JSON tampering", `JSON.parse = () => ({content: "fake"}); JSON.stringify = () => '{"path":"` + secret + `"}';
			return tools.read_file({path: "a.txt"}).numbered_content`, `"     1\ta\n"`},
		{"absolute path", `try { return tools.read_file({path: "` + secret + `"}).numbered_content } catch (e) { return e.code }`, `"outside_workspace"`},
		{"dot-dot", `try { return tools.read_file({path: "../` + filepath.Base(filepath.Dir(secret)) + `/secret.txt"}).numbered_content } catch (e) { return e.code }`, `"outside_workspace"`},
		{"environment", `return JSON.stringify(globalThis).includes("leak")`, `false`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := f.run(t, Budgets{}, c.code)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if c.want != "" && string(res.Value) != c.want {
				t.Fatalf("value %s, want %s", res.Value, c.want)
			}
			if strings.Contains(string(res.Value), `outside\n`) {
				t.Fatalf("reached beyond the tools: %s", res.Value)
			}
		})
	}
	// import does not even compile: a script has no module loader.
	for _, code := range []string{`import fs from "fs"; return fs.readFileSync("/etc/passwd")`, `return import("fs")`, `return eval('import("fs")')`} {
		res, err := f.run(t, Budgets{}, code)
		if err == nil || err.Code != CodeProgram || len(res.Calls) != 0 {
			t.Fatalf("%s: %s %v", code, res.Value, err)
		}
	}
}

func TestStuckNativeIsReported(t *testing.T) {
	f := newFixture(t, nil)
	stuck := make(chan error, 1)
	b := Budgets{Time: 200 * time.Millisecond, OnStuck: func(err error) { stuck <- err }}
	done := make(chan *tools.Error, 1)
	t0 := time.Now()
	go func() {
		// goja's JSON.stringify checks for cycles by a linear scan of the nesting: quadratic,
		// and one native call the interrupt cannot enter.
		_, err := f.run(t, b, `let a = []; for (let i = 0; i < 25000; i++) a = [a]; return JSON.stringify(a).length`)
		done <- err
	}()
	select {
	case err := <-stuck:
		if el := time.Since(t0); el > StuckGrace+3*time.Second || !strings.Contains(err.Error(), CodeTimeBudget) {
			t.Fatalf("OnStuck after %s: %v", el, err)
		}
	case err := <-done:
		t.Skipf("the program returned before it was stuck (%v): this machine is fast enough that the case proves nothing", err)
	case <-time.After(60 * time.Second):
		t.Fatal("OnStuck was not called")
	}
	if err := <-done; err == nil || err.Code != CodeTimeBudget {
		t.Fatalf("the stuck program ended with %v", err)
	}
}

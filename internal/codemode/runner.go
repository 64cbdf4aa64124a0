package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"

	"github.com/s-code-dev/s-code/internal/tools"
)

// Memory budget: what it holds and what it does not.
//
// goja has no heap limit of its own, so Code Mode bounds memory three ways:
//   - Child output is counted: the results of child calls together stay under
//     Budgets.ChildBytes, so a program cannot pull the workspace into memory.
//   - The built-ins that make a string or buffer of a size given by an argument in one step are
//     checked before they allocate: String.prototype.repeat, padStart and padEnd refuse a result
//     over Budgets.Memory/4 bytes; the Array methods that loop natively over this.length, and
//     Array.from, refuse a length over Budgets.Memory/64 elements (arrayLoops); ArrayBuffer,
//     SharedArrayBuffer, DataView and the typed arrays are not given at all. The call stack is
//     limited (maxCallStack frames).
//   - Growth step by step (s += s, arrays pushed in a loop, join, JSON.stringify) is sampled: every
//     samplePeriod the process's heap (runtime/metrics /memory/classes/heap/objects:bytes) is
//     compared with its size when the program started; past Budgets.Memory a garbage collection
//     confirms it and the engine is interrupted.
//
// The sample is process-wide (another session's allocations count too, which fails closed), and a
// single step between two samples can overshoot the budget by what that step allocates (at most
// one doubling of the largest value the program holds). A native built-in is not interrupted
// while it runs: the time budget holds between instructions, and child calls see their context
// cancelled. The one built-in that can run without bound on a small input, a backtracking
// regular expression (goja uses regexp2 for backreferences and lookaround; other patterns run
// on Go's linear-time regexp), gives up after maxMatch: goja then reads it as no match, and
// the interrupt stops the program at its next instruction if the time budget has passed.
// Other natives can still run long in one call (a loop over a huge sparse array, JSON.stringify
// of a value nested tens of thousands deep is quadratic in goja); a program stopped by a
// budget that has not returned StuckGrace later is reported to Budgets.OnStuck, whose caller
// ends the process (nothing else can stop a goroutine).
const (
	samplePeriod = 5 * time.Millisecond
	maxCallStack = 2048
	maxArgsShown = 4096 // bytes of a child call's arguments kept in the call log
	maxMatch     = time.Second
)

// boundMatches sets regexp2's match timeout, read when goja compiles a pattern, to maxMatch,
// unless someone in the process already set one. It is process-wide: regexp2 has no other knob
// goja passes on, and only goja uses regexp2 here.
var boundMatches = sync.OnceFunc(func() {
	if regexp2.DefaultMatchTimeout == time.Duration(math.MaxInt64) {
		regexp2.DefaultMatchTimeout = maxMatch
	}
})

// absentGlobals are the bindings of goja's standard library Code Mode does not give: buffers
// that allocate a size given by the program in one step, and weak references (which expose the
// collector's timing).
var absentGlobals = []string{
	"ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray",
	"Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array",
	"BigInt64Array", "BigUint64Array", "WeakRef", "FinalizationRegistry",
	"GoError", // goja's own error type: its objects carry the Go error value
}

// Call is one child call in the call log.
type Call struct {
	Seq        int             `json:"seq"`             // 1, 2, ... in the order the program made them
	Tool       string          `json:"tool"`            // the tool's name
	Arguments  json.RawMessage `json:"arguments"`       // the arguments as sent (JSON), or a string saying how long they were when over 4 KiB
	OK         bool            `json:"ok"`              // the tool answered and its result was handed to the program
	Error      string          `json:"error,omitempty"` // "code: message" of a failed call
	Bytes      int             `json:"bytes"`           // size of the result's JSON (or the error's), in bytes
	DurationMS float64         `json:"duration_ms"`     // wall time of the call, in milliseconds
}

// Result is what a program returned and what it called.
type Result struct {
	// Value is the JSON of the program's returned value (null for undefined).
	Value json.RawMessage `json:"value"`
	// Calls is the call log, in order.
	Calls []Call `json:"calls"`
	// ChildBytes is the total size of the child calls' results, in bytes.
	ChildBytes int64 `json:"child_bytes"`
	// DurationMS is the program's wall time, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
}

// Runner runs Code Mode programs over the tools it was given. It is safe for concurrent use;
// each Run has its own engine.
type Runner struct {
	tools   map[string]tools.Tool
	names   []string          // sorted names of tools
	direct  map[string]string // absent tool → the error a call of it throws
	budgets Budgets
}

// New returns a Runner whose programs see exactly given as functions of the `tools` object.
// Every tool in given must be read-only (tools.Tool.ReadOnly); New refuses any other, and a
// duplicate. direct names the tools that stay direct tools (exec_command, apply_patch, ...):
// each is a function of `tools` that throws an error naming the direct tool to use instead.
func New(given []tools.Tool, direct []string, b Budgets) (*Runner, error) {
	b, err := b.withDefaults()
	if err != nil {
		return nil, err
	}
	boundMatches()
	r := &Runner{tools: map[string]tools.Tool{}, direct: map[string]string{}, budgets: b}
	for _, t := range given {
		if t == nil || !t.ReadOnly() {
			name := "nil"
			if t != nil {
				name = t.Name()
			}
			return nil, fmt.Errorf("codemode: tool %s is not read-only: Code Mode is given read-only tools only", name)
		}
		if _, dup := r.tools[t.Name()]; dup {
			return nil, fmt.Errorf("codemode: tool %s given twice", t.Name())
		}
		r.tools[t.Name()] = t
		r.names = append(r.names, t.Name())
	}
	sort.Strings(r.names)
	for _, d := range direct {
		if _, given := r.tools[d]; given {
			return nil, fmt.Errorf("codemode: tool %s is both given and direct", d)
		}
		r.direct[d] = fmt.Sprintf("%s is not available in Code Mode, which is given only the read-only tools (%s): "+
			"call the %s tool directly, as its own tool call (edits, commands and approvals stay with the direct tools)",
			d, strings.Join(r.names, ", "), d)
	}
	return r, nil
}

// Tools returns the names of the tools programs are given, sorted.
func (r *Runner) Tools() []string { return append([]string(nil), r.names...) }

// Budgets returns the runner's budgets, defaults filled in.
func (r *Runner) Budgets() Budgets { return r.budgets }

// Run runs code, the body of a JavaScript function (so `return` gives the result), with the
// capabilities of env that read-only tools use (Root, Git, Home; never Exec, Turns or
// Approver). observe, when not nil, is called after each child call, in order, on the
// program's goroutine. Run returns the result, or the call log so far and a *tools.Error whose
// Code is one of the Code* constants.
func (r *Runner) Run(ctx context.Context, env *tools.Env, code string, observe func(Call)) (*Result, error) {
	start := time.Now()
	res := &Result{Calls: []Call{}}
	done := func(err error) (*Result, error) {
		res.DurationMS = ms(time.Since(start))
		return res, err
	}
	prog, err := goja.Compile("code_mode.js", "(function () {"+code+"\n})()", false)
	if err != nil {
		return done(&tools.Error{Code: CodeProgram, Message: "the program does not compile: " + err.Error()})
	}
	ctx, cancel := context.WithTimeout(ctx, r.budgets.Time)
	defer cancel()
	x := &run{r: r, ctx: ctx, res: res, observe: observe, rt: goja.New()}
	if env != nil {
		x.env = &tools.Env{Root: env.Root, Git: env.Git, Home: env.Home}
	} else {
		x.env = &tools.Env{}
	}
	if err := x.setup(); err != nil {
		return done(err)
	}

	stopWatch := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			x.stop(&tools.Error{Code: CodeTimeBudget, Message: fmt.Sprintf("the program ran out of its time budget (%s) and was stopped", r.budgets.Time)})
		} else {
			x.stop(&tools.Error{Code: CodeTimeBudget, Message: "the program was cancelled (the client cancelled the call or the session ended)"})
		}
	})
	defer stopWatch()
	stopSampler := x.sampleMemory()
	defer stopSampler()

	v, err := x.rt.RunProgram(prog)
	if err == nil {
		v, err = x.settle(v)
	}
	if err == nil {
		err = x.encode(v)
	}
	if serr := x.stopped(); serr != nil {
		// A budget stopped the program: that is the error, whatever the engine made of it.
		return done(serr)
	}
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) {
			return done(te)
		}
		return done(&tools.Error{Code: CodeProgram, Message: "the program failed: " + err.Error()})
	}
	return done(nil)
}

// run is one program's state. Everything but stopErr is used only on the program's goroutine.
type run struct {
	r       *Runner
	ctx     context.Context
	env     *tools.Env
	rt      *goja.Runtime
	res     *Result
	observe func(Call)

	parse, stringify goja.Callable
	errorCtor        goja.Constructor

	mu        sync.Mutex // guards stopErr and stopped
	stopErr   *tools.Error
	stoppedAt time.Time
}

// stop records err (the first one wins) and interrupts the engine; safe from any goroutine.
func (x *run) stop(err *tools.Error) {
	x.mu.Lock()
	if x.stopErr == nil {
		x.stopErr, x.stoppedAt = err, time.Now()
	}
	x.mu.Unlock()
	x.rt.Interrupt(err)
}

func (x *run) stopped() *tools.Error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stopErr
}

// setup builds the program's global scope: goja's ECMAScript built-ins less absentGlobals, the
// size-checked string built-ins, and a frozen `tools` object. goja itself gives no require, no
// module loader (import() throws), no console, timers, file system, network, process or
// environment: nothing here adds one.
func (x *run) setup() error {
	rt := x.rt
	rt.SetMaxCallStackSize(maxCallStack)
	g := rt.GlobalObject()
	for _, name := range absentGlobals {
		if err := g.Delete(name); err != nil {
			return fmt.Errorf("codemode: remove %s: %w", name, err)
		}
	}
	json := g.Get("JSON").ToObject(rt)
	var ok bool
	if x.parse, ok = goja.AssertFunction(json.Get("parse")); !ok {
		return errors.New("codemode: JSON.parse missing")
	}
	if x.stringify, ok = goja.AssertFunction(json.Get("stringify")); !ok {
		return errors.New("codemode: JSON.stringify missing")
	}
	if x.errorCtor, ok = goja.AssertConstructor(g.Get("Error")); !ok {
		return errors.New("codemode: Error missing")
	}
	freeze, ok := goja.AssertFunction(g.Get("Object").ToObject(rt).Get("freeze"))
	if !ok {
		return errors.New("codemode: Object.freeze missing")
	}
	if err := x.checkSizes(); err != nil {
		return err
	}

	obj := rt.NewObject()
	define := func(name string, fn func(goja.FunctionCall) goja.Value) error {
		f := rt.ToValue(fn).ToObject(rt)
		if _, err := freeze(goja.Undefined(), f); err != nil {
			return err
		}
		return obj.DefineDataProperty(name, f, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	for _, name := range x.r.names {
		if err := define(name, x.child(x.r.tools[name])); err != nil {
			return fmt.Errorf("codemode: define tools.%s: %w", name, err)
		}
	}
	for name, msg := range x.r.direct {
		if err := define(name, x.absent(name, msg)); err != nil {
			return fmt.Errorf("codemode: define tools.%s: %w", name, err)
		}
	}
	if _, err := freeze(goja.Undefined(), obj); err != nil {
		return fmt.Errorf("codemode: freeze tools: %w", err)
	}
	if err := g.DefineDataProperty("tools", obj, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return fmt.Errorf("codemode: define tools: %w", err)
	}
	return nil
}

// checkSizes replaces String.prototype.repeat, padStart and padEnd with versions that refuse
// a result over Budgets.Memory/4 bytes before allocating it.
func (x *run) checkSizes() error {
	rt := x.rt
	limit := float64(x.r.budgets.Memory / 4)
	proto := rt.GlobalObject().Get("String").ToObject(rt).Get("prototype").ToObject(rt)
	wrap := func(name string, size func(this string, c goja.FunctionCall) float64) error {
		orig, ok := goja.AssertFunction(proto.Get(name))
		if !ok {
			return fmt.Errorf("codemode: String.prototype.%s missing", name)
		}
		fn := func(c goja.FunctionCall) goja.Value {
			if goja.IsUndefined(c.This) || goja.IsNull(c.This) {
				return x.call(orig, c) // the original's TypeError
			}
			if n := size(c.This.String(), c); n > limit {
				x.stop(&tools.Error{Code: CodeMemory, Message: fmt.Sprintf(
					"String.prototype.%s would make a string of %.0f bytes, over the memory budget's limit of %.0f bytes for one value", name, n, limit)})
				x.throwStop()
			}
			return x.call(orig, c)
		}
		return proto.DefineDataProperty(name, rt.ToValue(fn), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	if err := wrap("repeat", func(s string, c goja.FunctionCall) float64 {
		return float64(len(s)) * c.Argument(0).ToFloat()
	}); err != nil {
		return err
	}
	pad := func(s string, c goja.FunctionCall) float64 { return c.Argument(0).ToFloat() * 2 } // UTF-16 worst case
	if err := wrap("padStart", pad); err != nil {
		return err
	}
	if err := wrap("padEnd", pad); err != nil {
		return err
	}
	return x.checkLengths()
}

// arrayLoops are the Array.prototype methods that loop natively over this.length (holes
// included) or make an array of it: on a sparse array of length 1e9 each is one long native
// call, so each refuses a length over Budgets.Memory/64 elements first.
var arrayLoops = []string{
	"at", "concat", "copyWithin", "entries", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"flat", "flatMap", "forEach", "includes", "indexOf", "join", "keys", "lastIndexOf", "map", "reduce", "reduceRight",
	"reverse", "slice", "some", "sort", "splice", "toLocaleString", "toReversed", "toSorted", "toSpliced", "toString", "values", "with",
}

// checkLengths wraps arrayLoops and Array.from (whose array-like argument's length is checked).
func (x *run) checkLengths() error {
	rt := x.rt
	limit := float64(x.r.budgets.Memory / 64)
	tooLong := func(what string, v goja.Value) {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return
		}
		o, ok := v.(*goja.Object)
		if !ok {
			return
		}
		if n := o.Get("length"); n != nil && n.ToFloat() > limit {
			x.stop(&tools.Error{Code: CodeMemory, Message: fmt.Sprintf(
				"%s over an array of length %.0f, over the memory budget's limit of %.0f elements", what, n.ToFloat(), limit)})
			x.throwStop()
		}
	}
	arrayCtor := rt.GlobalObject().Get("Array").ToObject(rt)
	proto := arrayCtor.Get("prototype").ToObject(rt)
	replace := func(obj *goja.Object, name, what string, arg func(c goja.FunctionCall) goja.Value) error {
		orig, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return nil // not in this engine's version
		}
		fn := rt.ToValue(func(c goja.FunctionCall) goja.Value {
			tooLong(what, arg(c))
			return x.call(orig, c)
		}).ToObject(rt)
		_ = fn.DefineDataProperty("name", rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return obj.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	for _, name := range arrayLoops {
		if err := replace(proto, name, "Array.prototype."+name, func(c goja.FunctionCall) goja.Value { return c.This }); err != nil {
			return err
		}
	}
	return replace(arrayCtor, "from", "Array.from", func(c goja.FunctionCall) goja.Value { return c.Argument(0) })
}

// call calls fn with c's this and arguments, rethrowing its exception.
func (x *run) call(fn goja.Callable, c goja.FunctionCall) goja.Value {
	v, err := fn(c.This, c.Arguments...)
	if err != nil {
		panic(err)
	}
	return v
}

// throw throws a JavaScript Error with name, code and message.
func (x *run) throw(name, code, msg string) {
	e, err := x.errorCtor(nil, x.rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	_ = e.Set("name", name)
	_ = e.Set("code", code)
	panic(e)
}

// throwStop throws the error that stopped the program (the interrupt already set stops the
// program at its next instruction, so a catch cannot go on).
func (x *run) throwStop() {
	err := x.stopped()
	x.throw("BudgetError", err.Code, err.Message)
}

func (x *run) absent(name, msg string) func(goja.FunctionCall) goja.Value {
	return func(goja.FunctionCall) goja.Value {
		x.throw("DirectToolError", "direct_tool", msg)
		return nil
	}
}

// child returns the JavaScript function of the read-only tool t: it takes one argument object
// (JSON-encoded as the MCP tool's arguments), calls t and returns its structured result as
// JSON would decode it, or throws a ToolError with the tool's code and message.
func (x *run) child(t tools.Tool) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		if err := x.stopped(); err != nil {
			x.throwStop()
		}
		b := x.r.budgets
		if len(x.res.Calls) >= b.Calls {
			x.stop(&tools.Error{Code: CodeCallBudget, Message: fmt.Sprintf(
				"the program made %d child calls, its call budget, and asked for another (%s): batch fewer reads per program", b.Calls, t.Name())})
			x.throwStop()
		}
		args := []byte("{}")
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			s, err := x.stringify(goja.Undefined(), a)
			if err != nil {
				panic(err)
			}
			if goja.IsUndefined(s) {
				x.throw("ToolError", "invalid_arguments", fmt.Sprintf("tools.%s: the argument has no JSON form; pass an object", t.Name()))
			}
			args = []byte(s.String())
		}
		call := Call{Seq: len(x.res.Calls) + 1, Tool: t.Name(), Arguments: shownArgs(args)}
		t0 := time.Now()
		out, err := t.Call(x.ctx, x.env, args)
		var body []byte
		if err == nil {
			if body, err = json.Marshal(out); err != nil {
				err = fmt.Errorf("encode the result of %s: %w", t.Name(), err)
			}
		}
		call.DurationMS = ms(time.Since(t0))
		var te *tools.Error
		if err != nil {
			if !errors.As(err, &te) {
				te = &tools.Error{Code: "error", Message: err.Error()}
			}
			body, _ = json.Marshal(te)
			call.Error = te.Code + ": " + te.Message
		}
		call.Bytes = len(body)
		call.OK = err == nil
		x.res.ChildBytes += int64(len(body))
		over := x.res.ChildBytes > b.ChildBytes
		if over && call.OK {
			call.OK = false
			call.Error = CodeBytesBudget + ": result withheld"
		}
		x.res.Calls = append(x.res.Calls, call)
		if x.observe != nil {
			x.observe(call)
		}
		if over {
			x.stop(&tools.Error{Code: CodeBytesBudget, Message: fmt.Sprintf(
				"child calls returned %d bytes, over the budget of %d bytes (call %d, %s): read less (ranges, max_results) or split the work",
				x.res.ChildBytes, b.ChildBytes, call.Seq, t.Name())})
			x.throwStop()
		}
		if te != nil {
			x.throw("ToolError", te.Code, t.Name()+": "+te.Message)
		}
		v, perr := x.parse(goja.Undefined(), x.rt.ToValue(string(body)))
		if perr != nil {
			panic(perr)
		}
		return v
	}
}

// shownArgs returns args for the call log: as they are up to maxArgsShown bytes, else a JSON
// string saying how long they were.
func shownArgs(args []byte) json.RawMessage {
	if len(args) <= maxArgsShown {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(fmt.Sprintf("(%d bytes of arguments, not shown)", len(args)))
	return b
}

// settle returns the value a returned promise settled to (async functions run their jobs when
// the program ends; there are no timers, so a promise still pending never settles).
func (x *run) settle(v goja.Value) (goja.Value, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		return nil, &tools.Error{Code: CodeProgram, Message: "the program's promise was rejected: " + p.Result().String()}
	default:
		return nil, &tools.Error{Code: CodeProgram, Message: "the program returned a promise that never settles (Code Mode has no timers; the tools are synchronous)"}
	}
}

// encode puts the JSON of v into the result, within Budgets.ResultBytes.
func (x *run) encode(v goja.Value) error {
	if v == nil || goja.IsUndefined(v) {
		x.res.Value = json.RawMessage("null")
		return nil
	}
	s, err := x.stringify(goja.Undefined(), v)
	if err != nil {
		return &tools.Error{Code: CodeResult, Message: "the returned value cannot be encoded as JSON: " + err.Error()}
	}
	if goja.IsUndefined(s) {
		return &tools.Error{Code: CodeResult, Message: "the returned value has no JSON form (a function or a symbol): return data"}
	}
	str := s.String()
	if int64(len(str)) > x.r.budgets.ResultBytes {
		return &tools.Error{Code: CodeResultBudget, Message: fmt.Sprintf(
			"the returned value is %d bytes of JSON, over the result budget of %d bytes: return less (counts, paths, excerpts)", len(str), x.r.budgets.ResultBytes)}
	}
	x.res.Value = json.RawMessage(str)
	return nil
}

// sampleMemory starts the heap sampler (see "Memory budget" above) and returns its stop.
func (x *run) sampleMemory() func() {
	base := heapObjects()
	limit := base + uint64(x.r.budgets.Memory)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(samplePeriod)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if x.stuck() {
				return
			}
			if x.stopped() != nil || heapObjects() <= limit {
				continue
			}
			runtime.GC() // garbage is not the program's memory: confirm with live objects
			if h := heapObjects(); h > limit {
				x.stop(&tools.Error{Code: CodeMemory, Message: fmt.Sprintf(
					"the program's memory grew by %d MiB, over the memory budget of %d MiB, and was stopped: build smaller strings and arrays",
					(h-base)>>20, x.r.budgets.Memory>>20)})
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// stuck reports whether the program was stopped more than StuckGrace ago and has not
// returned; it then calls OnStuck once.
func (x *run) stuck() bool {
	x.mu.Lock()
	err, at := x.stopErr, x.stoppedAt
	x.mu.Unlock()
	if err == nil || time.Since(at) < StuckGrace {
		return false
	}
	if f := x.r.budgets.OnStuck; f != nil {
		f(fmt.Errorf("a Code Mode program stopped by its budget (%s) has not returned after %s: it is inside a native built-in the engine cannot interrupt", err.Code, StuckGrace))
	}
	return true
}

// heapObjects returns the bytes of heap objects, live and not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package hostproc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/redact"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// harness is a Supervisor writing a real audit log and a real zap log.
type harness struct {
	t        *testing.T
	s        *Supervisor
	auditDir string
	logs     *syncBuffer
	home     string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *syncBuffer) Sync() error    { return nil }
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

func newHarness(t *testing.T, res credhandle.Resolver) *harness {
	t.Helper()
	h := &harness{t: t, auditDir: filepath.Join(t.TempDir(), "audit"), logs: &syncBuffer{}, home: t.TempDir()}
	log, err := audit.Open(h.auditDir, audit.Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), h.logs, zapcore.DebugLevel)
	h.s = New(Config{
		Home:      h.home,
		Getenv:    os.LookupEnv,
		Resolver:  res,
		Audit:     func(r *audit.Record) error { return log.Append(context.Background(), r, true) },
		Logger:    zap.New(core),
		KillGrace: 300 * time.Millisecond,
	})
	t.Cleanup(func() { h.s.Close(context.Background()) })
	return h
}

// confirmed returns a confirmed definition of kind running argv.
func (h *harness) confirmed(name string, kind hostdef.Kind, env map[string]string, argv ...string) *hostdef.Definition {
	h.t.Helper()
	d := &hostdef.Definition{Name: name, Kind: kind, Command: argv[0], Args: argv[1:], Env: env}
	if err := hostdef.Confirm(d, h.home, nil, &strings.Builder{}, true, time.Now()); err != nil {
		h.t.Fatal(err)
	}
	return d
}

// records returns every record of the audit log.
func (h *harness) records() []*audit.Record {
	var out []*audit.Record
	if err := audit.Read(h.auditDir, audit.Filter{}, func(r *audit.Record) error { out = append(out, r); return nil }); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// auditBytes returns every byte of the audit directory's files.
func (h *harness) auditBytes() string {
	var b strings.Builder
	filepath.Walk(h.auditDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

// readUntil reads id's output until it holds want or the process ends (5 s at most).
func (h *harness) readUntil(id, want string) string {
	h.t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r, err := h.s.Read(id, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		all.Write(r.Data)
		if strings.Contains(all.String(), want) || (!r.Running && len(r.Data) == 0) {
			return all.String()
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("no %q in the output of %s: %q", want, id, all.String())
	return ""
}

func (h *harness) waitEnded(id string) ReadResult {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, in := range h.s.List("") {
			if in.ID == id && !in.Running {
				return ReadResult{ExitCode: in.ExitCode, Signal: in.Signal}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("%s still runs", id)
	return ReadResult{}
}

// TestOnlyConfirmedDefinitionsStart: an unconfirmed definition, one changed after its
// confirmation, and a workspace's suggestion (with the right digest written in by the
// workspace) never start, and no start is recorded for them.
func TestOnlyConfirmedDefinitionsStart(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	marker := filepath.Join(t.TempDir(), "ran")
	argv := []string{"/bin/sh", "-c", "touch " + marker}

	unconfirmed := &hostdef.Definition{Name: "a", Kind: hostdef.KindMCPServer, Command: argv[0], Args: argv[1:]}
	changed := h.confirmed("b", hostdef.KindMCPServer, nil, argv...)
	changed.Args = append(changed.Args, "extra")

	ws := t.TempDir()
	sug := &hostdef.Definition{Name: "c", Kind: hostdef.KindMCPServer, Command: argv[0], Args: argv[1:]}
	os.MkdirAll(filepath.Join(ws, ".s-code"), 0o755)
	body := "[process.c]\nkind='mcp-server'\ncommand='/bin/sh'\nargs=['-c','touch " + marker + "']\nenabled=true\nconfirmed='" + sug.Card(h.home).Digest() + "'\n"
	os.WriteFile(hostdef.SuggestionsPath(ws), []byte(body), 0o644)
	suggested, err := hostdef.LoadSuggestions(ws)
	if err != nil || len(suggested) != 1 {
		t.Fatal(suggested, err)
	}
	for _, d := range []*hostdef.Definition{unconfirmed, changed, suggested[0]} {
		if _, err := h.s.Start(d, StartOptions{}); !errors.Is(err, hostdef.ErrNotConfirmed) {
			t.Errorf("%s started: %v", d.Name, err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an unconfirmed definition ran")
	}
	for _, r := range h.records() {
		if r.Kind == audit.KindStart {
			t.Errorf("a start was recorded: %+v", r)
		}
	}
	// Without an audit log nothing starts either.
	ok := h.confirmed("d", hostdef.KindMCPServer, nil, argv...)
	if _, err := New(Config{Home: h.home}).Start(ok, StartOptions{}); !errors.Is(err, ErrNoAudit) {
		t.Errorf("started without an audit log: %v", err)
	}
}

// TestSecretsByHandle: a secret from each of env:, file: and systemd: reaches the process
// (it writes them to a file) and appears nowhere in the audit log, the log or the captured
// output, though the process prints it, whole and split across writes.
func TestSecretsByHandle(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{"ENV_SECRET": "env-secret-value-111", "FILE_SECRET": "file-secret-value-222", "SD_SECRET": "systemd-secret-value-333"}
	credDir := filepath.Join(dir, "creds")
	os.Mkdir(credDir, 0o700)
	os.WriteFile(filepath.Join(credDir, "sd"), []byte(secrets["SD_SECRET"]+"\n"), 0o400)
	os.WriteFile(filepath.Join(dir, "tok"), []byte(secrets["FILE_SECRET"]), 0o600)
	t.Setenv("S_CODE_TEST_SECRET", secrets["ENV_SECRET"])
	res := credhandle.Resolver{Getenv: os.LookupEnv, CredentialsDir: credDir, UID: os.Geteuid()}
	h := newHarness(t, res)
	got := filepath.Join(dir, "got")
	script := `printf '%s\n%s\n%s\n' "$ENV_SECRET" "$FILE_SECRET" "$SD_SECRET" > ` + got + `
echo "env: $ENV_SECRET file: $FILE_SECRET"
printf 'split: %s' "${SD_SECRET%%-value*}"; sleep 0.2; printf '%s end\n' "-value${SD_SECRET#*-value}"
echo "done"`
	d := h.confirmed("secrets", hostdef.KindMCPServer, map[string]string{"ENV_SECRET": "env:S_CODE_TEST_SECRET", "FILE_SECRET": "file:" + filepath.Join(dir, "tok"), "SD_SECRET": "systemd:sd"}, "/bin/sh", "-c", script)
	in, err := h.s.Start(d, StartOptions{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	out := h.readUntil(in.ID, "done")
	h.waitEnded(in.ID)
	b, _ := os.ReadFile(got)
	if want := secrets["ENV_SECRET"] + "\n" + secrets["FILE_SECRET"] + "\n" + secrets["SD_SECRET"] + "\n"; string(b) != want {
		t.Fatalf("the process got %q; want %q", b, want)
	}
	if n := strings.Count(out, redact.MarkRegistered); n != 3 || !strings.Contains(out, "split: "+redact.MarkRegistered+" end") {
		t.Errorf("captured output %q: want 3 redacted values, the split one whole", out)
	}
	checkNowhere(t, h, secrets, out)
}

func checkNowhere(t *testing.T, h *harness, secrets map[string]string, out string) {
	t.Helper()
	auditText, logText := h.auditBytes(), h.logs.String()
	if !strings.Contains(auditText, `"kind":"start"`) || !strings.Contains(auditText, `"kind":"exit"`) {
		t.Fatalf("no start and exit records:\n%s", auditText)
	}
	if logText == "" {
		t.Fatal("nothing was logged")
	}
	for name, v := range secrets {
		for where, text := range map[string]string{"audit log": auditText, "log": logText, "captured output": out} {
			if strings.Contains(text, v) || strings.Contains(text, v[:len(v)/2+1]) {
				t.Errorf("%s's value (or its first half) is in the %s", name, where)
			}
		}
	}
}

// TestKeyringSecret: a secret stored in a real Secret Service reaches the process through a
// keyring: handle and is redacted everywhere.
func TestKeyringSecret(t *testing.T) {
	if !testenv.InSecretService(t) {
		return
	}
	const v = "keyring-secret-value-444"
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kr := credhandle.FromEnvironment()
	if err := keyringSet("s-code-test", "me", v); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, kr)
	got := filepath.Join(t.TempDir(), "got")
	d := h.confirmed("keyring", hostdef.KindMCPServer, map[string]string{"API_KEY": "keyring:s-code-test/me"}, "/bin/sh", "-c", `printf %s "$API_KEY" > `+got+`; echo "key=$API_KEY"; echo done`)
	in, err := h.s.Start(d, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := h.readUntil(in.ID, "done")
	h.waitEnded(in.ID)
	if b, _ := os.ReadFile(got); string(b) != v {
		t.Fatalf("the process got %q", b)
	}
	if !strings.Contains(out, "key="+redact.MarkRegistered) {
		t.Errorf("output %q", out)
	}
	checkNowhere(t, h, map[string]string{"API_KEY": v}, out)
}

// procsWith returns the pids whose command line holds arg as one argument.
func procsWith(arg string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				out = append(out, pid)
			}
		}
	}
	return out
}

// family is a terminal command whose children try to outlive it: a background child, one
// in a new session (setsid), one that ignores SIGTERM and SIGHUP. Each sleeps for a
// duration unique to the test so /proc finds it.
func family(tag int) (script string, marks []string) {
	for i := 0; i < 3; i++ {
		marks = append(marks, strconv.Itoa(tag*10+i+1000))
	}
	script = `sleep ` + marks[0] + ` &
setsid sleep ` + marks[1] + ` &
( trap '' TERM HUP; exec sleep ` + marks[2] + ` ) &
echo ready; wait`
	return script, marks
}

func waitAllUp(t *testing.T, marks []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, m := range marks {
			n += len(procsWith(m))
		}
		if n == len(marks) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the children %v did not all start", marks)
}

func checkAllGone(t *testing.T, marks []string, what string) {
	t.Helper()
	for _, m := range marks {
		if pids := procsWith(m); len(pids) > 0 {
			t.Errorf("%s: sleep %s still runs as %v", what, m, pids)
		}
	}
}

func requireCgroup(t *testing.T, s *Supervisor) {
	t.Helper()
	if err := s.CgroupError(); err != nil {
		testenv.Skip(t, "no cgroup v2 of our own here (children that call setsid are then not contained): "+err.Error())
	}
}

// TestTerminalStopEndsAllChildren: after Stop no child of the terminal is left in /proc,
// even one in a new session or one that ignores SIGTERM.
func TestTerminalStopEndsAllChildren(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	requireCgroup(t, h.s)
	script, marks := family(1)
	d := h.confirmed("family", hostdef.KindTerminal, nil, "/bin/sh", "-c", script)
	in, err := h.s.Start(d, StartOptions{Terminal: true, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Containment != ContainCgroup {
		t.Fatalf("containment %s", in.Containment)
	}
	h.readUntil(in.ID, "ready")
	waitAllUp(t, marks)
	end, err := h.s.Stop(context.Background(), in.ID, "by the test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if end.Running {
		t.Fatal("still running after Stop")
	}
	checkAllGone(t, marks, "after stop")
	var kinds []string
	for _, r := range h.records() {
		if r.RequestID == in.ID {
			kinds = append(kinds, string(r.Kind)+":"+r.Reason)
		}
	}
	if len(kinds) != 3 || !strings.HasPrefix(kinds[0], "start:") || !strings.Contains(kinds[1], "stop (by the test)") || !strings.Contains(kinds[2], "stopped: by the test") {
		t.Errorf("audit records of %s: %q", in.ID, kinds)
	}
}

// TestSessionEnd: ending a session stops its terminals and all their children, leaves
// another session's and a detached one running; Close stops the rest but the detached one.
func TestSessionEnd(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	requireCgroup(t, h.s)
	start := func(tag int, session string, detached bool) (Info, []string) {
		script, marks := family(tag)
		d := h.confirmed("t"+strconv.Itoa(tag), hostdef.KindTerminal, nil, "/bin/sh", "-c", script)
		in, err := h.s.Start(d, StartOptions{Terminal: true, Session: session, Detached: detached})
		if err != nil {
			t.Fatal(err)
		}
		h.readUntil(in.ID, "ready")
		waitAllUp(t, marks)
		return in, marks
	}
	_, a1 := start(2, "A", false)
	_, a2 := start(3, "A", false)
	_, b := start(4, "B", false)
	det, dm := start(5, "A", true)
	h.s.EndSession(context.Background(), "A")
	checkAllGone(t, append(a1, a2...), "after session A ended")
	waitAllUp(t, append(b, dm...))
	h.s.Close(context.Background())
	checkAllGone(t, b, "after the supervisor closed")
	waitAllUp(t, dm)
	if _, err := h.s.Stop(context.Background(), det.ID, "cleanup", nil); err != nil {
		t.Fatal(err)
	}
	checkAllGone(t, dm, "after the detached terminal was stopped")
}

// TestTerminalReadWrite: what is written reaches the terminal's program; Read returns only
// new output, bounded by max.
func TestTerminalReadWrite(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	d := h.confirmed("cat", hostdef.KindTerminal, nil, "/bin/cat")
	in, err := h.s.Start(d, StartOptions{Terminal: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.s.Write(in.ID, []byte("hello terminal\n")); err != nil {
		t.Fatal(err)
	}
	out := h.readUntil(in.ID, "hello terminal\r\nhello terminal")
	if strings.Count(out, "hello terminal") != 2 {
		t.Fatalf("output %q: want the echo and cat's copy", out)
	}
	if r, _ := h.s.Read(in.ID, 0); len(r.Data) != 0 {
		t.Errorf("a second read returned old output %q", r.Data)
	}
	h.s.Write(in.ID, []byte("0123456789\n"))
	time.Sleep(200 * time.Millisecond)
	r, _ := h.s.Read(in.ID, 4)
	if string(r.Data) != "0123" || !r.More {
		t.Errorf("bounded read = %q more=%v", r.Data, r.More)
	}
	r, _ = h.s.Read(in.ID, 0)
	if !strings.HasPrefix(string(r.Data), "456789") {
		t.Errorf("next read = %q", r.Data)
	}
	if _, err := h.s.Read("nope", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

// TestOutputLimit: output past the limit is dropped oldest first, and Read says how much.
func TestOutputLimit(t *testing.T) {
	o := newOutput(nil, 10)
	o.write([]byte("0123456789abcdef"))
	data, dropped, more := o.read(100)
	if string(data) != "6789abcdef" || dropped != 6 || more {
		t.Fatalf("read = %q %d %v", data, dropped, more)
	}
}

package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

func TestAppendFillsAndChains(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for i := 0; i < 5; i++ {
		r := testRecord(i)
		if err := l.Append(context.Background(), r, true); err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(i+1) || r.Prev != prev || len(r.Hash) != 64 || r.Time.Location() != time.UTC {
			t.Fatalf("record %d: seq %d prev %q hash %q time %v", i, r.Seq, r.Prev, r.Hash, r.Time)
		}
		if s, h := l.Head(); s != r.Seq || h != r.Hash {
			t.Fatalf("Head = %d %s, want %d %s", s, h, r.Seq, r.Hash)
		}
		prev = r.Hash
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if err := l.Append(context.Background(), testRecord(0), true); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	rep := mustVerify(t, dir, readKey(t, dir))
	if !rep.Whole || rep.Records != 6 || rep.Seals != 1 {
		t.Fatalf("report %+v", rep)
	}
}

func TestAppendRefusesBadRecords(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "audit"), Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		name string
		kind Kind
		want error
	}{
		{"no kind", "", ErrNoKind},
		{"forged seal", KindSeal, ErrReservedKind},
		{"forged rotate", KindRotate, ErrReservedKind},
		{"forged recover", KindRecover, ErrReservedKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := l.Append(context.Background(), &Record{Kind: tc.kind}, true); !errors.Is(err, tc.want) {
				t.Fatalf("Append: %v, want %v", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Append(ctx, testRecord(0), true); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: %v", err)
	}
	if s, _ := l.Head(); s != 0 {
		t.Fatalf("refused records were written: head seq %d", s)
	}
}

func TestReopenResumesChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	for round := 0; round < 3; round++ {
		makeLogAppend(t, dir, 7)
	}
	rep := mustVerify(t, dir, readKey(t, dir))
	if !rep.Whole || rep.Records != 3*7+3 {
		t.Fatalf("report %+v %v", rep, rep.Problem)
	}
}

// makeLogAppend opens the log in dir (new or not), appends n records and closes it.
func makeLogAppend(t *testing.T, dir string, n int) {
	t.Helper()
	l, err := Open(dir, Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := l.Append(context.Background(), testRecord(i), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRepairsTornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	makeLogAppend(t, dir, 5)
	p := logFiles(t, dir)[0]
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":7,"time":"2026-`)
	f.Close()
	rep := mustVerify(t, dir, nil)
	if rep.Whole || rep.Problem.Kind != ProblemTruncated || rep.LastSeq != 6 {
		t.Fatalf("torn tail before repair: %+v %v", rep, rep.Problem)
	}
	makeLogAppend(t, dir, 1)
	rep = mustVerify(t, dir, readKey(t, dir))
	if !rep.Whole {
		t.Fatalf("after repair: %v", rep.Problem)
	}
	var recovered *Record
	Read(dir, Filter{Kinds: []Kind{KindRecover}}, func(r *Record) error { recovered = r; return nil })
	if recovered == nil || recovered.Seq != 7 || recovered.TornBytes != int64(len(`{"seq":7,"time":"2026-`)) {
		t.Fatalf("recover record: %+v", recovered)
	}
}

func TestOpenLockedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Open(dir, Options{DisableJournal: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
}

func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "state", "audit")
	makeLog(t, dir, 3, Options{})
	mode := func(p string) os.FileMode {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if m := mode(dir); m != 0o700 {
		t.Errorf("log directory mode %04o, want 0700", m)
	}
	for _, p := range append(logFiles(t, dir), filepath.Join(dir, DefaultSealKeyFile), filepath.Join(dir, DefaultVerifyKeyFile), filepath.Join(dir, lockFile)) {
		if m := mode(p); m != 0o600 {
			t.Errorf("%s mode %04o, want 0600", filepath.Base(p), m)
		}
	}

	cases := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"directory readable by others", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "audit")
			os.Mkdir(d, 0o755)
			os.Chmod(d, 0o755)
			return d
		}},
		{"directory is a symbolic link", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "real")
			os.Mkdir(d, 0o700)
			l := filepath.Join(t.TempDir(), "audit")
			os.Symlink(d, l)
			return l
		}},
		{"directory is a file", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "audit")
			os.WriteFile(d, nil, 0o600)
			return d
		}},
		{"log file readable by group", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "audit")
			makeLog(t, d, 2, Options{})
			os.Chmod(logFiles(t, d)[0], 0o640)
			return d
		}},
		{"log file is a symbolic link", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "audit")
			makeLog(t, d, 2, Options{})
			p := logFiles(t, d)[0]
			other := filepath.Join(t.TempDir(), "elsewhere")
			os.Rename(p, other)
			os.Symlink(other, p)
			return d
		}},
		{"seal key state readable by others", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "audit")
			makeLog(t, d, 2, Options{})
			os.Chmod(filepath.Join(d, DefaultSealKeyFile), 0o644)
			return d
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.setup(t)
			l, err := Open(d, Options{DisableJournal: true})
			if err == nil {
				l.Close()
				t.Fatal("Open accepted an unsafe log")
			}
			t.Logf("refused: %v", err)
		})
	}
	t.Run("directory of another owner", func(t *testing.T) {
		testenv.RequireRoot(t)
		d := filepath.Join(t.TempDir(), "audit")
		os.Mkdir(d, 0o700)
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		var pe *PermissionError
		if _, err := Open(d, Options{DisableJournal: true}); !errors.As(err, &pe) || !strings.Contains(pe.Problem, "owned by uid 65534") {
			t.Fatalf("Open: %v, want a PermissionError about the owner", err)
		}
	})
}

func TestRedactionAndEscaping(t *testing.T) {
	cases := []struct {
		name    string
		command string
		gone    []string // must not appear in the file
		kept    []string // must appear in the file
	}{
		{"private key", "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----' > k", []string{"b3BlbnNzaC1rZXktdjEAAAAA"}, []string{"[REDACTED:private-key]", "> k"}},
		{"rsa private key without end", "cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA", []string{"MIIEowIBAAKCAQEA"}, []string{"[REDACTED:private-key]"}},
		{"aws access key", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE aws s3 ls", []string{"AKIAIOSFODNN7EXAMPLE"}, []string{"[REDACTED:aws-access-key]", "aws s3 ls"}},
		{"github classic token", "git clone https://x:ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123@github.com/o/r", []string{"ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123"}, []string{"github.com/o/r"}},
		{"github fine-grained token", "gh auth login --with-token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", []string{"github_pat_11ABCDEFG"}, []string{"[REDACTED:github-token]"}},
		{"github oauth token", "export GH=gho_16C7e42F292c6912E7710c838347Ae178B4a", []string{"gho_16C7e42F292c6912E7710c838347Ae178B4a"}, []string{"[REDACTED:github-token]"}},
		{"gitlab token", "curl -H 'PRIVATE-TOKEN: glpat-xxxxxxxxxxxxxxxxxxxx' https://gitlab.com/api", []string{"glpat-xxxxxxxxxxxxxxxxxxxx"}, []string{"[REDACTED", "https://gitlab.com/api"}},
		{"slack token", "curl -d token=xoxb-123456789012-abcdefABCDEF slack.com", []string{"xoxb-123456789012-abcdefABCDEF"}, []string{"slack.com"}},
		{"bearer header", `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc" https://api`, []string{"eyJhbGciOiJIUzI1NiJ9"}, []string{"Bearer [REDACTED]", "https://api"}},
		{"password in url", "git push https://alice:s3cr3tPass@example.com/repo.git", []string{"s3cr3tPass"}, []string{"https://alice:[REDACTED]@example.com/repo.git"}},
		{"password assignment", "mysql --user=root --password=hunter22 db", []string{"hunter22"}, []string{"--password=[REDACTED]", "--user=root"}},
		{"token assignment quoted", `deploy token="abc def ghi" --now`, []string{"abc def ghi"}, []string{"token=[REDACTED]", "--now"}},
		{"password flag with space", "tool --password hunter22 run", []string{"hunter22"}, []string{"--password [REDACTED] run"}},
		{"registered secret", "echo my-registered-secret-value", []string{"my-registered-secret-value"}, []string{"[REDACTED:registered]"}},
		{"escape sequence", "echo \x1b[2J\x1b]0;owned\x07", []string{"\x1b", "\x07", `\u001b`}, []string{`\\x1b[2J\\x1b]0;owned\\x07`}},
		{"carriage return hides text", "rm -rf ~ \rls", []string{"\r", `\r`}, []string{`rm -rf ~ \\x0dls`}},
		{"bidi override", "echo \u202egnp.exe", []string{"\u202e"}, []string{`\\u{202e}gnp.exe`}},
		{"invalid utf-8", "echo \xff\xfe", []string{"\xff", "\ufffd"}, []string{`\\xff\\xfe`}},
		{"C1 control", "echo \u009b31m", []string{"\u009b"}, []string{`\\x9b31m`}},
		{"newline and tab", "a\tb\nc", nil, []string{`a\\tb\\nc`}},
		{"plain command untouched", "go test ./... 2>&1 | tee out.txt", nil, []string{"go test ./... 2>&1 | tee out.txt"}},
	}
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true, Secrets: []string{"my-registered-secret-value"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if err := l.Append(context.Background(), &Record{Kind: KindRequest, Command: tc.command, Reason: tc.command}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, logFiles(t, dir)[0])
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := string(lines[i])
			for _, g := range tc.gone {
				if strings.Contains(line, g) {
					t.Errorf("%q is in the record: %s", g, line)
				}
			}
			for _, k := range tc.kept {
				if !strings.Contains(line, k) {
					t.Errorf("%q is not in the record: %s", k, line)
				}
			}
			for _, c := range []byte(line) {
				if c < 0x20 || c == 0x7f {
					t.Fatalf("raw control byte %#x in the file: %q", c, line)
				}
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "a"), Options{Secrets: []string{"abc"}}); !errors.Is(err, ErrSecretTooShort) {
		t.Fatalf("short secret: %v", err)
	}
	if !mustVerify(t, dir, nil).Whole {
		t.Fatal("log with redacted records does not verify")
	}
}

func TestConcurrentAppends(t *testing.T) {
	const writers, each = 64, 1000
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true, MaxFileBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := &Record{Kind: KindRequest, RequestID: fmt.Sprintf("w%d-%d", w, i), Command: "true"}
				if err := l.Append(context.Background(), r, true); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir, readKey(t, dir))
	if !rep.Whole {
		t.Fatalf("chain: %v", rep.Problem)
	}
	seen := map[string]bool{}
	var last uint64
	if err := Read(dir, Filter{}, func(r *Record) error {
		if r.Seq != last+1 {
			return fmt.Errorf("seq %d after %d", r.Seq, last)
		}
		last = r.Seq
		if r.Kind == KindRequest {
			if seen[r.RequestID] {
				return fmt.Errorf("request %s twice", r.RequestID)
			}
			seen[r.RequestID] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*each {
		t.Fatalf("%d requests logged, want %d", len(seen), writers*each)
	}
	t.Logf("%d records in %d files, %d seals", rep.Records, rep.Files, rep.Seals)
}

func TestRotationAndRetention(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	t.Run("by size, keep 3 files", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "audit")
		key := makeLog(t, dir, 200, Options{MaxFileBytes: 4096, KeepFiles: 3, Now: clock})
		if n := len(logFiles(t, dir)); n != 3 {
			t.Fatalf("%d files kept, want 3", n)
		}
		rep := mustVerify(t, dir, key)
		if !rep.Whole || rep.FirstSeq == 1 {
			t.Fatalf("after retention: %+v %v", rep, rep.Problem)
		}
		// Retention's removals are claimed in the chain; one more removal is not.
		os.Remove(logFiles(t, dir)[0])
		if rep := mustVerify(t, dir, key); rep.Whole || rep.Problem.Kind != ProblemMissingFile {
			t.Fatalf("file removed beyond retention: %+v", rep.Problem)
		}
	})
	t.Run("by age", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "audit")
		l, err := Open(dir, Options{DisableJournal: true, MaxFileAge: time.Hour, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 7; i++ {
			if err := l.Append(context.Background(), testRecord(i), true); err != nil {
				t.Fatal(err)
			}
			now = now.Add(25 * time.Minute)
		}
		l.Close()
		files := logFiles(t, dir)
		if len(files) != 3 {
			t.Fatalf("%d files after 150 minutes with hourly rotation (records every 25), want 3", len(files))
		}
		lines := readLines(t, files[1])
		if !bytes.Contains(lines[0], []byte(`"kind":"rotate"`)) || !bytes.Contains(lines[0], []byte(filepath.Base(files[0]))) {
			t.Fatalf("second file does not start with a rotate record naming the first: %s", lines[0])
		}
		if rep := mustVerify(t, dir, readKey(t, dir)); !rep.Whole {
			t.Fatal(rep.Problem)
		}
	})
	t.Run("retention by age", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "audit")
		makeLog(t, dir, 100, Options{MaxFileBytes: 4096})
		files := logFiles(t, dir)
		old := time.Now().Add(-48 * time.Hour)
		for _, p := range files[:3] {
			os.Chtimes(p, old, old)
		}
		l, err := Open(dir, Options{DisableJournal: true, MaxFileBytes: 1, KeepAge: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		l.Append(context.Background(), testRecord(0), true)
		l.Append(context.Background(), testRecord(1), true)
		l.Close()
		left := logFiles(t, dir)
		if filepath.Base(left[0]) != filepath.Base(files[3]) {
			t.Fatalf("oldest file left %s, want %s", filepath.Base(left[0]), filepath.Base(files[3]))
		}
		if rep := mustVerify(t, dir, readKey(t, dir)); !rep.Whole {
			t.Fatal(rep.Problem)
		}
	})
}

// TestSealKeyEvolution checks the forward security of the seals: the key state holds only
// the current key, each seal verifies with its own evolved key only, and whoever holds a later
// key (the state file at the time of a compromise) cannot forge an earlier seal.
func TestSealKeyEvolution(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	k0 := makeLog(t, dir, 50, Options{SealEvery: 5})
	state, err := os.ReadFile(filepath.Join(dir, DefaultSealKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	idx, kNow, err := parseState(state)
	if err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir, k0)
	if !rep.Whole || uint64(rep.Seals) != idx {
		t.Fatalf("state index %d, %d seals: %+v", idx, rep.Seals, rep.Problem)
	}
	if !bytes.Equal(keyAt(k0, idx), kNow) {
		t.Fatal("the state key is not K_0 evolved once per seal")
	}
	for i := uint64(0); i < idx; i++ {
		if bytes.Contains(state, []byte(hex.EncodeToString(keyAt(k0, i)))) {
			t.Fatalf("key K_%d is still in the state file", i)
		}
	}
	// An attacker with the current key re-seals an edited log: every earlier seal fails.
	var seals []*Record
	Read(dir, Filter{Kinds: []Kind{KindSeal}}, func(r *Record) error { seals = append(seals, r); return nil })
	for _, s := range seals {
		if sealMAC(kNow, s.Seq, *s.SealIndex, s.Prev) == s.Seal {
			t.Fatalf("seal %d verifies with a later key", *s.SealIndex)
		}
		if sealMAC(keyAt(k0, *s.SealIndex), s.Seq, *s.SealIndex, s.Prev) != s.Seal {
			t.Fatalf("seal %d does not verify with K_%d", *s.SealIndex, *s.SealIndex)
		}
	}
	rechain(t, dir, func(r *Record) {
		if r.Kind == KindSeal {
			r.Seal = sealMAC(kNow, r.Seq, *r.SealIndex, r.Prev)
		}
	})
	if rep := mustVerify(t, dir, k0); rep.Whole || rep.Problem.Kind != ProblemBadSeal {
		t.Fatalf("log re-sealed with a later key: %+v", rep.Problem)
	}
	if rep := mustVerify(t, dir, keyAt(k0, 1)); rep.Whole || rep.Problem.Kind != ProblemBadSeal {
		t.Fatalf("verified with K_1 instead of K_0: %+v", rep.Problem)
	}
}

// TestCrashBetweenSealAndKeyUpdate leaves the log as a crash right after a seal reached the
// disk would (the key state not yet advanced) and checks that Verify accepts it and Open
// advances the key.
func TestCrashBetweenSealAndKeyUpdate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	k0 := makeLog(t, dir, 9, Options{SealEvery: 100})
	statePath := filepath.Join(dir, DefaultSealKeyFile)
	b, _ := os.ReadFile(statePath)
	idx, _, err := parseState(b)
	if err != nil || idx != 1 {
		t.Fatalf("state index %d: %v", idx, err)
	}
	if err := os.WriteFile(statePath, encodeState(0, k0), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, dir, k0); !rep.Whole {
		t.Fatalf("crash state: %v", rep.Problem)
	}
	makeLogAppend(t, dir, 3)
	if rep := mustVerify(t, dir, k0); !rep.Whole || rep.Seals != 2 {
		t.Fatalf("after reopen: %+v %v", rep, rep.Problem)
	}
}

func TestOpenRefusesLostKeyState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	makeLog(t, dir, 3, Options{})
	os.Remove(filepath.Join(dir, DefaultSealKeyFile))
	if l, err := Open(dir, Options{DisableJournal: true}); err == nil {
		l.Close()
		t.Fatal("Open extended a log whose seal key state is gone")
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	for _, tc := range []struct {
		role, xdg, want string
	}{
		{"user", "/xdg/state", "/xdg/state/s-code/audit"},
		{"user", "", "/home/u/.local/state/s-code/audit"},
		{"user", "relative/state", "/home/u/.local/state/s-code/audit"},
		{"root", "/xdg/state", "/var/log/s-code"},
	} {
		t.Setenv("XDG_STATE_HOME", tc.xdg)
		got, err := DefaultDir(tc.role)
		if err != nil || got != tc.want {
			t.Errorf("DefaultDir(%q) with XDG_STATE_HOME=%q = %q, %v; want %q", tc.role, tc.xdg, got, err, tc.want)
		}
	}
	if _, err := DefaultDir("admin"); err == nil {
		t.Error("DefaultDir accepted an unknown role")
	}
}

func TestFilter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	makeLog(t, dir, 40, Options{})
	uid := uint32(1001)
	count := func(f Filter) int {
		n := 0
		if err := Read(dir, f, func(*Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 41}, // 40 and the seal written by Close
		{"kind denied", Filter{Kinds: []Kind{KindDenied}}, 10},
		{"decision deny", Filter{Decision: "deny"}, 10},
		{"rule", Filter{Rule: "destructive.rm-root"}, 10},
		{"uid", Filter{UID: &uid}, 13},
		{"text", Filter{Text: "RECORD 1"}, 11}, // 1, 10..19
		{"request id", Filter{RequestID: "req-0003"}, 4},
		{"helper", Filter{Helper: "root"}, 0},
		{"since future", Filter{Since: time.Now().Add(time.Hour)}, 0},
		{"until past", Filter{Until: time.Now().Add(-time.Hour)}, 0},
	} {
		if got := count(tc.f); got != tc.want {
			t.Errorf("%s: %d records, want %d", tc.name, got, tc.want)
		}
	}
}

func TestFollow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true, MaxFileBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan uint64, 100)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, dir, 0, 10*time.Millisecond, Filter{Kinds: []Kind{KindRequest}}, func(r *Record) error {
			got <- r.Seq
			if r.Command == "echo last" {
				return ErrStop
			}
			return nil
		})
	}()
	for i := 0; i < 20; i++ {
		r := &Record{Kind: KindRequest, Command: fmt.Sprintf("echo %d", i)}
		if i == 19 {
			r.Command = "echo last"
		}
		if err := l.Append(ctx, r, true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	n, last := 0, uint64(0)
	for s := range got {
		if s <= last {
			t.Fatalf("seq %d after %d", s, last)
		}
		last = s
		n++
	}
	if n != 20 || len(logFiles(t, dir)) < 3 {
		t.Fatalf("followed %d requests across %d files", n, len(logFiles(t, dir)))
	}
}

// TestEnvRedaction: a request's environment additions are kept as NAME=value, with the
// values of secret-named variables and secret-shaped values redacted.
func TestEnvRedaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GITHUB_TOKEN=abc123plain", "DB_PASSWORD=hunter22", "LANG=C.UTF-8", "X=ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123", "NOTE=a\x1bb"}
	if err := l.Append(context.Background(), &Record{Kind: KindRequest, Command: "true", Env: env}, false); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	line := string(readLines(t, logFiles(t, dir)[0])[0])
	for _, gone := range []string{"abc123plain", "hunter22", "ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123", "\x1b"} {
		if strings.Contains(line, gone) {
			t.Errorf("%q is in the record: %s", gone, line)
		}
	}
	for _, kept := range []string{"GITHUB_TOKEN=[REDACTED:env-secret]", "DB_PASSWORD=[REDACTED:env-secret]", "LANG=C.UTF-8", "X=[REDACTED:github-token]"} {
		if !strings.Contains(line, kept) {
			t.Errorf("%q is not in the record: %s", kept, line)
		}
	}
	if rep := mustVerify(t, dir, nil); !rep.Whole {
		t.Fatalf("verify: %+v", rep)
	}
}

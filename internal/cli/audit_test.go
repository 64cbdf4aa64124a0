package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/audit"
)

// runCLI runs s-code with args and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// writeTestLog writes n records into a new log in dir through the audit writer.
func writeTestLog(t *testing.T, dir string, n int, opts audit.Options) {
	t.Helper()
	opts.DisableJournal = true
	if opts.SealEvery == 0 {
		opts.SealEvery = 10
	}
	l, err := audit.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := &audit.Record{
			Kind: audit.KindRequest, RequestID: fmt.Sprintf("req-%d", i/2), Helper: "user",
			Peer:    &audit.Peer{UID: uint32(1000 + i%2), GID: 1000, PID: int32(100 + i)},
			Command: fmt.Sprintf("make test %d", i), Verdict: &audit.VerdictSummary{Decision: "allow"},
		}
		if i%2 == 1 {
			code := i % 4
			r.Kind, r.ExitCode = audit.KindExit, &code
		}
		if i%5 == 4 {
			r.Kind = audit.KindDenied
			r.ExitCode = nil
			r.Verdict = &audit.VerdictSummary{Decision: "deny", Rules: []string{"git.config-exec"}}
		}
		if err := l.Append(context.Background(), r, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func recordFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

func editLines(t *testing.T, path string, edit func([][]byte) [][]byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := edit(bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")))
	out := append(bytes.Join(lines, []byte("\n")), '\n')
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAuditVerifyCorruption runs `s-code audit verify` on real logs damaged each way and
// checks the exit status and that the first bad record is named.
func TestAuditVerifyCorruption(t *testing.T) {
	cases := []struct {
		name     string
		opts     audit.Options
		damage   func(t *testing.T, dir string)
		withKey  bool
		wantCode int
		want     string // in stdout and stderr
	}{
		{"intact", audit.Options{}, func(*testing.T, string) {}, true, 0, "whole"},
		{"changed byte", audit.Options{}, func(t *testing.T, dir string) {
			editLines(t, recordFiles(t, dir)[0], func(l [][]byte) [][]byte {
				l[3] = bytes.Replace(l[3], []byte("make test 3"), []byte("make test X"), 1)
				return l
			})
		}, false, 1, "jsonl:4 seq 4: modified"},
		{"deleted line", audit.Options{}, func(t *testing.T, dir string) {
			editLines(t, recordFiles(t, dir)[0], func(l [][]byte) [][]byte { return append(l[:3:3], l[4:]...) })
		}, false, 1, "missing"},
		{"two lines swapped", audit.Options{}, func(t *testing.T, dir string) {
			editLines(t, recordFiles(t, dir)[0], func(l [][]byte) [][]byte { l[2], l[3] = l[3], l[2]; return l })
		}, false, 1, "jsonl:3 seq 4: reordered"},
		{"inserted line", audit.Options{}, func(t *testing.T, dir string) {
			editLines(t, recordFiles(t, dir)[0], func(l [][]byte) [][]byte {
				return append(l[:5:5], append([][]byte{l[1]}, l[5:]...)...)
			})
		}, false, 1, "jsonl:6 seq 2: inserted"},
		{"cut tail", audit.Options{}, func(t *testing.T, dir string) {
			f := recordFiles(t, dir)
			p := f[len(f)-1]
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-20)
		}, false, 1, "truncated"},
		{"cut tail at a record boundary, with the key", audit.Options{}, func(t *testing.T, dir string) {
			f := recordFiles(t, dir)
			editLines(t, f[len(f)-1], func(l [][]byte) [][]byte { return l[:len(l)-2] })
		}, true, 1, "truncated"},
		{"whole log rewritten from scratch, with the key", audit.Options{}, func(t *testing.T, dir string) {
			forged := filepath.Join(t.TempDir(), "forged")
			writeTestLog(t, forged, 30, audit.Options{})
			for _, p := range recordFiles(t, dir) {
				os.Remove(p)
			}
			for _, p := range append(recordFiles(t, forged), filepath.Join(forged, audit.DefaultSealKeyFile)) {
				b, _ := os.ReadFile(p)
				os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o600)
			}
		}, true, 1, "bad-seal"},
		{"removed rotated file", audit.Options{MaxFileBytes: 1500}, func(t *testing.T, dir string) {
			f := recordFiles(t, dir)
			os.Remove(f[1])
		}, false, 1, "missing-file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "audit")
			writeTestLog(t, dir, 30, tc.opts)
			key := filepath.Join(t.TempDir(), "verify.key")
			if err := os.Rename(filepath.Join(dir, audit.DefaultVerifyKeyFile), key); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			args := []string{"audit", "verify", "--dir", dir}
			if tc.withKey {
				args = append(args, "--key", key)
			}
			code, out, errOut := runCLI(t, args...)
			if code != tc.wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant %q", code, tc.wantCode, out, errOut, tc.want)
			}
			t.Logf("%s%s", out, errOut)
			code, out, _ = runCLI(t, append(args, "--json")...)
			var rep audit.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != tc.wantCode || rep.Whole != (tc.wantCode == 0) {
				t.Fatalf("--json: exit %d, %v: %s", code, err, out)
			}
		})
	}
}

func TestAuditReview(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	writeTestLog(t, dir, 20, audit.Options{})
	t.Setenv("COLUMNS", "80")
	cases := []struct {
		name  string
		args  []string
		code  int
		want  []string
		avoid []string
	}{
		{"list", []string{"list"}, 0, []string{"SEQ", "TIME", "make test 0", "exit 1", "git.config-exec"}, nil},
		{"list denied", []string{"list", "--kind", "denied"}, 0, []string{"make test 4", "make test 19"}, []string{"make test 0 "}},
		{"list deny decision", []string{"list", "--decision", "deny", "--json"}, 0, []string{`"kind":"denied"`, `"time":"`, `Z"`}, []string{`"kind":"exit"`}},
		{"list uid", []string{"list", "--uid", "1001", "--json"}, 0, []string{`"uid":1001`}, []string{`"uid":1000`}},
		{"list rule", []string{"list", "--rule", "git.config-exec"}, 0, []string{"make test 9"}, []string{"make test 8"}},
		{"list grep", []string{"list", "--grep", "TEST 13"}, 0, []string{"make test 13"}, []string{"make test 12"}},
		{"list since future", []string{"list", "--since", "2099-01-01"}, 0, nil, []string{"make test"}},
		{"list until duration", []string{"list", "--until", "1h"}, 0, nil, []string{"make test"}},
		{"list bad since", []string{"list", "--since", "yesterday-ish"}, 2, nil, nil},
		{"show seq", []string{"show", "3"}, 0, []string{"seq:", "make test 2", "helper verdict: allow"}, nil},
		{"show request id", []string{"show", "req-2", "--json"}, 0, []string{`"seq":5`, `"seq":6`}, nil},
		{"show unknown", []string{"show", "no-such"}, 1, nil, nil},
		{"tail", []string{"tail", "-n", "2"}, 0, []string{"make test 19", "seal 1"}, []string{"make test 17"}},
		{"stats", []string{"stats"}, 0, []string{"records: 22", "by rule:", "git.config-exec", "by uid:", "1000"}, nil},
		{"stats json", []string{"stats", "--json"}, 0, []string{`"by_decision":{"allow":16,"deny":4}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"audit"}, append(tc.args, "--dir", dir)...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(out, a) {
					t.Errorf("output has %q:\n%s", a, out)
				}
			}
			if tc.name == "list" {
				for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
					if n := len([]rune(l)); n > 80 {
						t.Errorf("line of %d columns on an 80-column terminal: %q", n, l)
					}
				}
			}
		})
	}
}

// TestAuditListEscapes shows a tampered record carrying raw terminal escapes (JSON-escaped
// in the file): verify fails, and list prints the escapes as visible text.
func TestAuditListEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	writeTestLog(t, dir, 3, audit.Options{})
	editLines(t, recordFiles(t, dir)[0], func(l [][]byte) [][]byte {
		l[0] = bytes.Replace(l[0], []byte("make test 0"), []byte(`make \u001b[2J\u001b]0;pwned\u0007\r test`), 1)
		return l
	})
	code, out, _ := runCLI(t, "audit", "list", "--dir", dir)
	if code != 0 {
		t.Fatalf("list exit %d", code)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Fatalf("raw control characters reach the terminal: %q", out)
	}
	if !strings.Contains(out, `make \x1b[2J\x1b]0;pwned\x07\x0d test`) {
		t.Fatalf("escapes not shown: %s", out)
	}
	if code, _, _ := runCLI(t, "audit", "verify", "--dir", dir); code != 1 {
		t.Fatalf("verify of the tampered log: exit %d", code)
	}
}

func TestAuditDefaultDir(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	code, _, errOut := runCLI(t, "audit", "verify")
	if code != 1 || !strings.Contains(errOut, filepath.Join(state, "s-code", "audit")+" does not exist") {
		t.Fatalf("missing default dir: exit %d: %s", code, errOut)
	}
	writeTestLog(t, filepath.Join(state, "s-code", "audit"), 4, audit.Options{})
	if code, out, errOut := runCLI(t, "audit", "verify"); code != 0 {
		t.Fatalf("default dir: exit %d: %s%s", code, out, errOut)
	}
	if code, _, _ := runCLI(t, "audit", "list", "--helper", "admin"); code != 2 {
		t.Fatalf("--helper admin: exit %d, want 2", code)
	}
}

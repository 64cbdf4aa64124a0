package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// testKinds cycle through the records makeLog writes.
var testKinds = []Kind{KindRequest, KindStart, KindExit, KindDenied}

// testRecord returns the i-th record makeLog writes.
func testRecord(i int) *Record {
	code := i % 3
	r := &Record{
		Kind:      testKinds[i%len(testKinds)],
		RequestID: fmt.Sprintf("req-%04d", i/len(testKinds)),
		Helper:    "user",
		Peer:      &Peer{UID: 1000 + uint32(i%3), GID: 1000, PID: int32(4000 + i), Exe: "/usr/bin/s-code"},
		Command:   fmt.Sprintf("echo record %d", i),
		Cwd:       "/home/u/proj",
		Workspace: "/home/u/proj",
		Verdict:   &VerdictSummary{Decision: "allow"},
	}
	if r.Kind == KindDenied {
		r.Verdict = &VerdictSummary{Decision: "deny", Rules: []string{"destructive.rm-root"}}
	}
	if r.Kind == KindExit {
		r.ExitCode = &code
		r.Duration = 0.25
		r.Stdout = int64(i)
	}
	return r
}

// makeLog writes n records into a new log in dir, closes it and returns K_0.
func makeLog(t testing.TB, dir string, n int, opts Options) []byte {
	t.Helper()
	opts.DisableJournal = true
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	for i := 0; i < n; i++ {
		if err := l.Append(context.Background(), testRecord(i), i%2 == 0); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return readKey(t, dir)
}

func readKey(t testing.TB, dir string) []byte {
	t.Helper()
	k, err := ReadVerifyKey(filepath.Join(dir, DefaultVerifyKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// logFiles returns the record files of dir in order.
func logFiles(t testing.TB, dir string) []string {
	t.Helper()
	fs, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, filepath.Join(dir, f.name))
	}
	return out
}

// readLines returns the lines of a file, without newlines.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// writeLines writes lines (each followed by a newline) to path.
func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// mustVerify runs Verify and fails the test on an I/O error.
func mustVerify(t testing.TB, dir string, key []byte) Report {
	t.Helper()
	rep, err := Verify(dir, key)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

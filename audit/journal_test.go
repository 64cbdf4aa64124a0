package audit

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseNative decodes one datagram of journald's native protocol.
func parseNative(t *testing.T, b []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			t.Fatalf("field without newline: %q", b)
		}
		field := b[:nl]
		if eq := bytes.IndexByte(field, '='); eq >= 0 {
			out[string(field[:eq])] = string(field[eq+1:])
			b = b[nl+1:]
			continue
		}
		n := binary.LittleEndian.Uint64(b[nl+1 : nl+9])
		out[string(field)] = string(b[nl+9 : nl+9+int(n)])
		b = b[nl+9+int(n)+1:]
	}
	return out
}

// TestJournalMirror sends records to a stand-in for journald's socket (a datagram socket in
// the test's directory) and checks the fields; journald does not run on the test machines.
func TestJournalMirror(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "journal.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{JournalSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	r := &Record{Kind: KindDenied, RequestID: "r1", Helper: "user", Peer: &Peer{UID: 1000, GID: 100, PID: 42},
		Command: "rm -rf / \x1b[2J", Verdict: &VerdictSummary{Decision: "deny", Rules: []string{"destructive.rm-root"}}, ExitCode: &code}
	if err := l.Append(context.Background(), r, true); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	var got []map[string]string
	for len(got) < 2 {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("read journal datagram %d: %v", len(got)+1, err)
		}
		got = append(got, parseNative(t, buf[:n]))
	}
	want := map[string]string{
		"MESSAGE_ID":        JournalMessageID,
		"SYSLOG_IDENTIFIER": "s-code-audit",
		"PRIORITY":          "5",
		"SCODE_SEQ":         "1",
		"SCODE_KIND":        "denied",
		"SCODE_REQUEST_ID":  "r1",
		"SCODE_HELPER":      "user",
		"SCODE_PEER_UID":    "1000",
		"SCODE_PEER_PID":    "42",
		"SCODE_DECISION":    "deny",
		"SCODE_RULES":       "destructive.rm-root",
		"SCODE_EXIT_CODE":   "0",
		"SCODE_HASH":        r.Hash,
		"SCODE_COMMAND":     `rm -rf / \x1b[2J`,
	}
	for k, v := range want {
		if got[0][k] != v {
			t.Errorf("%s = %q, want %q", k, got[0][k], v)
		}
	}
	if !strings.Contains(got[0]["SCODE_RECORD"], `"hash":"`+r.Hash+`"`) {
		t.Errorf("SCODE_RECORD is not the record line: %s", got[0]["SCODE_RECORD"])
	}
	if got[1]["SCODE_KIND"] != "seal" {
		t.Errorf("second datagram is %q, want the seal Close writes", got[1]["SCODE_KIND"])
	}
	for _, m := range got {
		for k, v := range m {
			if strings.ContainsAny(v, "\x1b\r") {
				t.Errorf("raw control character in journal field %s", k)
			}
		}
	}
}

// TestJournalAbsent: no socket at the path means the mirror fails quietly; the file is the
// source of truth and appends succeed.
func TestJournalAbsent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{JournalSocket: filepath.Join(t.TempDir(), "no-such.sock")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(context.Background(), testRecord(0), true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if l.JournalErrors() == 0 {
		t.Error("no mirror error counted for a missing socket")
	}
	if !mustVerify(t, dir, nil).Whole {
		t.Error("log does not verify")
	}
}

func TestAppendJournalField(t *testing.T) {
	var b bytes.Buffer
	appendJournalField(&b, "A", "one")
	appendJournalField(&b, "B", "two\nlines")
	m := parseNative(t, b.Bytes())
	if m["A"] != "one" || m["B"] != "two\nlines" {
		t.Fatalf("round trip: %q", m)
	}
}

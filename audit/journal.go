package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"
)

// JournalMessageID is the MESSAGE_ID of every audit record mirrored to journald, so that
// `journalctl MESSAGE_ID=329cae732fb24136b90052966b5435b1` selects them (a 128-bit id made once
// for S-Code, as systemd.journal-fields(7) asks).
const JournalMessageID = "329cae732fb24136b90052966b5435b1"

// journalSink sends one record's fields to journald.
type journalSink interface {
	send(message string, priority journal.Priority, vars map[string]string) error
	close()
}

// newJournalSink returns the mirror: a datagram sender to socket when set (tests), else
// go-systemd's journal when journald's socket is there, else nil ("not configured" is not an
// error: the file is the source of truth).
func newJournalSink(socket string) journalSink {
	if socket != "" {
		return &nativeJournal{path: socket}
	}
	if journal.Enabled() {
		return systemdJournal{}
	}
	return nil
}

type systemdJournal struct{}

func (systemdJournal) send(message string, priority journal.Priority, vars map[string]string) error {
	return journal.Send(message, priority, vars)
}

func (systemdJournal) close() {}

// nativeJournal speaks journald's native protocol (systemd's "Native Journal Protocol"
// document) over a datagram socket at path.
type nativeJournal struct {
	path string
	conn *net.UnixConn
}

func (j *nativeJournal) send(message string, priority journal.Priority, vars map[string]string) error {
	if j.conn == nil {
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: j.path, Net: "unixgram"})
		if err != nil {
			return fmt.Errorf("dial journal socket: %w", err)
		}
		j.conn = c
	}
	var b bytes.Buffer
	appendJournalField(&b, "PRIORITY", strconv.Itoa(int(priority)))
	appendJournalField(&b, "MESSAGE", message)
	for k, v := range vars {
		appendJournalField(&b, k, v)
	}
	if _, err := j.conn.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write journal socket: %w", err)
	}
	return nil
}

func (j *nativeJournal) close() {
	if j.conn != nil {
		j.conn.Close()
	}
}

// appendJournalField writes KEY=value\n, or, for a value holding a newline, KEY\n, the
// value's length as a little-endian uint64, the value and \n.
func appendJournalField(b *bytes.Buffer, key, value string) {
	if !strings.Contains(value, "\n") {
		b.WriteString(key + "=" + value + "\n")
		return
	}
	b.WriteString(key + "\n")
	binary.Write(b, binary.LittleEndian, uint64(len(value))) //nolint:errcheck // bytes.Buffer
	b.WriteString(value + "\n")
}

// journalFields returns the journald message, priority and fields of a record line of the
// log in dir. A seal also carries SCODE_SEAL_INDEX and SCODE_SEAL_HEAD (the chain head it
// seals), and every record SCODE_LOG_DIR, so that the journal can witness the log's seals
// (witness.go).
func journalFields(line []byte, dir string) (string, journal.Priority, map[string]string) {
	var r Record
	line = bytes.TrimSuffix(line, []byte("\n"))
	if err := json.Unmarshal(line, &r); err != nil {
		return "s-code audit record", journal.PriWarning, map[string]string{"MESSAGE_ID": JournalMessageID, "SCODE_RECORD": string(line)}
	}
	v := map[string]string{
		"MESSAGE_ID":        JournalMessageID,
		"SYSLOG_IDENTIFIER": "s-code-audit",
		"SCODE_SEQ":         strconv.FormatUint(r.Seq, 10),
		"SCODE_KIND":        string(r.Kind),
		"SCODE_HASH":        r.Hash,
		"SCODE_PREV":        r.Prev,
		"SCODE_RECORD":      string(line),
		"SCODE_LOG_DIR":     dir,
	}
	if r.Kind == KindSeal && r.SealIndex != nil {
		v["SCODE_SEAL_INDEX"] = strconv.FormatUint(*r.SealIndex, 10)
		v["SCODE_SEAL_HEAD"] = r.Prev
	}
	set := func(k, s string) {
		if s != "" {
			v[k] = s
		}
	}
	set("SCODE_REQUEST_ID", r.RequestID)
	set("SCODE_HELPER", r.Helper)
	set("SCODE_COMMAND", r.Command)
	set("SCODE_CWD", r.Cwd)
	set("SCODE_WORKSPACE", r.Workspace)
	set("SCODE_REASON", r.Reason)
	set("SCODE_SIGNAL", r.Signal)
	if r.Peer != nil {
		v["SCODE_PEER_UID"] = strconv.FormatUint(uint64(r.Peer.UID), 10)
		v["SCODE_PEER_GID"] = strconv.FormatUint(uint64(r.Peer.GID), 10)
		v["SCODE_PEER_PID"] = strconv.FormatInt(int64(r.Peer.PID), 10)
		set("SCODE_PEER_EXE", r.Peer.Exe)
	}
	if r.Verdict != nil {
		set("SCODE_DECISION", r.Verdict.Decision)
		set("SCODE_RULES", strings.Join(r.Verdict.Rules, " "))
	}
	if r.Client != nil {
		set("SCODE_CLIENT_DECISION", r.Client.Decision)
		set("SCODE_CLIENT_RULES", strings.Join(r.Client.Rules, " "))
	}
	if r.ExitCode != nil {
		v["SCODE_EXIT_CODE"] = strconv.Itoa(*r.ExitCode)
	}
	prio := journal.PriInfo
	switch r.Kind {
	case KindDenied, KindRefused:
		prio = journal.PriNotice
	case KindRecover:
		prio = journal.PriWarning
	}
	msg := fmt.Sprintf("audit seq=%d kind=%s", r.Seq, r.Kind)
	if r.Peer != nil {
		msg += fmt.Sprintf(" uid=%d", r.Peer.UID)
	}
	if r.Command != "" {
		msg += " command=" + strconv.Quote(r.Command)
	}
	return msg, prio, v
}

// mirror sends lines to journald when it is configured. Failures are ignored: the file is
// the source of truth and has the record already.
func (l *Log) mirror(lines [][]byte) {
	if l.journal == nil || len(lines) == 0 {
		return
	}
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	for _, line := range lines {
		msg, prio, vars := journalFields(line, l.absDir)
		if err := l.journal.send(msg, prio, vars); err != nil {
			l.journalErrs++
		}
	}
}

// JournalErrors returns how many records could not be mirrored to journald.
func (l *Log) JournalErrors() int {
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	return l.journalErrs
}

package hostproc

import (
	"sync"

	"github.com/s-code-dev/s-code/internal/redact"
)

// output is a process's captured output, redacted before it is kept: raw bytes wait in
// pending only while they could be the start of a registered value.
type output struct {
	red *redact.Redactor

	mu      sync.Mutex // guards the fields below
	pending string     // raw bytes not yet redacted (a prefix of a registered value)
	buf     []byte     // the newest redacted bytes, at most limit
	limit   int
	total   int64 // redacted bytes ever kept
	cursor  int64 // the reader's position in total
	raw     int64 // raw bytes ever received
}

func newOutput(red *redact.Redactor, limit int) *output {
	return &output{red: red, limit: limit}
}

// write takes raw bytes from the process.
func (o *output) write(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.raw += int64(len(p))
	s := o.pending + string(p)
	hold := o.red.Pending(s)
	o.keep(o.red.String(s[:len(s)-hold]))
	o.pending = s[len(s)-hold:]
}

// flush lets out what was held back: the process has ended.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.keep(o.red.String(o.pending))
	o.pending = ""
}

func (o *output) keep(s string) {
	o.buf = append(o.buf, s...)
	o.total += int64(len(s))
	if over := len(o.buf) - o.limit; over > 0 {
		o.buf = append(o.buf[:0:0], o.buf[over:]...)
	}
}

// read returns up to max redacted bytes after the reader's position and moves it;
// dropped is how many bytes were lost to the limit since the last read, more whether
// bytes remain after these.
func (o *output) read(max int) (data []byte, dropped int64, more bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	first := o.total - int64(len(o.buf))
	if o.cursor < first {
		dropped = first - o.cursor
		o.cursor = first
	}
	rest := o.buf[o.cursor-first:]
	if len(rest) > max {
		rest, more = rest[:max], true
	}
	o.cursor += int64(len(rest))
	return append([]byte(nil), rest...), dropped, more
}

// counts returns the raw bytes received and the redacted bytes kept.
func (o *output) counts() (raw, kept int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.raw, o.total
}

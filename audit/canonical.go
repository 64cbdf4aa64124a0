package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// hashSuffixLen is the length of the hash member that ends every record line:
// `,"hash":"` + 64 hex digits + `"}`.
const hashSuffixLen = len(`,"hash":"`) + 64 + len(`"}`)

// emptyHashTail is how encoding/json ends a Record whose Hash is empty.
var emptyHashTail = []byte(`,"hash":""}`)

// canonical returns the canonical bytes of r: the compact JSON encoding of r (field order as
// declared, no HTML escaping) without its hash member, that is the encoding with Hash set to ""
// and its trailing `,"hash":""` removed. r.Hash is ignored.
func canonical(r *Record) ([]byte, error) {
	saved := r.Hash
	r.Hash = ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	r.Hash = saved
	if err != nil {
		return nil, fmt.Errorf("encode audit record: %w", err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !bytes.HasSuffix(b, emptyHashTail) {
		return nil, fmt.Errorf("encode audit record: encoding does not end with the hash member")
	}
	b = b[:len(b)-len(emptyHashTail)]
	return append(b, '}'), nil
}

// chainHash returns the hex SHA-256 over the raw bytes of prev (32 bytes; none when prev is
// "") followed by the canonical bytes c.
func chainHash(prev string, c []byte) (string, error) {
	h := sha256.New()
	if prev != "" {
		raw, err := hex.DecodeString(prev)
		if err != nil || len(raw) != sha256.Size {
			return "", fmt.Errorf("previous hash %q is not 64 hex digits", prev)
		}
		h.Write(raw)
	}
	h.Write(c)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// encodeLine fills r.Hash from r.Prev and returns the record's line, newline included.
func encodeLine(r *Record) ([]byte, error) {
	c, err := canonical(r)
	if err != nil {
		return nil, err
	}
	sum, err := chainHash(r.Prev, c)
	if err != nil {
		return nil, err
	}
	r.Hash = sum
	line := make([]byte, 0, len(c)+hashSuffixLen+1)
	line = append(line, c[:len(c)-1]...)
	line = append(line, `,"hash":"`...)
	line = append(line, sum...)
	line = append(line, `"}`...)
	line = append(line, '\n')
	return line, nil
}

// rawLine is what the verifier reads from a record line without decoding all of its JSON.
type rawLine struct {
	seq  uint64
	kind []byte
	prev []byte // hex, 0 or 64 digits
	hash []byte // hex, 64 digits
	body []byte // the line without its hash member and without the newline, not ending in '}'
}

// errShape reports a line that does not have the shape the writer gives every record.
type errShape struct{ what string }

func (e *errShape) Error() string { return "not an audit record: " + e.what }

// splitLine parses line (without its newline) into its parts. It checks the shape only, not
// the hash.
func splitLine(line []byte) (rawLine, error) {
	var rl rawLine
	if len(line) < hashSuffixLen+len(`{"seq":1,"prev":""`) {
		return rl, &errShape{"too short"}
	}
	tail := line[len(line)-hashSuffixLen:]
	if !bytes.HasPrefix(tail, []byte(`,"hash":"`)) || !bytes.HasSuffix(tail, []byte(`"}`)) {
		return rl, &errShape{"no hash member at the end"}
	}
	rl.hash = tail[len(`,"hash":"`) : len(`,"hash":"`)+64]
	if !isHex(rl.hash) {
		return rl, &errShape{"hash is not 64 hex digits"}
	}
	rl.body = line[:len(line)-hashSuffixLen]
	switch {
	case bytes.HasSuffix(rl.body, []byte(`,"prev":""`)):
		rl.prev = nil
	case len(rl.body) > 64+len(`,"prev":"`)+1 && bytes.HasSuffix(rl.body[:len(rl.body)-65], []byte(`,"prev":"`)) && rl.body[len(rl.body)-1] == '"':
		rl.prev = rl.body[len(rl.body)-65 : len(rl.body)-1]
		if !isHex(rl.prev) {
			return rl, &errShape{"prev is not 64 hex digits"}
		}
	default:
		return rl, &errShape{"no prev member before the hash"}
	}
	if !bytes.HasPrefix(line, []byte(`{"seq":`)) {
		return rl, &errShape{"does not start with seq"}
	}
	rest := line[len(`{"seq":`):]
	i := bytes.IndexByte(rest, ',')
	if i <= 0 || i > 20 {
		return rl, &errShape{"bad seq"}
	}
	n, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil || n == 0 || rest[0] == '0' {
		return rl, &errShape{"bad seq"}
	}
	rl.seq = n
	// The kind follows the time member, which holds no quote or comma.
	rest = rest[i:]
	k := bytes.Index(rest, []byte(`","kind":"`))
	if k < 0 || k > 64 {
		return rl, &errShape{"no kind member"}
	}
	rest = rest[k+len(`","kind":"`):]
	e := bytes.IndexByte(rest, '"')
	if e < 0 {
		return rl, &errShape{"no kind member"}
	}
	rl.kind = rest[:e]
	return rl, nil
}

// hashOf returns the hex chain hash of a split line, computed from the raw prev bytes and
// the canonical bytes (body followed by '}'), appending to dst.
func (rl *rawLine) sum(dst []byte) []byte {
	h := sha256.New()
	if len(rl.prev) == 64 {
		var raw [32]byte
		hex.Decode(raw[:], rl.prev) //nolint:errcheck // checked by isHex in splitLine
		h.Write(raw[:])
	}
	h.Write(rl.body)
	h.Write([]byte{'}'})
	var s [32]byte
	return hex.AppendEncode(dst, h.Sum(s[:0]))
}

// hexDigit marks the lower-case hex digits, the only ones a record's hashes use.
var hexDigit = func() (t [256]bool) {
	for _, c := range []byte("0123456789abcdef") {
		t[c] = true
	}
	return t
}()

func isHex(b []byte) bool {
	ok := true
	for _, c := range b {
		ok = ok && hexDigit[c]
	}
	return ok
}

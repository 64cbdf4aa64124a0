package patch

import (
	"encoding/json"
	"unicode/utf8"
)

// The request is checked once with json.Valid; these scanners then split objects and
// arrays of that valid text into their members without decoding values they do not need.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the offset after the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// scanObject splits the valid JSON object b into its keys (decoded) and raw values, in
// order. ok is false when b is not an object.
func scanObject(b []byte) (keys []string, vals []json.RawMessage, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, nil, true
	}
	keys, vals = make([]string, 0, 4), make([]json.RawMessage, 0, 4)
	for i < len(b) {
		end := skipString(b, i)
		k, err := decodeString(b[i:end])
		if err != nil {
			return nil, nil, false
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // ':'
		vend := skipValue(b, i)
		keys = append(keys, k)
		vals = append(vals, json.RawMessage(b[i:vend]))
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == '}' {
			return keys, vals, true
		}
		i = skipSpace(b, i+1) // ','
	}
	return nil, nil, false
}

// decodeString decodes the JSON string literal b (quotes included). Text with only the
// short escapes (\" \\ \/ \b \f \n \r \t) and valid UTF-8 takes a fast path; anything
// else (\u escapes, invalid UTF-8) goes through encoding/json, whose rules apply.
func decodeString(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	inner := b[1 : len(b)-1]
	esc := false
	for _, c := range inner {
		if c < 0x20 || c == '"' {
			return slowString(b)
		}
		if c == '\\' {
			esc = true
		}
	}
	if !utf8.Valid(inner) {
		return slowString(b)
	}
	if !esc {
		return string(inner), nil
	}
	out := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(inner) {
			return slowString(b)
		}
		switch inner[i] {
		case '"', '\\', '/':
			out = append(out, inner[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return slowString(b)
		}
	}
	return string(out), nil
}

func slowString(b []byte) (string, error) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

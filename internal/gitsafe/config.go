package gitsafe

import (
	"fmt"
	"strconv"
	"strings"
)

// configEntry is one setting read from a git configuration file.
type configEntry struct {
	Key      string // section[.subsection].name; section and name lower-cased as git does
	Value    string
	HasValue bool // false for a bare "name" line, which git reads as boolean true
	Line     int  // 1-based line of the setting in its file
}

// ConfigSyntaxError is a configuration file gitsafe could not read the way git would. The
// repository is refused: git itself would refuse most such files, and a file read
// differently by two parsers could hide a setting.
type ConfigSyntaxError struct {
	File string
	Line int
	Msg  string
}

// Error returns "FILE:LINE: bad git config: MSG".
func (e *ConfigSyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: bad git config: %s", e.File, e.Line, e.Msg)
}

// configReader reads git-config(1) syntax the way git 2.39's config.c does: sections
// "[name]", "[name \"subsection\"]" and the deprecated "[name.sub]", "name = value" lines
// (also after a header on the same line), quoting, the escapes \\ \" \n \t \b,
// backslash-newline continuations, '#' and ';' comments, CRLF line ends, a leading BOM.
// Anything it does not understand is an error, never a guess.
type configReader struct {
	data []byte
	pos  int
	line int // current line, 1-based
	eof  bool
	file string
}

// next returns the next byte, folding CRLF into '\n' and returning '\n' at the end of the
// data (with eof set), like config.c's get_next_char.
func (r *configReader) next() byte {
	if r.pos >= len(r.data) {
		if !r.eof {
			r.eof = true
		}
		return '\n'
	}
	c := r.data[r.pos]
	r.pos++
	if c == '\r' && r.pos < len(r.data) && r.data[r.pos] == '\n' {
		r.pos++
		c = '\n'
	}
	if c == '\n' {
		r.line++
	}
	return c
}

func (r *configReader) fail(msg string) error {
	return &ConfigSyntaxError{File: r.file, Line: r.line, Msg: msg}
}

func isSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool   { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// parseConfig returns the settings of the configuration file data (named file in errors),
// in file order, or a *ConfigSyntaxError.
func parseConfig(data []byte, file string) ([]configEntry, error) {
	if strings.IndexByte(string(data), 0) >= 0 {
		return nil, &ConfigSyntaxError{File: file, Line: 1, Msg: "NUL byte in configuration"}
	}
	r := &configReader{data: data, line: 1, file: file}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		r.pos = 3
	}
	var (
		out     []configEntry
		section string
		comment bool
	)
	for {
		c := r.next()
		if c == '\n' {
			if r.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			s, err := r.sectionHeader()
			if err != nil {
				return nil, err
			}
			section = s
			continue
		}
		if !isAlpha(c) {
			return nil, r.fail(fmt.Sprintf("unexpected character %q", c))
		}
		if section == "" {
			return nil, r.fail("setting outside any section")
		}
		line := r.line
		e, err := r.setting(c)
		if err != nil {
			return nil, err
		}
		e.Key = section + "." + e.Key
		e.Line = line
		out = append(out, e)
	}
}

// sectionHeader reads the rest of a "[section]" or "[section \"sub\"]" header.
func (r *configReader) sectionHeader() (string, error) {
	var b strings.Builder
	for {
		c := r.next()
		if r.eof {
			return "", r.fail("unterminated section header")
		}
		if c == ']' {
			if b.Len() == 0 {
				return "", r.fail("empty section name")
			}
			return b.String(), nil
		}
		if isSpace(c) {
			if b.Len() == 0 {
				return "", r.fail("empty section name")
			}
			return r.subsection(&b, c)
		}
		if !isKeyChar(c) && c != '.' {
			return "", r.fail(fmt.Sprintf("bad character %q in section name", c))
		}
		b.WriteByte(lower(c))
	}
}

// subsection reads ` "sub"]` after a section name; c is the space that ended the name.
func (r *configReader) subsection(b *strings.Builder, c byte) (string, error) {
	for isSpace(c) {
		if c == '\n' {
			return "", r.fail("incomplete section header")
		}
		c = r.next()
	}
	if c != '"' {
		return "", r.fail("subsection name must be quoted")
	}
	b.WriteByte('.')
	for {
		c := r.next()
		if c == '\n' {
			return "", r.fail("incomplete section header")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = r.next()
			if c == '\n' {
				return "", r.fail("incomplete section header")
			}
		}
		b.WriteByte(c)
	}
	if r.next() != ']' {
		return "", r.fail("expected ] after subsection")
	}
	return b.String(), nil
}

// setting reads "name [= value]" whose first character c was already read.
func (r *configReader) setting(c byte) (configEntry, error) {
	var name strings.Builder
	name.WriteByte(lower(c))
	for {
		c = r.next()
		if r.eof || !isKeyChar(c) {
			break
		}
		name.WriteByte(lower(c))
	}
	for c == ' ' || c == '\t' {
		c = r.next()
	}
	e := configEntry{Key: name.String()}
	if c == '\n' {
		return e, nil
	}
	if c != '=' {
		return e, r.fail(fmt.Sprintf("bad character %q after name %q", c, e.Key))
	}
	v, err := r.value()
	if err != nil {
		return e, err
	}
	e.Value, e.HasValue = v, true
	return e, nil
}

// value reads a setting's value up to the end of its (possibly continued) line.
func (r *configReader) value() (string, error) {
	var (
		b       strings.Builder
		space   int
		quote   bool
		comment bool
	)
	for {
		c := r.next()
		if c == '\n' {
			if quote {
				return "", r.fail("unterminated quoted value")
			}
			return b.String(), nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		if c == '\\' {
			c = r.next()
			switch c {
			case '\n': // continuation (at the end of the data, git reads a final '\n' too)
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", r.fail(fmt.Sprintf("unknown escape \\%c in value", c))
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		b.WriteByte(c)
	}
}

// splitKey splits a key at its first and last dot into section, subsection (may be empty)
// and name, as git's parse_config_key does.
func splitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	section, name = key[:first], key[last+1:]
	if last > first {
		sub = key[first+1 : last]
	}
	return section, sub, name
}

// parseBool reads a git boolean (git-config(1) "Values"): no value and true/yes/on are true,
// "" and false/no/off are false, an integer is true when non-zero. ok is false for
// anything else.
func parseBool(e configEntry) (v, ok bool) {
	if !e.HasValue {
		return true, true
	}
	switch strings.ToLower(e.Value) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	n, err := strconv.ParseInt(e.Value, 0, 64)
	if err != nil {
		return false, false
	}
	return n != 0, true
}

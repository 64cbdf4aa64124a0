package safety

import "strings"

// optSpec is the option grammar of one command: which options take an argument. Options
// that are not listed are flags.
type optSpec struct {
	arg  string   // short options that take an argument (attached or the next word)
	opt  string   // short options whose argument is optional and only attached (sed -i[SUF])
	long []string // long options (without "--") that take an argument
	lopt []string // long options whose argument is optional and only given with '='
	stop bool     // options end at the first operand (commands that run commands)
	plus bool     // words starting with '+' are operands (not options)
}

// opt is one parsed option: name is a single letter for short options and "--long" for long
// ones (resolved to the full name when the word is an unambiguous prefix).
type opt struct {
	name string
	val  arg
	has  bool
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts []opt
	ops  []arg
	rest int // with spec.stop: index in argv of the first operand (len(argv) when none)
}

// parseArgs parses argv[1:] with the GNU conventions: clustered short options, attached or
// separate arguments, --long=value, unambiguous long prefixes, "--" ends options, "-" is an
// operand.
func parseArgs(argv []arg, sp *optSpec) parsed {
	var p parsed
	p.rest = len(argv)
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if s == "--" {
			if sp.stop {
				p.rest = i + 1
				return p
			}
			p.ops = append(p.ops, argv[i+1:]...)
			return p
		}
		if len(s) < 2 || s[0] != '-' || argv[i].dyn && strings.HasPrefix(s, dyn) {
			if sp.stop {
				p.rest = i
				return p
			}
			p.ops = append(p.ops, argv[i])
			continue
		}
		if strings.HasPrefix(s, "--") {
			name, val, hasEq := strings.Cut(s[2:], "=")
			full, takes := resolveLong(name, sp.long)
			if !takes {
				if f, ok := resolveLongName(name, sp.lopt); ok {
					full = f
				}
			}
			o := opt{name: "--" + full}
			if hasEq {
				o.val, o.has = subArg(argv[i], val), true
			} else if takes && i+1 < len(argv) {
				i++
				o.val, o.has = argv[i], true
			}
			p.opts = append(p.opts, o)
			continue
		}
		// A cluster of short options.
		for j := 1; j < len(s); j++ {
			c := s[j]
			if strings.IndexByte(sp.arg, c) >= 0 {
				o := opt{name: string(c)}
				if j+1 < len(s) {
					o.val, o.has = subArg(argv[i], s[j+1:]), true
				} else if i+1 < len(argv) {
					i++
					o.val, o.has = argv[i], true
				}
				p.opts = append(p.opts, o)
				break
			}
			if strings.IndexByte(sp.opt, c) >= 0 {
				o := opt{name: string(c)}
				if j+1 < len(s) {
					o.val, o.has = subArg(argv[i], s[j+1:]), true
				}
				p.opts = append(p.opts, o)
				break
			}
			p.opts = append(p.opts, opt{name: string(c)})
		}
	}
	return p
}

// subArg returns an argument holding part of another argument's value.
func subArg(x arg, s string) arg {
	return arg{s: s, dyn: strings.Contains(s, dyn), glob: x.glob, net: x.net, w: nil}
}

// resolveLong returns the full name of a long option that takes an argument when name is
// that option or an unambiguous prefix of it.
func resolveLong(name string, long []string) (string, bool) {
	f, ok := resolveLongName(name, long)
	if ok {
		return f, true
	}
	return name, false
}

func resolveLongName(name string, list []string) (string, bool) {
	found := ""
	for _, l := range list {
		if l == name {
			return l, true
		}
		if len(name) >= 2 && strings.HasPrefix(l, name) {
			if found != "" {
				return name, false
			}
			found = l
		}
	}
	if found != "" {
		return found, true
	}
	return name, false
}

// has reports whether an option is present: a short letter ("i") or a long name
// ("--in-place", also matched by an unambiguous prefix of at least 3 letters such as --in).
func (p *parsed) has(names ...string) bool {
	_, ok := p.get(names...)
	return ok
}

// get returns the first option named by any of names (see has).
func (p *parsed) get(names ...string) (opt, bool) {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return o, true
			}
			if len(n) > 2 && n[:2] == "--" && len(o.name) >= 5 && strings.HasPrefix(n, o.name) {
				return o, true
			}
		}
	}
	return opt{}, false
}

// all returns every option named by any of names.
func (p *parsed) all(names ...string) []opt {
	var out []opt
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n || (len(n) > 2 && n[:2] == "--" && len(o.name) >= 5 && strings.HasPrefix(n, o.name)) {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

package safety

import "strings"

// This file judges "read-only" tools that carry their own exec or write language: sed,
// awk, find, fd, rg, less and tar.

var sedSpec = optSpec{arg: "efl", opt: "i", long: []string{"expression", "file", "line-length"}, lopt: []string{"in-place"}}

// hSed judges sed: -i/--in-place writes the files; the script's e, w, W, s///e and s///w
// commands run programs or write files; r and R read files.
func hSed(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &sedSpec)
	var scripts []arg
	ops := p.ops
	for _, o := range p.opts {
		switch o.name {
		case "e", "--expression":
			scripts = append(scripts, o.val)
		case "f", "--file":
			a.find(c, "exec.tool-exec", Ask, "sed -f reads a script file that may run commands or write files")
		}
	}
	if len(scripts) == 0 && len(ops) > 0 {
		scripts = append(scripts, ops[0])
		ops = ops[1:]
	}
	for _, s := range scripts {
		if s.dyn {
			a.find(c, "dynamic.script", Ask, "The sed script is only known at run time")
			continue
		}
		a.sedScript(s.s, c)
	}
	if p.has("i", "--in-place") {
		for _, x := range ops {
			a.writeTarget(x, "write", c.pos, c.end)
		}
	}
	return 0
}

// sedScript scans a sed script for commands that execute, write or read files.
func (a *analyzer) sedScript(s string, c *callInfo) {
	i := 0
	skipAddr := func() bool {
		for i < len(s) {
			ch := s[i]
			switch {
			case ch >= '0' && ch <= '9', ch == '$', ch == ',', ch == '~', ch == '+', ch == '!', ch == ' ', ch == '\t':
				i++
			case ch == '/' || ch == '\\':
				d := ch
				if ch == '\\' {
					if i+1 >= len(s) {
						return false
					}
					i++
					d = s[i]
				}
				i++
				for i < len(s) && s[i] != d {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				if i >= len(s) {
					return false
				}
				i++
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			default:
				return true
			}
		}
		return true
	}
	toEOL := func() string {
		j := strings.IndexByte(s[i:], '\n')
		var r string
		if j < 0 {
			r, i = s[i:], len(s)
		} else {
			r, i = s[i:i+j], i+j
		}
		return strings.TrimSpace(r)
	}
	unparsed := func() { a.find(c, "exec.tool-exec", Ask, "The sed script could not be read fully") }
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';', '{', '}':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		if !skipAddr() {
			unparsed()
			return
		}
		if i >= len(s) {
			return
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F', ';', '\n':
		case 'q', 'Q', 'L':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				i++
			}
		case 'a', 'i', 'c':
			toEOL()
		case 'e':
			body := toEOL()
			a.find(c, "exec.tool-exec", Ask, "sed's e command runs a shell command")
			if body != "" {
				a.nestedText(body, -1, POSIX, c)
			}
		case 'w', 'W':
			a.writeTarget(lit(toEOL()), "write", c.pos, c.end)
		case 'r', 'R':
			f := toEOL()
			if p, ok := a.resolve(lit(f)); ok && a.isCredential(p) {
				a.find(c, "credential.read", Ask, "sed reads "+p)
			}
		case 's', 'y':
			if i >= len(s) {
				unparsed()
				return
			}
			d := s[i]
			i++
			for part := 0; part < 2; part++ {
				for i < len(s) && s[i] != d {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				if i >= len(s) {
					unparsed()
					return
				}
				i++
			}
			if cmd == 'y' {
				continue
			}
			for i < len(s) {
				f := s[i]
				if f == 'e' {
					a.find(c, "exec.tool-exec", Ask, "sed's s///e flag runs the pattern space as a shell command")
				} else if f == 'w' {
					i++
					a.writeTarget(lit(toEOL()), "write", c.pos, c.end)
					break
				} else if !(f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9') {
					break
				}
				i++
			}
		default:
			unparsed()
			return
		}
	}
}

var awkSpec = optSpec{arg: "FvfilEe", long: []string{"field-separator", "assign", "file", "include", "load", "source", "exec"}}

// hAwk judges awk: system(), pipes to or from commands, getline from commands, print and
// printf redirections to files, -i inplace and loaded extensions.
func hAwk(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &awkSpec)
	var progs []arg
	for _, o := range p.opts {
		switch o.name {
		case "f", "--file", "E", "--exec":
			a.find(c, "exec.tool-exec", Ask, "awk -f runs a program file")
		case "i", "--include":
			if o.val.s == "inplace" {
				for _, x := range p.ops[1:] {
					a.writeTarget(x, "write", c.pos, c.end)
				}
			} else {
				a.find(c, "exec.tool-exec", Ask, "awk -i loads a library")
			}
		case "l", "--load":
			a.find(c, "exec.tool-exec", Ask, "awk -l loads an extension")
		case "e", "--source":
			progs = append(progs, o.val)
		}
	}
	if len(progs) == 0 && len(p.ops) > 0 && !p.has("f", "--file") {
		progs = append(progs, p.ops[0])
	}
	for _, x := range progs {
		if x.dyn {
			a.find(c, "dynamic.script", Ask, "The awk program is only known at run time")
			continue
		}
		if strings.Contains(x.s, "@load") || strings.Contains(x.s, "@include") {
			a.find(c, "exec.tool-exec", Ask, "The awk program loads an extension or another program file")
		}
		a.awkProgram(x.s, c)
	}
	return 0
}

// awkProgram scans an awk program outside string and regex literals.
func (a *analyzer) awkProgram(s string, c *callInfo) {
	inPrint, depth := false, 0
	prevSig := byte('\n')
	word := func(i int) (string, int) {
		j := i
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return s[i:j], j
	}
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(s) {
				j = len(s)
			}
			i = j + 1
			prevSig = '"'
			continue
		case ch == '/' && strings.IndexByte("(,{};!~&|\n=", prevSig) >= 0:
			j := i + 1
			for j < len(s) && s[j] != '/' && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			prevSig = '/'
			continue
		case ch == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			w, j := word(i)
			switch w {
			case "system":
				k := j
				for k < len(s) && s[k] == ' ' {
					k++
				}
				if k < len(s) && s[k] == '(' {
					a.awkExec(s[k:], c)
				}
			case "print", "printf":
				inPrint, depth = true, 0
			}
			i = j
			prevSig = 'a'
			continue
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		case ch == ';' || ch == '}' || ch == '\n' || ch == '{':
			inPrint = false
		case ch == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i += 2
				prevSig = '|'
				continue
			}
			a.find(c, "exec.tool-exec", Ask, "The awk program pipes to or from a command")
		case ch == '>' && inPrint && depth <= 0:
			j := i + 1
			if j < len(s) && s[j] == '>' {
				j++
			}
			for j < len(s) && s[j] == ' ' {
				j++
			}
			k := -1
			if j < len(s) && s[j] == '"' {
				k = strings.IndexByte(s[j+1:], '"')
			}
			if k >= 0 {
				a.writeTarget(lit(s[j+1:j+1+k]), "write", c.pos, c.end)
				i = j + k + 2
				continue
			}
			a.find(c, "write.dynamic-path", Ask, "The awk program writes to a file named at run time")
		}
		if ch != ' ' && ch != '\t' {
			prevSig = ch
		}
		i++
	}
}

// awkExec judges the argument of system(...): a single string literal is judged as a shell
// command; anything else asks.
func (a *analyzer) awkExec(s string, c *callInfo) {
	t := strings.TrimSpace(s[1:])
	if strings.HasPrefix(t, "\"") {
		end := strings.IndexByte(t[1:], '"')
		if end >= 0 {
			rest := strings.TrimSpace(t[end+2:])
			body := t[1 : end+1]
			if strings.HasPrefix(rest, ")") && !strings.Contains(body, "\\") {
				a.find(c, "exec.tool-exec", Ask, "The awk program runs a shell command")
				a.nestedText(body, -1, POSIX, c)
				return
			}
		}
	}
	a.find(c, "exec.tool-exec", Ask, "The awk program runs a shell command built at run time")
}

// findSpec lists find's predicates that take arguments (findutils find(1)).
var findArg1 = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true,
	"-iwholename": true, "-regex": true, "-iregex": true, "-regextype": true, "-type": true,
	"-xtype": true, "-size": true, "-mtime": true, "-mmin": true, "-atime": true, "-amin": true,
	"-ctime": true, "-cmin": true, "-newer": true, "-anewer": true, "-cnewer": true,
	"-perm": true, "-user": true, "-group": true, "-uid": true, "-gid": true, "-links": true,
	"-inum": true, "-samefile": true, "-maxdepth": true, "-mindepth": true, "-fstype": true,
	"-lname": true, "-ilname": true, "-used": true, "-context": true, "-printf": true,
	"-files0-from": true, "-D": true, "-newermt": true, "-newerct": true, "-newerat": true,
	"-newermm": true, "-mount": false,
}

// findFilters are find tests that limit which files match (so -delete after them does not
// delete everything below the start points).
var findFilters = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true,
	"-iwholename": true, "-regex": true, "-iregex": true, "-newer": true, "-anewer": true,
	"-cnewer": true, "-mtime": true, "-mmin": true, "-atime": true, "-amin": true,
	"-ctime": true, "-cmin": true, "-size": true, "-empty": true, "-user": true,
	"-group": true, "-uid": true, "-gid": true, "-perm": true, "-inum": true,
	"-samefile": true, "-links": true, "-lname": true, "-ilname": true, "-newermt": true,
}

// hFind judges find: -delete, -exec/-execdir/-ok/-okdir (the command is judged with {}
// standing for any path below the start points), -fprint*, -fls.
func hFind(a *analyzer, argv []arg, c *callInfo) eff {
	i := 1
	for i < len(argv) && (argv[i].s == "-H" || argv[i].s == "-L" || argv[i].s == "-P" || strings.HasPrefix(argv[i].s, "-O")) {
		i++
	}
	if i < len(argv) && argv[i].s == "-D" {
		i += 2
	}
	var starts []arg
	for i < len(argv) {
		s := argv[i].s
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == ")" || s == "," {
			break
		}
		starts = append(starts, argv[i])
		i++
	}
	if len(starts) == 0 {
		starts = []arg{lit(".")}
	}
	var e eff
	filtered := false
	for i < len(argv) {
		s := argv[i].s
		i++
		if findFilters[s] {
			filtered = true
		}
		switch {
		case s == "-delete":
			for _, st := range starts {
				if !filtered && a.destroy(st, "find", c) {
					continue
				}
				a.writeTarget(dirAll(st), "write", c.pos, c.end)
			}
		case s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir":
			j := i
			for j < len(argv) && argv[j].s != ";" && argv[j].s != "+" {
				j++
			}
			sub := make([]arg, 0, j-i)
			for _, x := range argv[i:j] {
				if strings.Contains(x.s, "{}") {
					for _, st := range starts {
						y := dirAll(st)
						y.s = strings.Replace(x.s, "{}", y.s, 1)
						sub = append(sub, y)
						break
					}
					continue
				}
				sub = append(sub, x)
			}
			if len(sub) > 0 {
				e |= a.judge(sub, c)
			}
			if !filtered && (s == "-exec" || s == "-ok") && len(starts) > 0 && j > i {
				// Without tests, the first file found is the starting point itself:
				// find . -exec rm -rf {} + deletes the workspace.
				self := make([]arg, 0, j-i)
				for _, x := range argv[i:j] {
					if x.s == "{}" {
						x = starts[0]
					}
					self = append(self, x)
				}
				e |= a.judge(self, c)
			}
			i = j + 1
		case s == "-fprint" || s == "-fprint0" || s == "-fls":
			if i < len(argv) {
				a.writeTarget(argv[i], "write", c.pos, c.end)
			}
			i++
		case s == "-fprintf":
			if i < len(argv) {
				a.writeTarget(argv[i], "write", c.pos, c.end)
			}
			i += 2
		case findArg1[s]:
			i++
		}
	}
	return e
}

// hFd judges fd: -x/--exec and -X/--exec-batch run a command for the results.
func hFd(a *analyzer, argv []arg, c *callInfo) eff {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if s == "-x" || s == "--exec" || s == "-X" || s == "--exec-batch" {
			sub := make([]arg, 0, len(argv)-i)
			for _, x := range argv[i+1:] {
				if x.s == ";" {
					break
				}
				if strings.Contains(x.s, "{") {
					x = arg{s: a.cwdOrDyn() + "/" + dyn, dyn: true}
				}
				sub = append(sub, x)
			}
			if len(sub) == 0 {
				return 0
			}
			return a.judge(sub, c)
		}
	}
	return 0
}

// hRg judges ripgrep: --pre runs a preprocessor program on every file.
func hRg(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		if x.s == "--pre" || strings.HasPrefix(x.s, "--pre=") || x.s == "--hostname-bin" || strings.HasPrefix(x.s, "--hostname-bin=") {
			a.find(c, "exec.tool-exec", Ask, "rg --pre runs a program on every file searched")
		}
		if x.s == "--" {
			break
		}
	}
	return 0
}

// hLess judges pagers: +cmd initial commands may hold ! shell escapes or | pipes.
func hLess(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		s := x.s
		if strings.HasPrefix(s, "+") && (strings.ContainsAny(s, "!|") || x.dyn) {
			a.find(c, "exec.tool-exec", Ask, "The pager's initial command runs a shell command")
		}
		if strings.HasPrefix(s, "--lesskey") || s == "-k" || strings.HasPrefix(s, "-o") || strings.HasPrefix(s, "--log-file") || strings.HasPrefix(s, "-O") {
			a.find(c, "exec.tool-exec", Ask, "This pager option reads a key file or writes a log file")
		}
	}
	return 0
}

var tarSpec = optSpec{
	arg: "fCTXbgIKLNVFH",
	long: []string{"file", "directory", "files-from", "exclude-from", "blocking-factor",
		"listed-incremental", "use-compress-program", "starting-file", "tape-length",
		"newer", "after-date", "label", "info-script", "new-volume-script", "format",
		"to-command", "checkpoint-action", "rsh-command", "owner", "group", "mode", "mtime",
		"exclude", "transform", "xform", "strip-components", "suffix", "backup", "record-size",
		"volno-file", "index-file", "level", "occurrence", "sort", "warning", "quoting-style",
		"pax-option", "rmt-command", "checkpoint", "hole-detection", "atime-preserve"},
}

// hTar judges tar: --to-command, --checkpoint-action=exec, -I/--use-compress-program,
// --rsh-command, --info-script run programs; creating writes the archive; extracting writes
// into the target directory.
func hTar(a *analyzer, argv []arg, c *callInfo) eff {
	av := argv
	// Old-style first argument ("tar xvf a.tar"): rewrite as a cluster.
	if len(av) > 1 && !strings.HasPrefix(av[1].s, "-") && !av[1].dyn {
		cp := make([]arg, len(av))
		copy(cp, av)
		cp[1] = lit("-" + av[1].s)
		av = cp
	}
	p := parseArgs(av, &tarSpec)
	mode := byte(0)
	for _, o := range p.opts {
		switch o.name {
		case "x", "--extract", "--get":
			mode = 'x'
		case "c", "--create", "r", "--append", "u", "--update", "A", "--catenate", "--concatenate", "--delete":
			mode = 'c'
		case "t", "--list", "d", "--diff", "--compare", "--test-label":
			if mode == 0 {
				mode = 't'
			}
		case "I", "--use-compress-program", "--to-command", "--rsh-command", "--rmt-command", "F", "--info-script", "--new-volume-script":
			a.find(c, "exec.tool-exec", Ask, "This tar option runs a program")
			a.tarPayload(p, o, c)
		case "--checkpoint-action":
			if strings.Contains(o.val.s, "exec") || o.val.dyn {
				a.find(c, "exec.tool-exec", Ask, "tar --checkpoint-action=exec runs a command")
				a.tarPayload(p, o, c)
			}
		}
	}
	switch mode {
	case 'c':
		if f, ok := p.get("f", "--file"); ok && f.has && f.val.s != "-" {
			a.writeTarget(f.val, "write", c.pos, c.end)
		}
	case 'x':
		if p.has("O", "--to-stdout") {
			return 0
		}
		dir := lit(a.cwdOrDyn())
		if d, ok := p.get("C", "--directory"); ok && d.has {
			dir = d.val
		}
		if p.has("P", "--absolute-names") {
			dir = lit("/") // members with absolute names land anywhere
		}
		a.writeTarget(dirAll(dir), "write", c.pos, c.end)
	}
	return 0
}

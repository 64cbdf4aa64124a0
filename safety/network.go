package safety

import "strings"

var curlSpec = optSpec{
	arg: "odTFKHAeuxXmbcCErwyYzUQDtP",
	long: []string{"output", "data", "data-binary", "data-raw", "data-ascii", "data-urlencode",
		"upload-file", "form", "form-string", "config", "header", "user-agent", "referer", "user",
		"proxy", "request", "max-time", "cookie", "cookie-jar", "dump-header", "trace",
		"trace-ascii", "stderr", "write-out", "output-dir", "json", "url", "resolve", "connect-to",
		"cacert", "cert", "key", "interface", "retry", "range", "limit-rate", "connect-timeout",
		"libcurl", "netrc-file", "proxy-user", "oauth2-bearer", "aws-sigv4", "variable",
		"url-query", "etag-save", "etag-compare", "hsts", "alt-svc", "ftp-port", "create-file-mode",
		"unix-socket", "abstract-unix-socket", "happy-eyeballs-timeout-ms", "expect100-timeout",
		"max-filesize", "max-redirs", "retry-delay", "retry-max-time", "speed-limit", "speed-time",
		"time-cond", "tls-max", "ciphers", "pinnedpubkey", "preproxy", "noproxy", "mail-from", "mail-rcpt"},
}

// hCurl judges curl: network access; -o/-O/--output-dir and friends write; uploads of
// credential files (-d @file, -T, -F name=@file, --data-binary @file) are exfiltration; -K
// reads a config that may do anything; output to stdout is downloaded content.
func hCurl(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	p := parseArgs(argv, &curlSpec)
	a.find(c, "network.access", Ask, "")
	e := effNetwork
	toFile := false
	for _, o := range p.opts {
		switch o.name {
		case "o", "--output":
			if !stdoutPath(o.val.s) {
				toFile = true
				a.writeTarget(o.val, "write", c.pos, c.end)
				a.recordFetch(o.val)
			}
		case "O", "--remote-name", "--remote-name-all", "J", "--remote-header-name":
			toFile = true
			a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
			for _, u := range p.ops {
				a.recordFetch(lit(urlBase(u.s)))
			}
		case "--output-dir":
			a.writeTarget(dirAll(o.val), "write", c.pos, c.end)
		case "D", "--dump-header", "c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc":
			if o.val.s != "-" && o.val.s != "%" {
				a.writeTarget(o.val, "write", c.pos, c.end)
			}
		case "d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json":
			a.upload(uploadFile(o.val, true), c)
		case "T", "--upload-file":
			a.upload(o.val, c)
		case "F", "--form":
			a.upload(uploadFile(o.val, false), c)
		case "K", "--config":
			a.find(c, "exec.tool-exec", Ask, "curl -K reads options from a file, which may write files or send data")
		}
	}
	if !toFile {
		e |= effFetch
	}
	return e
}

// stdoutPath reports whether an output file name is standard output ("-", /dev/stdout,
// /dev/fd/1, /proc/self/fd/1).
func stdoutPath(s string) bool {
	switch s {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2":
		return true
	}
	return false
}

// uploadFile returns the file a curl data or form argument reads ("@file", "name=@file",
// "name=<file"), or an argument with an empty value.
func uploadFile(x arg, data bool) arg {
	s := x.s
	if i := strings.Index(s, "=@"); i >= 0 && !data {
		s = s[i+2:]
	} else if i := strings.Index(s, "=<"); i >= 0 && !data {
		s = s[i+2:]
	} else if strings.HasPrefix(s, "@") {
		s = s[1:]
	} else if i := strings.Index(s, "@"); data && i > 0 && strings.IndexByte(s[:i], '=') == i-1 {
		s = s[i+1:]
	} else {
		return arg{}
	}
	if j := strings.IndexByte(s, ';'); j >= 0 && !data {
		s = s[:j]
	}
	return subArg(x, s)
}

// upload judges a file sent over the network: credential files are exfiltration.
func (a *analyzer) upload(x arg, c *callInfo) {
	if x.s == "" || x.s == "-" {
		return
	}
	if strings.HasPrefix(x.s, "~/") && a.ctx.Home != "" {
		// curl does not expand ~, but a model writing it means the home directory.
		x.s = a.ctx.Home + x.s[1:]
	}
	if p, ok := a.resolve(x); ok && a.isCredential(p) {
		a.find(c, "exfil.credential", Deny, "Uploading "+p)
	}
}

var wgetSpec = optSpec{
	arg:  "OPoaieUtTwQYlADRIXBhe",
	long: []string{"use-askpass", "output-document", "directory-prefix", "output-file", "append-output", "input-file", "execute", "user-agent", "tries", "timeout", "wait", "quota", "level", "accept", "reject", "domains", "include-directories", "exclude-directories", "base", "header", "post-data", "post-file", "body-data", "body-file", "method", "user", "password", "load-cookies", "save-cookies", "certificate", "private-key", "ca-certificate", "referer", "limit-rate", "http-user", "http-password", "config", "warc-file", "save-headers-file"},
}

// hWget judges wget: network access, writes (-O, -P, the working directory), uploads
// (--post-file, --body-file), -e commands.
func hWget(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	p := parseArgs(argv, &wgetSpec)
	a.find(c, "network.access", Ask, "")
	e := effNetwork
	out := false
	for _, o := range p.opts {
		switch o.name {
		case "O", "--output-document":
			out = true
			if stdoutPath(o.val.s) {
				e |= effFetch
			} else {
				a.writeTarget(o.val, "write", c.pos, c.end)
				a.recordFetch(o.val)
			}
		case "P", "--directory-prefix":
			out = true
			a.writeTarget(dirAll(o.val), "write", c.pos, c.end)
		case "o", "--output-file", "a", "--append-output", "--save-cookies", "--warc-file", "--save-headers-file":
			a.writeTarget(o.val, "write", c.pos, c.end)
		case "--post-file", "--body-file":
			a.upload(o.val, c)
		case "e", "--execute", "--config", "--use-askpass":
			a.find(c, "exec.tool-exec", Ask, "wget -e runs wgetrc commands, which may write files anywhere; --use-askpass runs a program")
		}
	}
	if !out {
		a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
		for _, u := range p.ops {
			a.recordFetch(lit(urlBase(u.s)))
		}
	}
	return e
}

// urlBase returns the file name curl -O and wget give a download: the last path segment of
// the URL.
func urlBase(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		u = u[i+1:]
	}
	if u == "" {
		return "index.html"
	}
	return u
}

// hNc judges netcat and socat: -e/-c/--exec/--sh-exec and socat exec:/system: addresses
// connect a program to the network.
func hNc(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		s := strings.ToLower(x.s)
		switch {
		case s == "-e" || s == "-c" || s == "--exec" || s == "--sh-exec" || s == "--lua-exec" || strings.HasPrefix(s, "--exec=") || strings.HasPrefix(s, "--sh-exec="),
			strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.ContainsAny(s, "ec") && argv[0].s != "socat" && len(s) <= 4,
			strings.HasPrefix(s, "exec:") || strings.HasPrefix(s, "system:") || strings.Contains(s, ",exec:") || strings.HasPrefix(s, "exec,"):
			a.find(c, "network.reverse-shell", Deny, "")
			return effNetwork
		}
	}
	a.find(c, "network.access", Ask, "")
	return effNetwork | effFetch
}

// hSSH judges ssh: network access; a remote command runs elsewhere; ProxyCommand and
// LocalCommand run local programs.
func hSSH(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	a.find(c, "network.access", Ask, "")
	for _, x := range argv[1:] {
		l := strings.ToLower(x.s)
		if strings.Contains(l, "proxycommand") || strings.Contains(l, "localcommand") || strings.Contains(l, "knownhostscommand") {
			a.find(c, "exec.tool-exec", Ask, "This ssh option runs a local command")
		}
	}
	a.sshPayloads(argv, c)
	return effNetwork | effFetch
}

// hScp judges scp and rsync: network access when an operand is remote (host:path);
// credential files copied to a remote host are exfiltration; local destinations are writes.
func hScp(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "cFiJloPSeBT", long: []string{"rsh", "rsync-path", "exclude", "include", "exclude-from", "include-from", "files-from", "filter", "password-file", "log-file", "backup-dir", "temp-dir", "partial-dir", "compare-dest", "copy-dest", "link-dest", "chmod", "chown", "timeout", "bwlimit", "port", "sockopts", "out-format", "log-file-format", "max-size", "min-size", "compress-choice", "checksum-choice", "usermap", "groupmap", "info", "debug", "suffix", "modify-window", "block-size", "max-delete", "iconv"}})
	if p.has("e", "--rsh", "--rsync-path") && argv[0].s == "rsync" {
		a.find(c, "exec.tool-exec", Ask, "rsync -e / --rsync-path runs a program")
		// -e COMMAND runs locally (rsync(1) splits it into words; judged as a shell
		// command, which is no more lenient); --rsync-path runs on the remote host.
		for _, o := range p.all("e", "--rsh") {
			if o.has {
				a.payloadShell(o.val, c)
			}
		}
	}
	if argv[0].s == "scp" && p.has("S") {
		a.find(c, "exec.tool-exec", Ask, "scp -S runs another program instead of ssh")
		for _, o := range p.all("S") {
			if o.has {
				a.judge([]arg{o.val}, c)
			}
		}
	}
	a.sshPayloads(argv, c)
	for _, o := range p.all("o") {
		if l := strings.ToLower(o.val.s); strings.Contains(l, "proxycommand") || strings.Contains(l, "localcommand") {
			a.find(c, "exec.tool-exec", Ask, "This ssh option runs a local command")
		}
	}
	if len(p.ops) == 0 {
		return 0
	}
	remote := func(s string) bool {
		i := strings.IndexByte(s, ':')
		return i > 0 && !strings.Contains(s[:i], "/") || strings.HasPrefix(s, "rsync://")
	}
	anyRemote := false
	for _, x := range p.ops {
		if remote(x.s) {
			anyRemote = true
		}
	}
	dst := p.ops[len(p.ops)-1]
	if anyRemote {
		a.find(c, "network.access", Ask, "")
	}
	if remote(dst.s) {
		for _, x := range p.ops[:len(p.ops)-1] {
			if !remote(x.s) {
				a.upload(x, c)
			}
		}
	} else if len(p.ops) >= 2 {
		a.writeTarget(dst, "write", c.pos, c.end)
	}
	if anyRemote {
		return effNetwork
	}
	return 0
}

// hSSHKeygen judges ssh-keygen: making a key writes -f FILE (default ~/.ssh/id_*); -y prints
// a public key from a private one (reads it); -l, -F and -H only read known hosts and keys.
func hSSHKeygen(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "abCDEFfGIJjKMmNnOPRrSstVwYZz"})
	file, hasFile := p.get("f")
	switch {
	case p.has("l") || p.has("B") || p.has("F") || p.has("Q"):
		return 0
	case p.has("y"):
		a.find(c, "credential.read", Ask, "ssh-keygen -y reads a private key")
		return effCredRead
	case p.has("R") || p.has("H"):
		// Editing known_hosts.
	}
	if hasFile && file.has {
		a.writeTarget(file.val, "write", c.pos, c.end)
		a.writeTarget(arg{s: file.val.s + ".pub", dyn: file.val.dyn}, "write", c.pos, c.end)
		return 0
	}
	if a.ctx.Home != "" {
		a.writeTarget(lit(a.ctx.Home+"/.ssh/id_"+dyn), "write", c.pos, c.end)
	}
	return 0
}

package safety

import (
	"path"
	"strings"
)

// commands maps a program name to its handler. It is filled once by init (handlers refer
// back to it through judge) and never changed afterwards.
var commands map[string]handler

// lookup returns the handler of a program name, including families matched by prefix
// (mkfs.ext4, python3.12 …), or nil for an unknown program.
func lookup(name string) handler {
	if h, ok := commands[name]; ok {
		return h
	}
	switch {
	case strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "mkfs_") || strings.HasPrefix(name, "fsck."):
		return hFormat
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		return interp("c", "c", "m")
	case strings.HasPrefix(name, "pip"):
		return hPip
	case strings.HasPrefix(name, "ruby") || strings.HasPrefix(name, "perl5") || strings.HasPrefix(name, "php"):
		return interp("e", "er", "")
	case strings.HasPrefix(name, "node"):
		return interp("e", "ep", "r")
	case strings.HasPrefix(name, "lua"):
		return interp("e", "e", "l")
	}
	return nil
}

func allow(a *analyzer, argv []arg, c *callInfo) eff { return 0 }

func register(h handler, names ...string) {
	for _, n := range names {
		commands[n] = h
	}
}

func init() {
	commands = make(map[string]handler, 512)
	register(allow,
		// Programs that only read files, print text or report state.
		"ls", "dir", "vdir", "cat", "tac", "head", "tail", "grep", "egrep", "fgrep", "zgrep", "zegrep",
		"zfgrep", "wc", "echo", "pwd", "true", "false", ":", "which", "whereis", "type",
		"stat", "du", "df", "cut", "tr", "nl", "od", "hexdump", "diff", "cmp", "comm",
		"paste", "join", "column", "fmt", "fold", "expand", "unexpand", "rev", "seq", "cal", "ncal",
		"whoami", "id", "groups", "uname", "uptime", "basename", "dirname", "realpath", "readlink",
		"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "cksum", "b2sum",
		"sum", "md5", "shasum", "jq", "gojq", "jless", "locate", "plocate", "mlocate", "ps", "pgrep",
		"pstree", "pidof", "free", "lsblk", "lscpu", "lsusb", "lspci", "lsmod", "lsof", "whatis",
		"apropos", "help", "jobs", "strings", "nm", "objdump", "readelf", "size", "look",
		"numfmt", "tsort", "factor", "expr", "bc", "getconf", "nproc", "arch", "hostid", "logname",
		"tty", "users", "who", "w", "last", "lastlog", "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat",
		"gzcat", "zless", "zmore", "exa", "eza", "lsd", "htop", "btop", "top", "vmstat", "iostat", "mpstat", "netstat", "tput", "clear", "reset", "stty",
		"locale", "shellcheck", "yes", "dirs", "shopt", "umask", "shift", "return", "exit", "break",
		"continue", "unalias", "ulimit", "times", "caller", "compopt", "lsattr", "getfacl", "namei", "findmnt", "fc-list", "dpkg-query",
		"tldr", "diffstat", "colordiff", "wdiff", "icdiff", "tokei", "scc",
		"sloccount", "yamllint", "jsonlint", "csvlook", "csvstat", "gron", "identify", "ffprobe", "pdfinfo", "lsb_release",
		"sw_vers", "system_profiler", "vm_stat", "ioreg", "mdfind", "mdls", "otool",
		"dwarfdump", "cowsay", "figlet", "toilet", "lolcat", "banner", "fortune", "neofetch",
		"fastfetch", "screenfetch", "inxi", "hwinfo", "dmidecode", "lshw", "sensors", "acpi", "upower",
		"glxinfo", "xdpyinfo", "xwininfo", "uuidgen", "mcookie",
		"pwgen", "csvcut", "csvgrep", "getent")
	register(hNetwork, "mail", "mailx", "sendmail", "mutt", "msmtp", "swaks", "tftp", "smbclient", "ngrok", "cloudflared", "dig", "host", "nslookup", "whois", "ping", "ping6", "traceroute", "tracepath", "mtr", "drill", "arping", "nmap", "telnet", "ftp", "sftp", "lftp", "ncftp", "mosh", "curlie", "xh", "http", "https", "aria2c", "axel", "lynx", "w3m", "links", "elinks", "youtube-dl", "yt-dlp", "rclone", "s3cmd", "aws", "gcloud", "gsutil", "az", "gh", "glab", "hub", "heroku", "vercel", "netlify", "flyctl", "doctl", "ssh-copy-id", "ssh-keyscan")
	register(allow, "sleep", "wait")
	register(hCd, "cd", "pushd", "popd")

	register(hRm, "rm", "unlink", "rmdir", "shred", "srm", "trash", "trash-put", "gio-trash")
	register(hTouch, "touch", "mkdir", "mkfifo", "mknod")
	register(hTruncate, "truncate", "fallocate")
	register(hCp, "cp", "install")
	register(hMv, "mv")
	register(hLn, "ln", "link")
	register(hChmod, "chmod", "chown", "chgrp", "chattr", "setfacl", "chflags", "chcon", "setfattr", "xattr")
	register(hDd, "dd", "ddrescue", "dcfldd")
	register(hTee, "tee", "sponge")
	register(hSed, "sed", "gsed")
	register(hAwk, "awk", "gawk", "mawk", "nawk")
	register(hFind, "find", "gfind")
	register(hFd, "fd", "fdfind")
	register(hRg, "rg", "ripgrep")
	register(hLess, "less", "more", "most", "pg")
	register(hTar, "tar", "gtar", "bsdtar")
	register(hSort, "sort")
	register(hDate, "date", "gdate")
	register(hUniq, "uniq")
	register(hXxd, "xxd")
	register(hBase64, "base64", "gbase64")
	register(hBase64, "base32", "basenc", "uudecode")
	register(hObfuscate, "rev", "tr")
	register(hOpenssl, "openssl")
	register(hArchive, "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma", "unlzma", "compress", "uncompress", "zip", "unzip", "7z", "7za", "7zr", "rar", "unrar", "cpio", "ar", "split", "csplit", "patch", "pax", "lha", "cabextract", "unar", "lsar", "zipinfo", "lzma", "unlzma", "compress", "uncompress")
	register(hMktemp, "mktemp")

	register(hCurl, "curl")
	register(hWget, "wget", "wget2")
	register(hNc, "nc", "ncat", "netcat", "socat", "pwncat")
	register(hSSH, "ssh", "autossh", "dbclient")
	register(hSSHKeygen, "ssh-keygen")
	register(hScp, "scp", "rsync")

	register(hShell, "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "tcsh", "csh", "rbash", "posh", "oksh", "loksh", "pdksh")
	register(hEval, "eval")
	register(hSource, "source", ".")
	register(hTrap, "trap")
	register(hAlias, "alias")
	register(hExec, "exec")
	register(hCommand, "command")
	register(hBuiltin, "builtin")
	register(hXargs, "xargs")
	register(hWatch, "watch")
	register(hBusybox, "busybox", "toybox")
	register(hEnv, "env")
	register(hSudo, "sudo", "doas", "pkexec", "run0", "su", "sudoedit", "runuser", "please", "ksu", "sg", "newgrp")
	register(hDisown, "disown", "bg", "fg")
	register(hScode, "s-code")

	register(interp("c", "c", "m"), "python", "python2", "python3", "pypy", "pypy3", "ipython", "jython")
	register(interp("ep", "ep", "r"), "node", "nodejs")
	register(interp("eE", "eE", "IM"), "perl")
	register(interp("e", "e", "rI"), "ruby", "irb", "jruby")
	register(interp("r", "r", ""), "php")
	register(interp("e", "e", "l"), "lua", "luajit")
	register(interp("e", "e", ""), "osascript", "Rscript", "julia", "tclsh", "wish", "elixir", "erl", "escript", "gjs", "qjs", "jjs", "groovy", "scala", "kotlin", "swift", "jshell", "R", "octave", "racket", "guile", "sbcl", "clisp", "ghci", "runghc", "runhaskell", "ocaml", "php-cli", "crystal", "nim", "dart", "bb", "nu", "pwsh", "powershell", "dc")
	register(hDeno, "deno", "bun")
	register(hEditor, "vim", "vi", "nvim", "view", "vimdiff", "emacs", "nano", "pico", "micro", "ed", "ex", "code", "subl", "gedit", "kate", "mcedit", "joe", "helix", "hx", "kak")
	register(hRunWorkspace, "make", "gmake", "bmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "buck", "buck2", "gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "lein", "rake", "just", "task", "mage", "tox", "nox", "pytest", "py.test", "jest", "vitest", "mocha", "karma", "phpunit", "rspec", "tsc", "tsx", "ts-node", "esbuild", "webpack", "vite", "rollup", "parcel", "babel", "eslint", "prettier", "black", "ruff", "isort", "flake8", "pylint", "mypy", "pyright", "rubocop", "golangci-lint", "staticcheck", "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "javac", "java", "kotlinc", "scalac", "ghc", "dotnet", "msbuild", "xcodebuild", "swiftc", "zig", "nasm", "as", "ld", "gdb", "lldb", "perf", "hyperfine", "pre-commit", "terraform", "tofu", "pulumi", "ansible", "ansible-playbook", "vagrant", "packer", "helm", "skaffold", "tilt", "air", "nodemon", "nvm", "pyenv", "rbenv", "virtualenv", "composer", "mix", "rebar3", "stack", "cabal", "opam", "dune", "sphinx-build", "mkdocs", "hugo", "jekyll", "zola", "sass", "lessc", "protoc", "buf", "flatc", "thrift", "swagger-codegen", "openapi-generator", "sqlc", "wire", "mockgen", "stringer", "jupyter", "streamlit", "flask", "django-admin", "uvicorn", "gunicorn", "rails", "artisan", "deploy", "ctest", "cpack", "autoreconf", "autoconf", "automake", "libtool", "configure", "bear", "scons", "waf", "premake5", "xmake")
	register(hEnvRunner, "uv", "rye", "poetry", "pdm", "hatch", "pipenv", "conda", "mamba", "micromamba", "bundle", "bundler", "mise", "asdf", "direnv", "nix-shell", "nix", "devbox", "pixi")
	register(hNpm, "npm", "yarn", "pnpm", "corepack")
	register(hRemotePkg, "npx", "pnpx", "bunx", "uvx", "pipx", "dlx")
	register(hGo, "go")
	register(hCargo, "cargo", "rustup")
	register(hPkg, "apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "pacman", "yay", "paru", "apk", "brew", "port", "snap", "flatpak", "nix-env", "emerge", "xbps-install", "pkg", "gem", "dpkg", "rpm", "mas", "winget", "choco", "scoop", "sdk", "pkgin", "apt-cache", "apt-mark", "add-apt-repository", "update-alternatives")
	register(hPip, "pip", "pip3", "pip2")
	register(hGit, "git")
	register(hDocker, "docker", "podman", "nerdctl", "docker-compose", "kubectl", "k9s", "minikube", "kind", "crictl", "ctr")

	register(hFormat, "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "cgdisk", "blkdiscard", "hdparm", "badblocks", "cryptsetup", "zpool", "zfs", "lvremove", "vgremove", "pvremove", "mdadm", "flashrom", "nvme", "sg_format", "fsck", "e2fsck", "tune2fs", "resize2fs", "dumpe2fs", "mkdosfs", "mkntfs", "newfs", "diskutil", "gpart", "losetup", "partprobe", "debugfs", "xfs_repair", "btrfs", "zfs")
	register(hPower, "shutdown", "reboot", "poweroff", "halt", "init", "telinit", "kexec", "pm-suspend", "pm-hibernate")
	register(hKill, "kill", "pkill", "killall", "killall5", "skill", "slay", "xkill")
	register(hSystemctl, "systemctl", "service", "launchctl", "rc-service", "sv", "initctl", "update-rc.d", "chkconfig", "rc-update")
	register(hSysChange, "sysctl", "swapoff", "swapon", "mount", "umount", "iptables", "ip6tables", "iptables-restore", "nft", "ufw", "firewall-cmd", "pfctl", "route", "ifconfig", "ifup", "ifdown", "ip", "nmcli", "iw", "iwconfig", "hostname", "hostnamectl", "timedatectl", "hwclock", "modprobe", "insmod", "rmmod", "depmod", "ldconfig", "setenforce", "setsebool", "semanage", "aa-disable", "aa-complain", "auditctl", "sysrq", "setcap", "tc", "brctl", "ethtool", "scutil", "networksetup", "pmset", "nvram", "csrutil", "spctl", "tmutil", "quotaon", "quotaoff", "setquota", "chroot", "pivot_root", "switch_root", "unshare", "nsenter", "capsh", "setpriv", "grub-install", "update-grub", "grub-mkconfig", "efibootmgr", "bootctl", "dracut", "update-initramfs", "mkinitcpio", "localectl", "loadkeys", "setfont", "xmodmap", "xrandr", "systemd-sysusers", "systemd-tmpfiles", "tzselect", "dpkg-reconfigure", "alternatives", "systemd-resolve", "resolvectl", "wg", "wg-quick", "openvpn", "tailscale", "zerotier-cli", "vpnc", "sshd", "cupsctl", "lpadmin")
	register(hCron, "crontab", "at", "batch", "atq", "atrm", "systemd-run", "anacron", "fcrontab", "schtasks")
	register(hAccount, "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod", "passwd", "chpasswd", "gpasswd", "adduser", "deluser", "addgroup", "delgroup", "visudo", "vipw", "vigr", "chsh", "chfn", "chage", "newusers", "pwconv", "grpconv", "dscl", "sysadminctl", "pw", "smbpasswd", "htpasswd")
	register(hFzf, "fzf", "sk", "peco")
	register(hEnable, "enable", "bind", "fc")
	register(hGofmt, "gofmt", "goimports", "rustfmt", "clang-format", "shfmt")
	register(hOpen, "open", "xdg-open", "gio", "start", "explorer", "wslview", "sensible-browser", "x-www-browser", "firefox", "chromium", "google-chrome")
	register(hTmux, "tmux", "screen", "zellij", "byobu")
	register(hWriteOpts, "info", "sar", "atop", "cloc", "mediainfo", "file", "xprop", "wmctrl", "blkid")
	register(hPagerTool, "ack", "ag", "bat", "batcat", "delta", "difft")
	register(hOutputOpt("o", "output"), "tree", "xmllint", "shuf", "iconv", "sdiff", "pandoc", "uconv")
	register(hSysChange, "loginctl", "busctl", "dmesg", "ss")
	register(hHistory, "history")
	register(hCompgen, "compgen", "complete")
	registerBuiltins()
}

// hNetwork: programs that talk to the network (their output counts as downloaded content).
func hNetwork(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	a.find(c, "network.access", Ask, "")
	for _, x := range argv[1:] {
		// Files named after an @ are sent: httpie's @file, field@file and field=@file,
		// gh api -F field=@file, curlie and xh likewise.
		if i := strings.IndexByte(x.s, '@'); i >= 0 && !x.dyn {
			a.upload(subArg(x, strings.TrimLeft(x.s[i+1:], "=<")), c)
		}
	}
	return effNetwork | effFetch
}

// onlyVersion reports whether argv only asks for a version or help.
func onlyVersion(argv []arg) bool {
	if len(argv) != 2 || notProbe(argv[0].s, argv[1].s) {
		return false
	}
	switch argv[1].s {
	case "--version", "-V", "-v", "version", "--help", "-h", "help", "-version":
		return true
	}
	return false
}

// hCd follows the working directory through cd, pushd and popd (with OLDPWD for "cd -"
// and the directory stack for pushd and popd).
func hCd(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	ops := argv[1:]
	for len(ops) > 0 && len(ops[0].s) > 1 && ops[0].s[0] == '-' && ops[0].s != "--" && !ops[0].dyn {
		ops = ops[1:]
	}
	if len(ops) > 0 && ops[0].s == "--" {
		ops = ops[1:]
	}
	prev := a.cwd
	switch {
	case name == "popd":
		if n := len(a.dirs); n > 0 && len(ops) == 0 {
			a.cwd, a.dirs = a.dirs[n-1], a.dirs[:n-1]
		} else {
			a.cwd = ""
		}
	case name == "pushd" && len(ops) == 0:
		if n := len(a.dirs); n > 0 {
			a.cwd, a.dirs[n-1] = a.dirs[n-1], a.cwd
		} else {
			a.cwd = ""
		}
		return 0
	case len(ops) > 0 && ops[0].s == "-":
		a.cwd = a.oldpwd
		if a.oldpwd == "" && !a.oldSet {
			a.cwd = prev // OLDPWD is not set: cd - fails and stays
		}
	case len(ops) > 0 && (strings.HasPrefix(ops[0].s, "+") || strings.HasPrefix(ops[0].s, "-")):
		a.cwd = ""
	case len(ops) == 0:
		a.cwd = ""
		if h, ok := a.vars["HOME"]; ok && !strings.Contains(h, dyn) {
			a.cwd = h
		} else if !ok {
			a.cwd = a.ctx.Home
		}
	case a.cdpath != "" && cdpathSearched(ops[0].s):
		a.cwd = a.cdpathDir(ops[0])
	default:
		p, ok := a.resolve(ops[0])
		if !ok || strings.Contains(p, dyn) || ops[0].glob {
			a.cwd = ""
		} else {
			a.cwd = p
		}
	}
	if name == "pushd" {
		a.dirs = append(a.dirs, prev)
	}
	a.oldpwd, a.oldSet = prev, true
	return 0
}

// cdpathSearched reports whether cd looks the directory dir up in CDPATH (bash(1): a
// directory that does not begin with "/", "." or "..").
func cdpathSearched(dir string) bool {
	return !strings.HasPrefix(dir, "/") && dir != "." && dir != ".." && !strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../")
}

// cdpathDir returns the directory cd dir enters when CDPATH is set, as far as it matters
// here: bash tries each CDPATH entry before the working directory, and which one it enters
// depends on which directories exist. The first candidate outside the workspace is
// returned (judging later commands there is the stricter reading), else "" (unknown).
func (a *analyzer) cdpathDir(dir arg) string {
	if strings.Contains(a.cdpath, dyn) || dir.dyn || dir.glob {
		return ""
	}
	for _, e := range strings.Split(a.cdpath, ":") {
		if e == "" {
			e = "."
		}
		p, ok := a.resolve(lit(e + "/" + dir.s))
		if !ok {
			return ""
		}
		if !within(p, a.ctx.Workspace) {
			return p
		}
	}
	return ""
}

// writes judges every operand as a written path.
func (a *analyzer) writes(ops []arg, c *callInfo) {
	for _, x := range ops {
		a.writeTarget(x, "write", c.pos, c.end)
	}
}

// destroy judges deleting, moving or recursively changing a path: critical paths are
// denied with the given rule family ("rm", "mv", "chmod"). It reports whether it denied.
func (a *analyzer) destroy(x arg, fam string, c *callInfo) bool {
	if x.dyn && x.w != nil {
		// rm -rf "${X:-/}": the default is what is deleted when X is unset.
		if alt := defaultWord(x.w); alt != "" {
			_, g := unescapeBare(alt)
			if a.destroy(arg{s: alt, glob: g}, fam, c) {
				return true
			}
		}
	}
	var p string
	if strings.HasPrefix(x.s, dyn) {
		rest := strings.TrimLeft(x.s[len(dyn):], "/")
		if strings.HasPrefix(x.s[len(dyn):], "/") && (rest == "" || rest == "*" || rest == dyn) {
			a.find(c, "destructive.rm-dynamic", Deny, "")
			return true
		}
		return false
	}
	p, ok := a.resolve(x)
	if !ok {
		return false
	}
	if !x.glob && !strings.Contains(p, dyn) && strings.HasSuffix(p, "*") {
		return false // a file literally named *
	}
	id := a.critical(p)
	if id == "" {
		return false
	}
	switch fam {
	case "mv":
		id = "destructive.mv-root"
	case "chmod":
		id = "destructive.chmod-root"
	case "find":
		id = "destructive.find-delete"
	case "shred":
		id = "destructive.overwrite"
	}
	a.find(c, id, Deny, "Target "+display(p))
	return true
}

// hRm judges rm, unlink, rmdir and shred: every operand is written; recursive or
// wildcard deletion of critical paths is destructive.
func hRm(a *analyzer, argv []arg, c *callInfo) eff {
	sp := &optSpec{}
	if argv[0].s == "shred" {
		sp = &optSpec{arg: "ns", long: []string{"iterations", "size", "random-source"}}
	}
	p := parseArgs(argv, sp)
	rec := p.has("r", "R", "--recursive") || argv[0].s == "shred" || argv[0].s == "srm"
	defer a.setVerb("Deleting")()
	if argv[0].s == "rmdir" || argv[0].s == "unlink" {
		a.writes(p.ops, c)
		return 0
	}
	fam := "rm"
	if argv[0].s == "shred" {
		fam = "shred"
	}
	for _, x := range p.ops {
		if (rec || x.glob || x.dyn) && a.destroy(x, fam, c) {
			continue
		}
		a.writeTarget(x, "write", c.pos, c.end)
	}
	if len(p.ops) == 0 && len(argv) > 1 {
		a.find(c, "write.dynamic-path", Ask, "")
	}
	return 0
}

// setVerb sets the verb of write findings and returns a function that restores it.
func (a *analyzer) setVerb(v string) func() {
	old := a.verb
	a.verb = v
	return func() { a.verb = old }
}

// hTouch: touch, mkdir and mkfifo create their operands.
func hTouch(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "drtmZ", long: []string{"date", "reference", "time", "mode", "context"}})
	a.writes(p.ops, c)
	return 0
}

// hTruncate: truncate and fallocate change their operands.
func hTruncate(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "sroln", long: []string{"size", "reference", "offset", "length"}})
	for _, x := range p.ops {
		if pth, ok := a.resolve(x); ok && a.classify(pth) == pcSystem && a.ctx.Role == RoleRoot && a.critical(pth) != "" {
			a.find(c, "destructive.overwrite", Deny, "Target "+pth)
			continue
		}
		a.writeTarget(x, "write", c.pos, c.end)
	}
	return 0
}

// hCp: cp and install write the target directory (-t) or the last operand.
func hCp(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "tSmogb", long: []string{"target-directory", "suffix", "mode", "owner", "group", "backup", "sparse", "reflink", "preserve", "no-preserve", "context", "strip-program"}})
	if m, ok := p.get("m", "--mode"); ok && argv[0].s == "install" && setuidMode(m.val.s) {
		if a.ctx.Role == RoleRoot {
			a.find(c, "privilege.setuid", Deny, "")
		} else {
			a.find(c, "privilege.setuid", Ask, "Setting a setuid or setgid bit")
		}
	}
	if t, ok := p.get("t", "--target-directory"); ok && t.has {
		a.writeTarget(t.val, "write", c.pos, c.end)
		return 0
	}
	if p.has("d", "--directory") && argv[0].s == "install" {
		a.writes(p.ops, c)
		return 0
	}
	if len(p.ops) >= 2 {
		a.destination(p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1], c)
		for _, src := range p.ops[:len(p.ops)-1] {
			if q, ok := a.resolve(src); ok && a.isCredential(q) {
				if d, ok := a.resolve(p.ops[len(p.ops)-1]); ok {
					a.markCredCopy(d) // cp ~/.ssh/id_rsa k: k is a key now
				}
				break
			}
		}
	} else if len(p.ops) == 1 && p.ops[0].dyn {
		a.find(c, "write.dynamic-path", Ask, "")
	}
	return 0
}

// hMv: mv writes every operand (the sources disappear).
func hMv(a *analyzer, argv []arg, c *callInfo) eff {
	defer a.setVerb("Moving")()
	p := parseArgs(argv, &optSpec{arg: "tSb", long: []string{"target-directory", "suffix", "backup"}})
	if t, ok := p.get("t", "--target-directory"); ok && t.has {
		a.writeTarget(t.val, "write", c.pos, c.end)
	}
	for _, x := range p.ops {
		if a.destroy(x, "mv", c) {
			continue
		}
		a.writeTarget(x, "write", c.pos, c.end)
	}
	if len(p.ops) >= 2 {
		a.destination(p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1], c)
	}
	return 0
}

// destination judges the destination of cp, mv and ln: the path itself and, as it may be a
// directory, the path of each source's base name inside it (cp -r hooks .git/ writes
// .git/hooks).
func (a *analyzer) destination(dst arg, srcs []arg, c *callInfo) {
	a.writeTarget(dst, "write", c.pos, c.end)
	if dst.dyn {
		return
	}
	for _, s := range srcs {
		if s.dyn {
			continue
		}
		b := path.Base(strings.TrimSuffix(s.s, "/"))
		if b == "/" || b == "." || b == ".." {
			continue
		}
		y := dst
		y.s = strings.TrimSuffix(dst.s, "/") + "/" + b
		y.glob = y.glob || s.glob
		a.writeTarget(y, "write", c.pos, c.end)
	}
}

// hLn: ln writes the link name (the last operand, -t DIR, or the source's base name in the
// working directory).
func hLn(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "tSb", long: []string{"target-directory", "suffix", "backup"}})
	if t, ok := p.get("t", "--target-directory"); ok && t.has {
		a.writeTarget(t.val, "write", c.pos, c.end)
		return 0
	}
	var name arg
	switch {
	case len(p.ops) >= 2:
		name = p.ops[len(p.ops)-1]
		a.destination(name, p.ops[:len(p.ops)-1], c)
	case len(p.ops) == 1:
		name = lit(path.Base(p.ops[0].s))
		a.writeTarget(name, "write", c.pos, c.end)
	default:
		return 0
	}
	if len(p.ops) <= 2 {
		a.recordLink(name, p.ops[0])
	}
	return 0
}

// hChmod: chmod, chown and chgrp change their operands after the mode or owner; recursive
// changes of critical paths are destructive; setuid and setgid bits set as root are denied.
func hChmod(a *analyzer, argv []arg, c *callInfo) eff {
	defer a.setVerb("Changing the mode or owner of")()
	p := parseArgs(argv, &optSpec{arg: "", long: []string{"reference", "from"}})
	ops := p.ops
	name := argv[0].s
	if (name == "chmod" || name == "chown" || name == "chgrp") && !p.has("--reference") && len(ops) > 0 {
		mode := ops[0]
		if name == "chmod" && setuidMode(mode.s) {
			if a.ctx.Role == RoleRoot {
				a.find(c, "privilege.setuid", Deny, "")
			} else {
				a.find(c, "privilege.setuid", Ask, "Setting a setuid or setgid bit")
			}
		}
		ops = ops[1:]
	}
	// chmod -x (a mode that looks like an option) is parsed as flags; that is fine: the
	// operands are still the files.
	rec := p.has("R", "--recursive")
	for _, x := range ops {
		if rec && a.destroy(x, "chmod", c) {
			continue
		}
		a.writeTarget(x, "write", c.pos, c.end)
	}
	return 0
}

// setuidMode reports whether a chmod mode sets the setuid or setgid bit (u+s, g+s, +s,
// 4755, 2755, 6755).
func setuidMode(m string) bool {
	if isDigits(m) && len(m) == 4 {
		return m[0] == '4' || m[0] == '2' || m[0] == '6' || m[0] == '7' || m[0] == '3' || m[0] == '5'
	}
	for _, part := range strings.Split(m, ",") {
		if i := strings.IndexAny(part, "+="); i >= 0 && strings.ContainsRune(part[i:], 's') {
			return true
		}
	}
	return false
}

// hDd: dd writes of= and reads if=.
func hDd(a *analyzer, argv []arg, c *callInfo) eff {
	var e eff
	for _, x := range argv[1:] {
		switch {
		case strings.HasPrefix(x.s, "of="):
			a.writeTarget(subArg(x, x.s[3:]), "write", c.pos, c.end)
		case strings.HasPrefix(x.s, "if="):
			if p, ok := a.resolve(subArg(x, x.s[3:])); ok && a.isCredential(p) {
				a.find(c, "credential.read", Ask, "Reading "+p)
				e |= effCredRead
			}
		}
	}
	return e
}

// hTee: tee writes its operands.
func hTee(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{lopt: []string{"output-error"}})
	a.writes(p.ops, c)
	return 0
}

// hSort: sort -o/--output writes; --compress-program runs a program.
func hSort(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "okStT", long: []string{"output", "key", "buffer-size", "field-separator", "temporary-directory", "compress-program", "files0-from", "parallel", "random-source", "batch-size", "sort"}})
	for _, o := range p.all("o", "--output") {
		a.writeTarget(o.val, "write", c.pos, c.end)
	}
	if p.has("--compress-program") {
		a.find(c, "exec.tool-exec", Ask, "sort --compress-program runs a program")
	}
	return 0
}

// hOutputOpt returns a handler for tools whose only write is an output option.
func hOutputOpt(short, long string) handler {
	sp := &optSpec{arg: short, long: []string{long}}
	return func(a *analyzer, argv []arg, c *callInfo) eff {
		p := parseArgs(argv, sp)
		for _, o := range p.all(short, "--"+long) {
			a.writeTarget(o.val, "write", c.pos, c.end)
		}
		return 0
	}
}

// hUniq: uniq INPUT OUTPUT writes OUTPUT.
func hUniq(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars", "group", "all-repeated"}})
	if len(p.ops) >= 2 {
		a.writeTarget(p.ops[1], "write", c.pos, c.end)
	}
	return 0
}

// hXxd: xxd -r decodes; a second operand is written.
func hXxd(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "cglnosC", long: []string{"cols", "groupsize", "len", "name", "seek", "offset"}})
	var e eff
	if p.has("r", "--revert") {
		e |= effDecode
	}
	if len(p.ops) >= 2 {
		a.writeTarget(p.ops[1], "write", c.pos, c.end)
	}
	return e
}

// hBase64: base64, base32, basenc and uudecode decode with -d (also clustered, -di) or
// --decode; output run as code is denied by the pipeline rule.
func hBase64(a *analyzer, argv []arg, c *callInfo) eff {
	if argv[0].s == "uudecode" {
		return effDecode
	}
	for _, x := range argv[1:] {
		s := x.s
		if s == "--decode" || s == "-D" || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsRune(s, 'd') {
			return effDecode
		}
	}
	return 0
}

// hObfuscate: rev, and tr translating one set of characters into another, turn text into
// other text (echo '/ fr- mr' | rev | sh); like a decoder, their output run as code is
// denied by the pipeline rule.
func hObfuscate(a *analyzer, argv []arg, c *callInfo) eff {
	if argv[0].s == "rev" {
		return effDecode
	}
	sets := 0
	for _, x := range argv[1:] {
		switch {
		case x.s == "-d" || x.s == "--delete" || strings.HasPrefix(x.s, "-") && len(x.s) > 1 && x.s[1] != '-' && strings.ContainsRune(x.s, 'd'):
			return 0
		case !strings.HasPrefix(x.s, "-") || x.s == "-":
			sets++
		}
	}
	if sets >= 2 {
		return effDecode
	}
	return 0
}

// hArchive: compressors, archivers, split and patch write files in place, into an
// archive, or into the working directory (or the directory their options name); listing
// and testing only read.
func hArchive(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	var ops []arg
	flags := map[string]bool{}
	var dir arg // an extraction or output directory given by an option
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case s == "--":
			ops = append(ops, argv[i+1:]...)
			i = len(argv)
		case (s == "-d" && (name == "unzip" || name == "patch")) || s == "--directory" || (s == "-o" && name == "unar") || (s == "-C" && name == "cpio"):
			if i+1 < len(argv) {
				dir = argv[i+1]
				i++
			}
		case (s == "-o" || s == "--output") && name == "patch":
			if i+1 < len(argv) {
				a.writeTarget(argv[i+1], "write", c.pos, c.end)
				return 0
			}
		case strings.HasPrefix(s, "-o") && len(s) > 2 && strings.HasPrefix(name, "7z"):
			dir = subArg(argv[i], s[2:])
		case (s == "-TT" || s == "--unzip-command") && name == "zip" && i+1 < len(argv):
			a.find(c, "exec.tool-exec", Ask, "zip -TT runs a command to test the archive")
			a.nested(argv[i+1], POSIX, c)
			i++
		case (s == "-i" || s == "-F" || s == "-B" || s == "-r" || s == "-D" || s == "-p" || s == "-z") && name == "patch":
			i++
		case strings.HasPrefix(s, "--") || len(s) > 1 && s[0] == '-':
			for _, ch := range s[1:] {
				flags[string(ch)] = true
			}
			flags[s] = true
		default:
			ops = append(ops, argv[i])
		}
	}
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].s
	}
	readOnly := false
	switch name {
	case "zipinfo", "lsar":
		readOnly = true
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma", "unlzma", "compress", "uncompress":
		readOnly = flags["c"] || flags["--stdout"] || flags["l"] || flags["--list"] || flags["t"] || flags["--test"]
		if !readOnly {
			a.writes(ops, c) // in place: the file and its compressed or uncompressed twin
			return 0
		}
	case "unzip":
		readOnly = flags["l"] || flags["t"] || flags["Z"] || flags["p"] || flags["v"]
	case "7z", "7za", "7zr", "rar", "unrar", "ar":
		readOnly = verb == "l" || verb == "t" || verb == "p" || verb == "tv" || verb == "lb"
		if !readOnly && len(ops) > 1 && (verb == "a" || verb == "u" || verb == "d" || verb == "rn" || strings.ContainsAny(verb, "rqdm") && name == "ar") {
			a.writeTarget(ops[1], "write", c.pos, c.end)
			return 0
		}
	case "cpio":
		readOnly = flags["t"] || flags["o"]
		if flags["p"] && len(ops) > 0 {
			dir = ops[len(ops)-1]
		}
	case "zip":
		if len(ops) > 0 {
			a.writeTarget(ops[0], "write", c.pos, c.end)
		}
		return 0
	case "patch":
		// patch [options] [originalfile [patchfile]]: the original file is written; without
		// it, the files the patch names below the working (or -d) directory.
		if len(ops) > 0 {
			a.writeTarget(ops[0], "write", c.pos, c.end)
			return 0
		}
		strip := -1
		for i := 1; i < len(argv); i++ {
			s := argv[i].s
			if strings.HasPrefix(s, "-p") && len(s) > 2 {
				strip = atoiOr(s[2:], -1)
			} else if (s == "-p" || s == "--strip") && i+1 < len(argv) {
				strip = atoiOr(argv[i+1].s, -1)
			} else if strings.HasPrefix(s, "--strip=") {
				strip = atoiOr(s[len("--strip="):], -1)
			}
		}
		if a.patchTargets(c, strip) {
			return 0
		}
	case "split", "csplit":
		// split [options] [input [prefix]] and csplit -f prefix: the output files are the
		// prefix and a suffix.
		sp := &optSpec{arg: "abClnt", long: []string{"suffix-length", "bytes", "line-bytes", "lines", "number", "separator", "additional-suffix", "filter"}}
		if name == "csplit" {
			sp = &optSpec{arg: "bfn", long: []string{"suffix-format", "prefix", "digits"}}
		}
		p := parseArgs(argv, sp)
		prefix := lit("xx")
		if name == "split" {
			prefix = lit("x")
			if len(p.ops) >= 2 {
				prefix = p.ops[1]
			}
			if p.has("--filter") {
				a.find(c, "exec.tool-exec", Ask, "split --filter runs a shell command")
			}
		} else if o, ok := p.get("f", "--prefix"); ok && o.has {
			prefix = o.val
		}
		prefix.s += dyn
		prefix.dyn = true
		a.writeTarget(prefix, "write", c.pos, c.end)
		return 0
	}
	if readOnly {
		return 0
	}
	if dir.s != "" || dir.dyn {
		a.writeTarget(dirAll(dir), "write", c.pos, c.end)
		return 0
	}
	a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
	return 0
}

// hOpenssl judges openssl: decoding subcommands decode; -out writes a file; -engine loads
// a shared object.
func hOpenssl(a *analyzer, argv []arg, c *callInfo) eff {
	var e eff
	for i, x := range argv[1:] {
		switch x.s {
		case "-d", "-decode", "-base64", "base64", "-a":
			if len(argv) > 1 && (argv[1].s == "enc" || argv[1].s == "base64") {
				e |= effDecode
			}
		case "-out":
			if i+2 < len(argv) {
				a.writeTarget(argv[i+2], "write", c.pos, c.end)
			}
		case "-engine", "-provider-path", "-provider":
			a.find(c, "exec.tool-exec", Ask, "openssl loads an engine or provider (a shared object)")
		}
	}
	if len(argv) > 1 && (argv[1].s == "s_client" || argv[1].s == "s_server" || argv[1].s == "ocsp") {
		a.find(c, "network.access", Ask, "")
		e |= effNetwork | effFetch
	}
	return e
}

// atoiOr returns the decimal value of s, or def when s is not a number.
func atoiOr(s string, def int) int {
	if !isDigits(s) || len(s) > 6 {
		return def
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// dirAll returns an argument naming any file below directory x.
func dirAll(x arg) arg {
	y := x
	y.s = strings.TrimSuffix(x.s, "/") + "/" + dyn
	y.dyn = true
	return y
}

// cwdOrDyn returns the working directory, or dyn when it is unknown.
func (a *analyzer) cwdOrDyn() string {
	if a.cwd == "" {
		return dyn
	}
	return a.cwd
}

// hMktemp: mktemp creates a file in the temporary directory unless given a template path.
func hMktemp(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "p", long: []string{"tmpdir", "suffix"}})
	if d, ok := p.get("p", "--tmpdir"); ok && d.has {
		a.writeTarget(dirAll(d.val), "write", c.pos, c.end)
		return 0
	}
	for _, x := range p.ops {
		if strings.Contains(x.s, "/") && !p.has("t") {
			a.writeTarget(x, "write", c.pos, c.end)
		}
	}
	return 0
}

// hDate: date -s/--set or a MMDDhhmm operand sets the clock.
func hDate(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "dfsrI", long: []string{"date", "file", "set", "reference"}, lopt: []string{"iso-8601", "rfc-3339"}, plus: true})
	set := p.has("s", "--set")
	for _, x := range p.ops {
		if !strings.HasPrefix(x.s, "+") {
			set = true
		}
	}
	if set {
		a.sysChange(c, "Setting the system clock")
	}
	return 0
}

// sysChange records a change of system-wide state: denied in user context, ask as root.
func (a *analyzer) sysChange(c *callInfo, detail string) {
	if a.ctx.Role == RoleRoot {
		a.find(c, "root.change", Ask, detail)
		return
	}
	a.find(c, "system.state", Deny, detail)
}

// hFzf: fuzzy finders run commands through --preview, --bind execute() and similar.
func hFzf(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		if strings.HasPrefix(x.s, "--preview") || strings.HasPrefix(x.s, "--bind") || strings.Contains(x.s, "execute") || strings.HasPrefix(x.s, "--listen") {
			a.find(c, "exec.tool-exec", Ask, "")
			break
		}
	}
	return 0
}

// hEnable: enable -f loads builtins from a shared object; bind -x and fc run commands.
func hEnable(a *analyzer, argv []arg, c *callInfo) eff {
	switch argv[0].s {
	case "enable":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "-") && strings.Contains(x.s, "f") {
				a.find(c, "exec.tool-exec", Ask, "enable -f loads code from a shared object")
			}
		}
	case "bind":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "-") && strings.Contains(x.s, "x") {
				a.find(c, "exec.tool-exec", Ask, "bind -x runs a command")
			}
		}
	case "fc":
		for _, x := range argv[1:] {
			if x.s == "-l" || strings.HasPrefix(x.s, "-l") {
				return 0
			}
		}
		a.find(c, "exec.tool-exec", Ask, "fc runs commands from the history")
	}
	return 0
}

// hGofmt: formatters only write with -w / -i.
func hGofmt(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "r", long: []string{"style"}})
	if p.has("w", "i", "--write", "--in-place") || argv[0].s == "rustfmt" || argv[0].s == "terraform-fmt" {
		ops := p.ops
		if len(ops) == 0 {
			ops = []arg{lit(".")}
		}
		for _, x := range ops {
			a.writeTarget(dirAll(x), "write", c.pos, c.end)
		}
	}
	return 0
}

// writeOpts lists, for read-mostly tools, the options whose argument is a file they write
// ("=" marks an option that is complete on its own and changes state).
var writeOpts = map[string][]string{
	"info":      {"-o", "--output"},
	"sar":       {"-o"},
	"atop":      {"-w"},
	"cloc":      {"--report-file", "--out", "--sql"},
	"mediainfo": {"--LogFile", "--logfile"},
	"file":      {"-C="},
	"xprop":     {"-set=", "-remove=", "-f="},
	"wmctrl":    {"-c=", "-k=", "-r=", "-s=", "-n="},
	"blkid":     {"-c"},
}

// hWriteOpts judges read-mostly tools by their writing options (writeOpts).
func hWriteOpts(a *analyzer, argv []arg, c *callInfo) eff {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		for _, o := range writeOpts[argv[0].s] {
			if flag, ok := strings.CutSuffix(o, "="); ok {
				if s == flag {
					a.find(c, "tool.config-set", Ask, argv[0].s+" "+flag+" changes state")
				}
				continue
			}
			switch {
			case s == o && i+1 < len(argv):
				a.writeTarget(argv[i+1], "write", c.pos, c.end)
			case strings.HasPrefix(s, o+"="):
				a.writeTarget(subArg(argv[i], s[len(o)+1:]), "write", c.pos, c.end)
			}
		}
	}
	if argv[0].s == "file" {
		for _, x := range argv[1:] {
			if x.s == "-C" {
				a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
			}
		}
	}
	return 0
}

// hPagerTool: search and diff viewers that run a pager given by --pager.
func hPagerTool(a *analyzer, argv []arg, c *callInfo) eff {
	for i, x := range argv[1:] {
		if x.s == "--pager" && i+2 < len(argv) {
			a.find(c, "exec.tool-exec", Ask, "--pager runs a program")
			return a.nested(argv[i+2], POSIX, c)
		}
		if strings.HasPrefix(x.s, "--pager=") {
			a.find(c, "exec.tool-exec", Ask, "--pager runs a program")
			return a.nested(subArg(x, x.s[len("--pager="):]), POSIX, c)
		}
		if strings.HasPrefix(x.s, "--diff-program") || strings.HasPrefix(x.s, "--external") {
			a.find(c, "exec.tool-exec", Ask, "This option runs another program")
		}
	}
	return 0
}

// hHistory: history -w/-a write the history to a file; -r/-n read one; -s adds an entry.
func hHistory(a *analyzer, argv []arg, c *callInfo) eff {
	for i, x := range argv[1:] {
		if (x.s == "-w" || x.s == "-a") && i+2 < len(argv) {
			a.writeTarget(argv[i+2], "write", c.pos, c.end)
		}
	}
	return 0
}

// hCompgen: compgen and complete run a command (-C) or a function (-F) to generate
// completions; compgen runs it at once.
func hCompgen(a *analyzer, argv []arg, c *callInfo) eff {
	for i, x := range argv[1:] {
		if x.s == "-C" && i+2 < len(argv) {
			a.find(c, "exec.tool-exec", Ask, argv[0].s+" -C runs a command")
			return a.nested(argv[i+2], Bash, c)
		}
	}
	return 0
}

// hEditor: editors change files and can run shell commands (vim :!, emacs M-!, ed !).
func hEditor(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	a.find(c, "exec.tool-exec", Ask, argv[0].s+" is an interactive editor that can change files and run commands")
	return 0
}

// hOpen: opening files or URLs with the desktop runs other programs.
func hOpen(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "exec.tool-exec", Ask, "Opening a file or URL runs the program registered for it")
	return 0
}

// hTmux: terminal multiplexers start sessions that outlive the command and can type
// commands into shells.
func hTmux(a *analyzer, argv []arg, c *callInfo) eff {
	switch argv[0].s {
	case "screen":
		// screen [-d -m -S name …] command args; screen -X sends a command to a session.
		i := 1
		for i < len(argv) && strings.HasPrefix(argv[i].s, "-") {
			s := argv[i].s
			if s == "-X" {
				if e, ok := a.tmuxCommand(argv, c); ok {
					return e
				}
			}
			if strings.HasSuffix(s, "S") || s == "-c" || s == "-t" || s == "-p" || s == "-Logfile" {
				i++
			}
			i++
		}
		if i < len(argv) {
			a.find(c, "background.job", Ask, "screen runs the command in a session that keeps running")
			return a.judge(argv[i:], c)
		}
	case "tmux":
		if e, ok := a.tmuxCommand(argv, c); ok {
			a.find(c, "background.job", Ask, "A terminal multiplexer session keeps running and can run commands")
			return e
		}
	}
	if len(argv) >= 2 {
		switch argv[1].s {
		case "ls", "list-sessions", "list-windows", "list-panes", "-ls", "-list", "info", "display-message", "show-options":
			return 0
		}
	}
	a.find(c, "background.job", Ask, "A terminal multiplexer session keeps running and can run commands")
	return 0
}

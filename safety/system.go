package safety

import "strings"

// This file judges commands that change the machine: disks, power, processes, services,
// kernel and network settings, scheduled jobs and accounts.

// hFormat judges disk tools: listing is read-only; formatting, partitioning and erasing are
// denied in every context.
func hFormat(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	for _, x := range argv[1:] {
		s := x.s
		switch {
		case s == "-h" || s == "-L" && name == "sgdisk" || s == "-l" || s == "--list" || s == "print" || s == "-p" && name == "gdisk" || s == "--help" || s == "-V" || s == "--version" || s == "-I" && name == "hdparm" || s == "list" || s == "status" || s == "info" || s == "show" || s == "scan" || s == "--dump" || s == "-d" && name == "sfdisk" || s == "-N" && name == "dumpe2fs":
			if !strings.HasPrefix(name, "mkfs") && name != "wipefs" && name != "mkswap" && name != "blkdiscard" && name != "mke2fs" {
				return 0
			}
		}
	}
	switch name {
	case "zpool", "zfs", "cryptsetup", "flashrom":
		destroy, read := false, len(argv) == 1
		for _, x := range argv[1:] {
			switch x.s {
			case "destroy", "labelclear", "luksFormat", "erase", "luksErase", "luksKillSlot", "-w", "--write", "-E", "--erase", "reencrypt":
				destroy = true
			case "list", "status", "iostat", "get", "history", "luksDump", "isLuks", "-r", "--read", "-L", "--list-supported", "events", "diff", "holds":
				read = true
			}
		}
		if name == "zpool" && len(argv) == 2 && argv[1].s == "import" {
			read = true // lists the pools that could be imported
		}
		switch {
		case destroy:
			a.find(c, "device.format", Deny, "")
		case read:
		default:
			a.sysChange(c, name+" changes disks, pools or encrypted volumes")
		}
		return 0
	case "fsck", "e2fsck", "xfs_repair", "tune2fs", "resize2fs", "losetup", "partprobe", "debugfs", "btrfs", "diskutil", "mdadm", "nvme", "hdparm", "dumpe2fs", "gpart":
		if name == "hdparm" {
			for _, x := range argv[1:] {
				if strings.HasPrefix(x.s, "--security-erase") || strings.HasPrefix(x.s, "--trim-sector") || strings.HasPrefix(x.s, "--write-sector") || strings.HasPrefix(x.s, "--dco-restore") {
					a.find(c, "device.format", Deny, "")
					return 0
				}
			}
		}
		if name == "diskutil" || name == "nvme" || name == "btrfs" || name == "mdadm" {
			for _, x := range argv[1:] {
				switch x.s {
				case "eraseDisk", "eraseVolume", "partitionDisk", "format", "sanitize", "destroy", "secureErase", "zeroDisk", "randomDisk", "--zero-superblock", "--create", "reformat":
					a.find(c, "device.format", Deny, "")
					return 0
				}
			}
		}
		if name == "fsck" || name == "e2fsck" {
			if len(argv) > 1 && strings.HasPrefix(argv[1].s, "-n") {
				return 0
			}
		}
		a.sysChange(c, name+" changes disks or file systems")
		return 0
	}
	a.find(c, "device.format", Deny, "")
	return 0
}

// hPower judges shutdown, reboot and friends: denied in user context, ask as root.
func hPower(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	if name == "init" || name == "telinit" {
		if len(argv) < 2 || argv[1].s == "--help" || argv[1].s == "--version" {
			return 0
		}
	}
	if (name == "shutdown") && len(argv) == 2 && argv[1].s == "-c" {
		return 0
	}
	if a.ctx.Role == RoleRoot {
		a.find(c, "system.power", Ask, "")
		return 0
	}
	a.find(c, "system.power", Deny, "")
	return 0
}

// hKill judges kill, pkill and killall: signalling every process (pid -1, killall5, pkill
// of every name) is denied, signalling init (pid 1) is a shutdown; other signals ask.
func hKill(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	if name == "killall5" {
		a.find(c, "system.kill-all", Deny, "")
		return 0
	}
	if name != "kill" {
		for _, x := range argv[1:] {
			if x.s == "." || x.s == ".*" || x.s == "^" || x.s == "" {
				a.find(c, "system.kill-all", Deny, "A pattern that matches every process")
				return 0
			}
		}
		a.find(c, "system.kill", Ask, "")
		return 0
	}
	// kill [-s SIG | -n NUM | -SIG] [--] PID…; kill -l lists signals.
	var pids []arg
	sigDone := false
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case s == "-l" || s == "-L" || s == "--list" || s == "--help":
			return 0
		case s == "--":
			pids = append(pids, argv[i+1:]...)
			i = len(argv)
		case (s == "-s" || s == "-n") && !sigDone:
			i++
			sigDone = true
		case strings.HasPrefix(s, "-") && !sigDone && len(pids) == 0:
			sigDone = true
		default:
			pids = append(pids, argv[i])
		}
	}
	for _, p := range pids {
		switch p.s {
		case "-1":
			a.find(c, "system.kill-all", Deny, "")
			return 0
		case "1":
			a.find(c, "system.power", Deny, "Signalling process 1 (init) brings the system down")
			return 0
		}
	}
	a.find(c, "system.kill", Ask, "")
	return 0
}

// hSystemctl judges service managers: status queries are read-only; enabling user
// services is persistence; other changes are system state (denied in user context, ask as
// root); poweroff and reboot follow hPower.
func hSystemctl(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	user := false
	var sub string
	var ops []string
	for _, x := range argv[1:] {
		if x.s == "--user" {
			user = true
			continue
		}
		if strings.HasPrefix(x.s, "-") {
			continue
		}
		if sub == "" {
			sub = x.s
		} else {
			ops = append(ops, x.s)
		}
	}
	if name == "service" {
		// service NAME ACTION
		if sub == "--status-all" || len(ops) > 0 && ops[0] == "status" {
			return 0
		}
		if len(ops) > 0 {
			sub = ops[0]
		}
	}
	if name == "launchctl" {
		switch sub {
		case "list", "print", "print-disabled", "blame", "version", "help", "getenv", "managerpid", "manageruid":
			return 0
		case "load", "bootstrap", "enable", "submit", "setenv":
			a.find(c, "persistence.cron", Deny, "launchctl loads agents or daemons that run later")
			return 0
		}
	}
	switch sub {
	case "", "status", "show", "list-units", "list-unit-files", "list-timers", "list-sockets", "list-jobs", "list-dependencies", "is-active", "is-enabled", "is-failed", "is-system-running", "cat", "help", "--version", "get-default", "show-environment", "list-machines", "list-paths", "list-automounts":
		return 0
	case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "rescue", "emergency", "soft-reboot":
		return hPower(a, argv, c)
	case "isolate", "default":
		if a.ctx.Role != RoleRoot {
			a.find(c, "system.power", Deny, "")
			return 0
		}
	case "enable", "link", "edit", "set-environment", "import-environment", "add-wants", "add-requires", "preset", "reenable", "set-default", "revert":
		if user || a.ctx.Role != RoleRoot {
			a.find(c, "persistence.cron", Deny, "Enabling or editing services makes code run at boot or login")
			return 0
		}
	}
	if user {
		a.find(c, "background.job", Ask, "This changes a user service")
		return 0
	}
	a.sysChange(c, "Changing services")
	return 0
}

// hSysChange judges tools that change kernel, network, mount, firewall, clock or boot
// settings; their read-only forms (listing) are allowed.
func hSysChange(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	if onlyVersion(argv) {
		return 0
	}
	readOnly := false
	switch name {
	case "sysctl":
		readOnly = true
		for _, x := range argv[1:] {
			if x.s == "-w" || x.s == "--write" || x.s == "-p" || x.s == "--load" || x.s == "--system" || strings.Contains(x.s, "=") {
				readOnly = false
			}
		}
	case "mount":
		readOnly = len(argv) == 1 || len(argv) == 2 && (argv[1].s == "-l" || argv[1].s == "--show-labels")
	case "iptables", "ip6tables":
		for _, x := range argv[1:] {
			if x.s == "-L" || x.s == "--list" || x.s == "-S" || x.s == "--list-rules" || strings.HasPrefix(x.s, "-L") {
				readOnly = true
			}
		}
	case "nft":
		readOnly = len(argv) > 1 && (argv[1].s == "list" || argv[1].s == "-a" && len(argv) > 2 && argv[2].s == "list")
	case "ufw":
		readOnly = len(argv) > 1 && (argv[1].s == "status" || argv[1].s == "show" || argv[1].s == "app" && len(argv) > 2 && argv[2].s == "list")
	case "firewall-cmd":
		readOnly = true
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "--add") || strings.HasPrefix(x.s, "--remove") || strings.HasPrefix(x.s, "--set") || strings.HasPrefix(x.s, "--reload") || strings.HasPrefix(x.s, "--permanent") || strings.HasPrefix(x.s, "--new") || strings.HasPrefix(x.s, "--delete") || strings.HasPrefix(x.s, "--change") || strings.HasPrefix(x.s, "--panic") {
				readOnly = false
			}
		}
	case "ip":
		readOnly = ipReadOnly(argv)
		for j := 1; j+3 < len(argv); j++ {
			if (argv[j].s == "netns" || argv[j].s == "vrf") && argv[j+1].s == "exec" {
				a.sysChange(c, "ip "+argv[j].s+" exec runs a command in another network context")
				return a.judge(argv[j+3:], c)
			}
		}
	case "route", "ifconfig", "iwconfig":
		readOnly = len(argv) <= 2 || len(argv) == 2 && strings.HasPrefix(argv[1].s, "-")
		if name == "route" {
			readOnly = len(argv) == 1 || len(argv) == 2 && (argv[1].s == "-n" || argv[1].s == "-ne")
		}
	case "nmcli":
		readOnly = true
		for _, x := range argv[1:] {
			switch x.s {
			case "up", "down", "add", "delete", "modify", "connect", "disconnect", "on", "off", "reload", "import", "edit", "set", "hostname", "rescan":
				readOnly = false
			}
		}
	case "hostname":
		readOnly = len(argv) == 1 || strings.HasPrefix(argv[len(argv)-1].s, "-")
	case "dmesg":
		readOnly = true
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "-") && !strings.HasPrefix(x.s, "--") && strings.ContainsAny(x.s, "cCDEn") || x.s == "--clear" || x.s == "--read-clear" || x.s == "--console-off" || x.s == "--console-on" || strings.HasPrefix(x.s, "--console-level") {
				readOnly = false
			}
		}
	case "ss":
		readOnly = true
		for _, x := range argv[1:] {
			if x.s == "-K" || x.s == "--kill" || strings.HasPrefix(x.s, "-") && !strings.HasPrefix(x.s, "--") && strings.Contains(x.s, "K") {
				readOnly = false
			}
		}
	case "busctl":
		readOnly = true
		for _, x := range argv[1:] {
			if x.s == "call" || x.s == "set-property" || x.s == "emit" || x.s == "capture" {
				readOnly = false
			}
		}
	case "hostnamectl", "timedatectl", "localectl", "resolvectl", "systemd-resolve", "loginctl", "tailscale", "wg", "zerotier-cli", "bootctl", "efibootmgr", "networksetup", "pmset", "scutil", "tmutil", "csrutil", "spctl", "nvram":
		readOnly = len(argv) == 1
		if len(argv) > 1 {
			s := argv[1].s
			readOnly = s == "genkey" || s == "pubkey" || s == "genpsk" || s == "--list" || s == "--assess" || s == "status" || s == "show" || strings.HasPrefix(s, "list") || s == "query" || s == "--status" || s == "-p" || s == "-g" || s == "-l" || s == "--get" || s == "print" || s == "info" || s == "ip" || s == "netcheck" || s == "statistics" || s == "dns"
		}
	case "iw":
		readOnly = true
		for _, x := range argv[1:] {
			switch x.s {
			case "set", "connect", "disconnect", "del", "add", "join", "leave", "reg", "interface", "switch", "cqm", "wowlan", "coalesce", "ftm", "vendor", "ocb", "mesh":
				readOnly = false
			}
		}
	case "hwclock":
		readOnly = len(argv) == 1 || argv[1].s == "-r" || argv[1].s == "--show"
	case "modprobe":
		readOnly = len(argv) > 1 && (argv[1].s == "-n" || argv[1].s == "--dry-run" || argv[1].s == "-c" || argv[1].s == "--show-depends")
	case "swapon":
		readOnly = len(argv) == 1 || argv[1].s == "-s" || argv[1].s == "--show" || argv[1].s == "--summary"
	case "ldconfig":
		readOnly = len(argv) > 1 && (argv[1].s == "-p" || argv[1].s == "--print-cache")
	case "tc", "ethtool", "brctl":
		readOnly = len(argv) > 1 && (argv[1].s == "show" || argv[1].s == "-s" && len(argv) > 2 && argv[2].s == "qdisc" || name == "ethtool" && len(argv) == 2 || argv[1].s == "-i")
	}
	if readOnly {
		return 0
	}
	if name == "setcap" {
		for _, x := range argv[1:] {
			l := strings.ToLower(x.s)
			if strings.HasPrefix(l, "=") || strings.HasPrefix(l, "all") {
				a.find(c, "privilege.setuid", Deny, "This grants every file capability")
				return 0
			}
			for _, cp := range []string{"cap_setuid", "cap_setgid", "cap_sys_admin", "cap_dac_override", "cap_dac_read_search", "cap_sys_ptrace", "cap_sys_module", "cap_chown", "cap_fowner"} {
				if strings.Contains(l, cp) && strings.ContainsAny(l, "+=") {
					a.find(c, "privilege.setuid", Deny, "This file capability lets the program gain root powers")
					return 0
				}
			}
		}
	}
	if name == "insmod" || name == "modprobe" && a.ctx.Role == RoleRoot && len(argv) > 1 {
		if name == "insmod" {
			a.find(c, "system.state", Deny, "Loading a kernel module runs code in the kernel")
			return 0
		}
	}
	if name == "chroot" || name == "nsenter" {
		if a.ctx.Role == RoleRoot {
			p := parseArgs(argv, &optSpec{long: []string{"userspec", "groups", "target", "mount", "uts", "ipc", "net", "pid", "user", "cgroup", "root", "wd"}, arg: "tmuinpUCrwSG", stop: true})
			skip := 1
			if name == "nsenter" {
				skip = 0
			}
			if p.rest+skip < len(argv) {
				a.find(c, "root.change", Ask, name+" runs a command in another root or namespace")
				// chroot starts in the new root's /; nsenter -w/--wd in the target's directory.
				unknown := name == "chroot" || p.has("w", "--wd")
				return a.inDir(arg{}, unknown, func() eff { return a.judge(argv[p.rest+skip:], c) })
			}
		}
	}
	a.sysChange(c, name+" changes system-wide settings")
	return 0
}

// ipReadOnly reports whether an ip(8) command only shows state.
func ipReadOnly(argv []arg) bool {
	var words []string
	for _, x := range argv[1:] {
		if strings.HasPrefix(x.s, "-") {
			continue
		}
		words = append(words, x.s)
	}
	if len(words) <= 1 {
		return true
	}
	// ip accepts any prefix of a verb: "ip r g 1.1.1.1" is "ip route get".
	v := words[1]
	for _, verb := range []string{"show", "list", "lst", "get", "monitor", "help"} {
		if strings.HasPrefix(verb, v) {
			return true
		}
	}
	return false
}

// hCron judges crontab, at and systemd-run: scheduling code to run later is persistence;
// crontab -l only lists.
func hCron(a *analyzer, argv []arg, c *callInfo) eff {
	switch argv[0].s {
	case "crontab":
		for _, x := range argv[1:] {
			if x.s == "-l" {
				return 0
			}
		}
	case "atq":
		return 0
	case "systemd-run":
		timer := false
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "--on-") || strings.HasPrefix(x.s, "--timer-property") {
				timer = true
			}
		}
		if !timer {
			p := parseArgs(argv, &optSpec{arg: "upEMH", long: []string{"unit", "property", "setenv", "working-directory", "uid", "gid", "nice", "slice", "description", "machine", "host", "service-type", "path-property", "socket-property", "timer-property"}, stop: true})
			for _, o := range p.all("E", "--setenv") {
				if k, _, ok := strings.Cut(o.val.s, "="); ok {
					a.envName(k, c)
				}
			}
			if a.ctx.Role != RoleRoot && !p.has("--user") {
				a.find(c, "privilege.escalation", Deny, "systemd-run without --user runs a system service")
				return 0
			}
			a.find(c, "background.job", Ask, "systemd-run starts a service that outlives the command")
			if p.rest < len(argv) {
				return a.inDir(systemdRunDir(a, p), false, func() eff { return a.judge(argv[p.rest:], c) })
			}
			return 0
		}
	}
	a.find(c, "persistence.cron", Deny, "")
	return 0
}

// hAccount judges account tools: in user context they need root (denied); as root, granting
// admin groups and setting passwords is denied, other changes ask.
func hAccount(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	if a.ctx.Role != RoleRoot {
		if name == "passwd" && len(argv) > 1 && (argv[1].s == "-S" || argv[1].s == "--status") {
			return 0
		}
		if name == "passwd" || name == "chsh" || name == "chfn" {
			a.find(c, "privilege.user-account", Deny, "")
			return 0
		}
		a.find(c, "privilege.escalation", Deny, "")
		return 0
	}
	switch name {
	case "passwd", "chpasswd", "newusers", "vipw", "vigr", "pwconv", "grpconv", "smbpasswd":
		if name == "passwd" && len(argv) > 1 && (argv[1].s == "-S" || argv[1].s == "--status") {
			return 0
		}
		a.find(c, "privilege.user-account", Deny, "")
		return 0
	case "visudo":
		if len(argv) > 1 && (argv[1].s == "-c" || argv[1].s == "--check") {
			return 0
		}
		a.find(c, "root.change", Ask, "visudo edits the sudoers file; review the change")
		return 0
	}
	for _, x := range argv[1:] {
		for _, g := range strings.Split(x.s, ",") {
			switch g {
			case "sudo", "wheel", "admin", "root", "adm", "docker", "lxd", "libvirt", "disk", "shadow":
				a.find(c, "privilege.user-account", Deny, "Adding a user to the "+g+" group grants administrator rights")
				return 0
			}
		}
		if x.s == "-o" || x.s == "--non-unique" {
			a.find(c, "privilege.user-account", Deny, "A duplicate uid can give root")
			return 0
		}
	}
	for i := 1; i+1 < len(argv); i++ {
		if (argv[i].s == "-u" || argv[i].s == "--uid" || argv[i].s == "-g" || argv[i].s == "--gid") && argv[i+1].s == "0" {
			a.find(c, "privilege.user-account", Deny, "uid or gid 0 is root")
			return 0
		}
	}
	a.find(c, "root.change", Ask, name+" changes accounts")
	return 0
}

package launch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused with EPERM in every sandbox, network or not: they trace or
// read other processes (ptrace, process_vm_*), load code into the kernel (kexec_*,
// *init_module, bpf), change mounts or the root (mount API, pivot_root, chroot), open files
// by handle around path checks (open_by_handle_at, the "shocker" container escape), reach
// the kernel keyrings, enter other namespaces (setns), or widen kernel attack surface that
// build tools do not use (userfaultfd, perf_event_open). The list follows Docker's default
// seccomp profile and the syscalls Landlock's documentation says it does not cover.
// Names unknown on the running architecture are skipped (such calls do not exist there).
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf",
	"userfaultfd", "perf_event_open", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
	"setns", "swapon", "swapoff", "reboot", "acct", "iopl", "ioperm", "quotactl",
	"lookup_dcookie", "syslog", "uselib", "vm86", "vm86old", "nfsservctl",
}

// unavailableSyscalls are refused with ENOSYS, so that libraries fall back to calls the
// filter can inspect: io_uring can open sockets and files without passing through
// seccomp (IORING_OP_SOCKET), and clone3 takes its flags in memory where a filter cannot
// read CLONE_NEWUSER (glibc falls back to clone on ENOSYS).
var unavailableSyscalls = []string{"io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"}

// Constants of the argument filter (socket(2), ioctl_tty(2), clone(2), unshare(2)).
const (
	afPacket     = 17 // AF_PACKET
	sockRaw      = 3  // SOCK_RAW
	sockPacket   = 10 // SOCK_PACKET
	sockTypeMask = 0xf
	tiocsti      = 0x5412 // TIOCSTI: push a byte into the terminal's input (CVE-2017-5226)
	tioclinux    = 0x541c // TIOCLINUX: console selection paste, same effect
)

// loadSeccomp loads the two filters of seccompFilters on the calling thread (the launcher
// execs from it); no_new_privs must be set.
func loadSeccomp(network bool) error {
	deny := seccomp.Filter{
		NoNewPrivs: true,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Action: seccomp.ActionErrno | seccomp.Action(unix.EPERM), Names: known(deniedSyscalls)},
				{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: known(unavailableSyscalls)},
			},
		},
	}
	if err := seccomp.LoadFilter(deny); err != nil {
		return fmt.Errorf("seccomp deny list: %w", err)
	}
	prog, err := argumentFilter(network)
	if err != nil {
		return err
	}
	return loadRaw(prog)
}

// known returns the names of names that the running architecture has.
func known(names []string) []string {
	info, err := arch.GetInfo("")
	if err != nil {
		return names // LoadFilter reports the same error
	}
	var out []string
	for _, n := range names {
		if _, ok := info.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// argumentFilter returns the second filter, hand-assembled because it must compare only the
// low 32 bits of int arguments: the kernel truncates socket's domain and type and ioctl's
// request to 32 bits, and go-seccomp-bpf compares all 64, so a caller setting high bits
// would slip past its Equal. It refuses (EPERM), for the native architecture:
//
//   - socket(AF_PACKET, …), and SOCK_RAW and SOCK_PACKET sockets of any family, always;
//   - socket(AF_INET, …) and socket(AF_INET6, …) when network is off (TCP, UDP and all);
//   - ioctl(fd, TIOCSTI) and ioctl(fd, TIOCLINUX), which inject terminal input;
//   - clone and unshare with CLONE_NEWUSER (a user namespace hands out capabilities over
//     new mount and network namespaces and widens kernel attack surface);
//
// and every system call of a foreign architecture (the i386 entry point of an x86-64
// kernel) with ENOSYS, since the deny list checks native numbers only.
func argumentFilter(network bool) ([]bpf.Instruction, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, errors.New("seccomp: big-endian architectures are not supported")
	}
	const argBase = 16 // offsetof(struct seccomp_data, args)
	lo := func(n uint32) bpf.Instruction { return bpf.LoadAbsolute{Off: argBase + 8*n, Size: 4} }
	deny := bpf.RetConstant{Val: uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)}
	allow := bpf.RetConstant{Val: uint32(unix.SECCOMP_RET_ALLOW)}
	denyIfEqual := func(v uint32) []bpf.Instruction {
		return []bpf.Instruction{bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipFalse: 1}, deny}
	}

	socketBody := []bpf.Instruction{lo(0)}
	socketBody = append(socketBody, denyIfEqual(afPacket)...)
	if !network {
		socketBody = append(socketBody, denyIfEqual(unix.AF_INET)...)
		socketBody = append(socketBody, denyIfEqual(unix.AF_INET6)...)
	}
	socketBody = append(socketBody, lo(1), bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
	socketBody = append(socketBody, denyIfEqual(sockRaw)...)
	socketBody = append(socketBody, denyIfEqual(sockPacket)...)
	socketBody = append(socketBody, allow)

	ioctlBody := []bpf.Instruction{lo(1)}
	ioctlBody = append(ioctlBody, denyIfEqual(tiocsti)...)
	ioctlBody = append(ioctlBody, denyIfEqual(tioclinux)...)
	ioctlBody = append(ioctlBody, allow)

	newUserBody := []bpf.Instruction{
		lo(0),
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER, SkipFalse: 1},
		deny,
		allow,
	}

	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // nr
	}
	for _, s := range []struct {
		nr   uintptr
		body []bpf.Instruction
	}{
		{unix.SYS_SOCKET, socketBody},
		{unix.SYS_IOCTL, ioctlBody},
		{unix.SYS_CLONE, newUserBody},
		{unix.SYS_UNSHARE, newUserBody},
	} {
		if len(s.body) > 255 {
			return nil, errors.New("seccomp: filter block too long")
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(s.nr), SkipFalse: uint8(len(s.body))})
		prog = append(prog, s.body...)
	}
	prog = append(prog, allow)
	return prog, nil
}

// loadRaw installs prog as a seccomp filter on the calling thread (seccomp(2)
// SECCOMP_SET_MODE_FILTER).
func loadRaw(prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("seccomp: assemble argument filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp SECCOMP_SET_MODE_FILTER: %w", errno)
	}
	return nil
}

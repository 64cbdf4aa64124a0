package launch

import (
	"encoding/binary"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestArgumentFilter runs the hand-assembled seccomp argument filter in x/net/bpf's virtual
// machine on crafted seccomp_data, so its decisions are checked without a kernel. The VM
// loads words big-endian, so the fields are written big-endian at their native offsets.
func TestArgumentFilter(t *testing.T) {
	info, err := arch.GetInfo("")
	if err != nil {
		t.Skip(err)
	}
	const (
		allow  = uint32(unix.SECCOMP_RET_ALLOW)
		eperm  = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
		enosys = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
	)
	data := func(archID uint32, nr uintptr, args ...uint64) []byte {
		b := make([]byte, 64)
		binary.BigEndian.PutUint32(b[0:], uint32(nr))
		binary.BigEndian.PutUint32(b[4:], archID)
		for i, a := range args {
			binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))       // low word, where the filter reads
			binary.BigEndian.PutUint32(b[16+8*i+4:], uint32(a>>32)) // high word
		}
		return b
	}
	native := uint32(info.ID)
	tests := []struct {
		name    string
		network bool
		in      []byte
		want    uint32
	}{
		{"inet stream, network off", false, data(native, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM), eperm},
		{"inet6 dgram, network off", false, data(native, unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), eperm},
		{"inet with high bits, network off", false, data(native, unix.SYS_SOCKET, 1<<32|unix.AF_INET, unix.SOCK_STREAM), eperm},
		{"inet stream, network on", true, data(native, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM), allow},
		{"inet raw, network on", true, data(native, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK), eperm},
		{"unix seqpacket, network on", true, data(native, unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_SEQPACKET), allow},
		{"packet, network on", true, data(native, unix.SYS_SOCKET, afPacket, unix.SOCK_DGRAM), eperm},
		{"unix stream, network off", false, data(native, unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM), allow},
		{"netlink raw, network on", true, data(native, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW), eperm},
		{"TIOCSTI", true, data(native, unix.SYS_IOCTL, 0, tiocsti), eperm},
		{"TIOCSTI with high bits", true, data(native, unix.SYS_IOCTL, 0, 1<<32|tiocsti), eperm},
		{"TCGETS", true, data(native, unix.SYS_IOCTL, 0, unix.TCGETS), allow},
		{"clone thread", true, data(native, unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_THREAD), allow},
		{"clone new user", true, data(native, unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_NEWNS), eperm},
		{"unshare new user", true, data(native, unix.SYS_UNSHARE, unix.CLONE_NEWUSER), eperm},
		{"unshare files", true, data(native, unix.SYS_UNSHARE, unix.CLONE_FILES), allow},
		{"getpid", false, data(native, unix.SYS_GETPID), allow},
		{"foreign architecture", true, data(native^1, unix.SYS_GETPID), enosys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := argumentFilter(tt.network)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := bpf.NewVM(prog)
			if err != nil {
				t.Fatal(err)
			}
			got, err := vm.Run(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != tt.want {
				t.Fatalf("filter returned %#x, want %#x", got, tt.want)
			}
		})
	}
}

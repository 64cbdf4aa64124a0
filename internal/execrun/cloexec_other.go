//go:build unix && !linux

package execrun

// MarkInheritedCloseOnExec sets close-on-exec on every descriptor from 3 up (listed in
// /dev/fd), so that descriptors this process inherited without it never reach a command.
func MarkInheritedCloseOnExec() error { return markCloseOnExecByList("/dev/fd") }

package cpu

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	archGetXcompPerm  = 0x1022
	archReqXcompPerm  = 0x1023
	xfeatureXTileData = 18
)

// requestAMX asks Linux for the AMX tile-data state (arch_prctl
// ARCH_REQ_XCOMP_PERM); the grant is process-wide. It reports whether the
// permission is held afterwards.
func requestAMX() bool {
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXTileData, 0); e != 0 {
		return false
	}
	var bits uint64
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&bits)), 0); e != 0 {
		return false
	}
	return bits&(1<<xfeatureXTileData) != 0
}

package pool

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

func setMemPolicy(mode int, mask uint64) error {
	var p unsafe.Pointer
	maxNode := uintptr(0)
	if mask != 0 {
		p, maxNode = unsafe.Pointer(&mask), 65
	}
	if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), uintptr(p), maxNode); e != 0 {
		return fmt.Errorf("set_mempolicy(mode %d, nodes %#x): %v", mode, mask, e)
	}
	return nil
}

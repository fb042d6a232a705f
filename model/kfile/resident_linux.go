package kfile

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the resident pages of a page-aligned range of the
// mapping with mincore(2) (x/sys/unix has no wrapper for it on Linux).
func residentPages(b []byte, pageSize int) (int, bool) {
	if len(b) == 0 {
		return 0, true
	}
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return 0, false
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, true
}

package model

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// residency sets bit 0 of v[i] when page i of the n bytes from page p is
// resident (mincore); false: unknown.
func residency(p unsafe.Pointer, n int, v []byte) bool {
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(p), uintptr(n), uintptr(unsafe.Pointer(unsafe.SliceData(v))))
	return errno == 0
}

package model

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residency sets bit 0 of v[i] when page i of the n bytes from page p is
// resident (mincore); false: unknown.
func residency(p unsafe.Pointer, n int, v []byte) bool {
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(p), uintptr(n), uintptr(unsafe.Pointer(unsafe.SliceData(v))))
	return errno == 0
}

// populate reads b's pages where missing and maps them into the process
// (madvise MADV_POPULATE_READ, Linux 5.14), waiting for the reads; false
// where the kernel does not know the advice. Other errors (a fatal signal
// pending) end it as done: it is a hint.
func populate(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % uintptr(pageSize))
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), -off) // in the same mapping: it starts on a page
	err := unix.Madvise(unsafe.Slice((*byte)(p), len(b)+off), unix.MADV_POPULATE_READ)
	return !errors.Is(err, unix.EINVAL)
}

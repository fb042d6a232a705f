//go:build linux || darwin

package mapfile

import (
	"errors"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether Map maps files instead of reading them.
const Supported = true

// Map maps the first size bytes of f read-only and shared (the page cache:
// untouched parts stay on disk). The mapping stays valid after f is
// closed; release (nil for an empty file) unmaps it.
func Map(f *os.File, size int64) (data []byte, release func([]byte) error, err error) {
	if size == 0 {
		return nil, nil, nil
	}
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to map on this platform")
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, unix.Munmap, nil
}

// Drop takes the whole pages inside b, a part of a Map mapping, out of the
// process's resident set (madvise MADV_DONTNEED): the file's pages stay in
// the page cache, and reading b again maps them back. For a copy of b made
// elsewhere, so that RSS does not count the same bytes twice. An error is
// no matter: the pages then simply stay.
func Drop(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(unix.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := (p+page-1)/page*page, (p+uintptr(len(b)))/page*page
	if lo < hi {
		_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), lo-p)), hi-lo), unix.MADV_DONTNEED)
	}
}

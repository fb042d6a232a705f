//go:build linux || darwin

package model

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const prefetchSupported = true

var pageSize = os.Getpagesize()

// willNeed asks the OS to start reading b's missing pages: over the
// page-aligned range holding b, each run of pages residency (vec is its
// scratch) does not find in RAM gets madvise(MADV_WILLNEED),
// prefetchChunk bytes a call (all of it where residency is unknown). It
// is a hint: errors are ignored, and it returns without waiting for the
// reads.
func willNeed(b []byte, vec *[]byte) {
	if len(b) == 0 {
		return
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % uintptr(pageSize))
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), -off) // in the same mapping: it starts on a page
	n := len(b) + off
	pages := (n + pageSize - 1) / pageSize
	if cap(*vec) < pages {
		*vec = make([]byte, pages)
	}
	v := (*vec)[:pages]
	if !residency(p, n, v) {
		advise(p, n)
		return
	}
	for i := 0; i < pages; {
		if v[i]&1 != 0 {
			i++
			continue
		}
		j := i + 1
		for j < pages && v[j]&1 == 0 {
			j++
		}
		advise(unsafe.Add(p, i*pageSize), min(j*pageSize, n)-i*pageSize)
		i = j
	}
}

// advise is madvise(MADV_WILLNEED) on n bytes from page p, prefetchChunk
// bytes a call.
func advise(p unsafe.Pointer, n int) {
	for i := 0; i < n; i += prefetchChunk {
		_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, i)), min(prefetchChunk, n-i)), unix.MADV_WILLNEED)
	}
}

//go:build linux || darwin

package mapfile

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeAlign is the alignment Anon gives its memory: the 2 MiB of an x86-64
// or arm64 (4 KiB granule) huge page, so that every whole 2 MiB of it can
// be one.
const hugeAlign = 2 << 20

// Anon returns size bytes of zeroed anonymous memory (private, read-write)
// outside the Go heap, 2 MiB-aligned and, on Linux, advised to be backed by
// transparent huge pages (madvise MADV_HUGEPAGE: one TLB entry per 2 MiB
// instead of 512, which the kernels streaming weights feel), and its
// release function (munmap of the whole slice Anon returned).
func Anon(size int) (data []byte, release func([]byte) error, err error) {
	if size == 0 {
		return nil, nil, nil
	}
	page := uintptr(unix.Getpagesize())
	n := alignUp(uintptr(size), page)
	p, err := unix.MmapPtr(-1, 0, nil, n+hugeAlign, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	// keep the 2 MiB-aligned span, give back the slack around it
	base := uintptr(p)
	start := alignUp(base, hugeAlign)
	if start > base {
		_ = unix.MunmapPtr(p, start-base)
	}
	if end := start + n; end < base+n+hugeAlign {
		_ = unix.MunmapPtr(unsafe.Add(p, end-base), base+n+hugeAlign-end)
	}
	data = unsafe.Slice((*byte)(unsafe.Add(p, start-base)), size)
	adviseHuge(data)
	return data, func(b []byte) error {
		return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), alignUp(uintptr(len(b)), page))
	}, nil
}

func alignUp(n, a uintptr) uintptr { return (n + a - 1) / a * a }

package mla

import (
	"errors"
	"fmt"
	"unsafe"
)

// PageAllocator provides the memory of cache pages. A Cache asks it for
// one page at a time (PageTokens·RowBytes bytes) and never gives a page
// back: pages live until the allocator is closed. Alloc must return
// memory aligned to at least 8 bytes; Close releases every page it handed
// out, so the caches using them must be dropped (or Release'd) first.
type PageAllocator interface {
	Alloc(bytes int) ([]byte, error)
	Close() error
}

// FileBacked is implemented by allocators whose pages are file-backed
// (the OS can write them back and evict them), so that memory reports can
// tell them apart from heap pages.
type FileBacked interface {
	FileBacked() bool
}

// HeapAllocator is the default allocator: Go heap memory (make). Its
// Close does nothing; the garbage collector frees unused pages.
type HeapAllocator struct{}

// Alloc returns zeroed heap memory.
func (HeapAllocator) Alloc(bytes int) ([]byte, error) {
	if bytes < 0 {
		return nil, fmt.Errorf("mla: allocation of %d bytes", bytes)
	}
	// allocated as uint64s so that the page is 8-byte aligned whatever the
	// size class
	w := make([]uint64, (bytes+7)/8)
	if len(w) == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), bytes), nil
}

// Close does nothing.
func (HeapAllocator) Close() error { return nil }

// ErrAllocatorClosed is returned by Alloc after Close.
var ErrAllocatorClosed = errors.New("mla: page allocator is closed")

// views of raw page bytes as typed slices (the bytes are 8-byte aligned)

func f32View(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func u16View(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

func i8View(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

// Package scratch lends float32 buffers for a forward pass's temporaries,
// so that a decode or prefill step reuses warm memory instead of
// allocating fresh pages (each a page fault and, later, garbage) for every
// intermediate tensor.
package scratch

import (
	"math/bits"
	"sync"
	"unsafe"
)

// pools[c] holds the arrays of buffers of capacity 2^c.
var pools [48]sync.Pool

// Get returns a buffer of length n; its contents are undefined (clear it
// where zeros matter). Give it back with Put when done.
func Get(n int) []float32 {
	if n <= 0 {
		return nil
	}
	c := bits.Len(uint(n - 1)) // 2^c ≥ n
	if p, _ := pools[c].Get().(unsafe.Pointer); p != nil {
		return unsafe.Slice((*float32)(p), 1<<c)[:n]
	}
	return make([]float32, n, 1<<c)
}

// Zeroed is Get with the buffer cleared.
func Zeroed(n int) []float32 {
	b := Get(n)
	clear(b)
	return b
}

// Put returns buffers from Get for reuse; nil buffers are ignored. The
// caller must not use them afterwards.
func Put(bufs ...[]float32) {
	for _, b := range bufs {
		c := cap(b)
		if c == 0 || c&(c-1) != 0 {
			continue // not from Get
		}
		// the array's address, not a slice header: an interface holds a
		// pointer without allocating
		pools[bits.Len(uint(c))-1].Put(unsafe.Pointer(unsafe.SliceData(b)))
	}
}

// Package scratch lends float32 buffers for a forward pass's temporaries,
// so that a decode or prefill step reuses warm memory instead of
// allocating fresh pages (each a page fault and, later, garbage) for every
// intermediate tensor.
//
// Unlike a sync.Pool, which drops its items at every other garbage
// collection, the free lists here keep what they are given (up to a
// bound): a buffer dropped by a collection is a fresh allocation on the
// next step, and fresh pages fault on first touch. On the 2-vCPU VM the
// project measures on, a 4 KiB fault costs about 13 µs (the host backs the
// page anew): the sync.Pool scratch cost a 64-token prefill of the
// 2-layer checkpoint ~1300 faults per pass, ~17 ms of ~90.
package scratch

import (
	"math/bits"
	"sync"
	"unsafe"
)

// keepPerClass bounds the buffers a size class keeps (the temporaries a
// forward pass holds at once, with the workers', are far fewer).
const keepPerClass = 64

// pools[c] holds the arrays of buffers of capacity 2^c.
var pools [48]Keep[unsafe.Pointer]

// Get returns a buffer of length n; its contents are undefined (clear it
// where zeros matter). Give it back with Put when done.
func Get(n int) []float32 {
	if n <= 0 {
		return nil
	}
	c := bits.Len(uint(n - 1)) // 2^c ≥ n
	if p, ok := pools[c].Get(); ok {
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
		pools[bits.Len(uint(c))-1].Put(unsafe.Pointer(unsafe.SliceData(b)))
	}
}

// Keep is a free list of T that keeps its items across garbage
// collections (a sync.Pool does not), up to keepPerClass of them; the
// zero value is empty and ready. It is for the kernels' per-call
// workspaces, which grow to their largest use and should stay warm.
type Keep[T any] struct {
	mu    sync.Mutex
	items []T
}

// Get takes an item, reporting false when there is none.
func (k *Keep[T]) Get() (T, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var zero T
	n := len(k.items)
	if n == 0 {
		return zero, false
	}
	x := k.items[n-1]
	k.items[n-1] = zero
	k.items = k.items[:n-1]
	return x, true
}

// Put gives x back; beyond keepPerClass items it is dropped.
func (k *Keep[T]) Put(x T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.items) < keepPerClass {
		k.items = append(k.items, x)
	}
}

// GetOr takes an item, or makes one with mk when there is none.
func (k *Keep[T]) GetOr(mk func() T) T {
	if x, ok := k.Get(); ok {
		return x
	}
	return mk()
}

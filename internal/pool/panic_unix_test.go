//go:build unix

package pool

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
)

// TestWorkerPanic: a panic in a worker is raised again in the caller (a
// *Panic with the worker's value and stack) after every worker finished,
// and the pool runs the next job as before; a memory fault in a worker
// (a mapped file cut short under it) is such a panic, with an address,
// not a crash.
func TestWorkerPanic(t *testing.T) {
	p := New(2)
	defer p.Close()
	if p.Size() < 2 {
		t.Skip("one thread")
	}
	catch := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	v := catch(func() {
		p.Run(2, func(w int) {
			if w == 1 {
				panic("planted")
			}
		})
	})
	pn, ok := v.(*Panic)
	if !ok || pn.Value != "planted" || !strings.Contains(string(pn.Stack), "panic_unix_test.go") {
		t.Fatalf("recovered %v (%T), want the worker's *Panic", v, v)
	}
	ran := make([]bool, 2)
	p.Run(2, func(w int) { ran[w] = true })
	if !ran[0] || !ran[1] {
		t.Fatalf("after a panic the next job ran on %v", ran)
	}

	// a fault: a mapped file truncated under the workers
	path := filepath.Join(t.TempDir(), "f")
	page := os.Getpagesize()
	if err := os.WriteFile(path, make([]byte, 4*page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, 4*page, syscall.PROT_READ, syscall.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(data)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // the caller's share too
	var sink byte
	v = catch(func() {
		p.For(2, 4, 1, func(w, lo, hi int) {
			for i := lo; i < hi; i++ {
				sink += data[i*page]
			}
		})
	})
	var fa interface{ Addr() uintptr }
	e, _ := v.(error)
	if e == nil || !errors.As(e, &fa) {
		t.Fatalf("a fault in the workers: recovered %v (%T), want an error with an address", v, v)
	}
	_ = sink
}

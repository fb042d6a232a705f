//go:build linux || darwin

package mla

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// FileAllocatorSupported reports whether NewFileAllocator works on this OS.
const FileAllocatorSupported = true

// defaultChunkBytes is the size of one mapping of the spill file: pages
// are carved from chunks so that a long context needs few mappings
// (vm.max_map_count), while each page's disk blocks are reserved as it is
// handed out.
const defaultChunkBytes = 64 << 20

// FileAllocator hands out cache pages mapped (MAP_SHARED) from a sparse
// file, so that the OS can write a long context's cache back to disk and
// evict it instead of holding it all in RAM. The file is unlinked as soon
// as it is created: nothing is left behind, even after a crash, and its
// disk space returns when Close unmaps it.
//
// Each page's disk blocks are reserved when it is handed out (fallocate
// on Linux, F_PREALLOCATE on macOS), so a full disk is an error from
// Alloc rather than a SIGBUS on the first write to the page.
type FileAllocator struct {
	mu      sync.Mutex
	f       *os.File
	name    string   // the path the file had, for messages
	chunk   int      // bytes per mapping
	maps    [][]byte // every mapping, unmapped by Close
	cur     []byte   // the rest of the last mapping
	curOff  int64    // file offset of cur[0]
	size    int64    // file size
	used    int64    // bytes handed out
	noAlloc bool     // the filesystem cannot reserve blocks
	closed  bool
}

// NewFileAllocator creates an unlinked temporary file in dir (os.TempDir
// if empty) to back cache pages.
func NewFileAllocator(dir string) (*FileAllocator, error) {
	f, err := os.CreateTemp(dir, "ktune-mla-cache-*")
	if err != nil {
		return nil, fmt.Errorf("mla: cache spill file: %w", err)
	}
	name := f.Name()
	if err := os.Remove(name); err != nil {
		f.Close()
		return nil, fmt.Errorf("mla: cache spill file: unlinking %s: %w", name, err)
	}
	return &FileAllocator{f: f, name: name, chunk: defaultChunkBytes}, nil
}

// Alloc returns bytes of zeroed, file-backed memory, 64-byte aligned.
func (a *FileAllocator) Alloc(bytes int) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrAllocatorClosed
	}
	if bytes <= 0 {
		return nil, nil
	}
	n := (bytes + 63) &^ 63 // keep pages cache-line aligned
	if n > len(a.cur) {
		ps := os.Getpagesize()
		m := (max(n, a.chunk) + ps - 1) / ps * ps
		if err := unix.Ftruncate(int(a.f.Fd()), a.size+int64(m)); err != nil {
			return nil, fmt.Errorf("mla: growing cache spill file %s to %d bytes: %w", a.name, a.size+int64(m), err)
		}
		b, err := unix.Mmap(int(a.f.Fd()), a.size, m, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			// the file keeps its size: the next chunk maps beyond the hole
			a.size += int64(m)
			return nil, fmt.Errorf("mla: mapping %d bytes of cache spill file %s: %w", m, a.name, err)
		}
		adviseMapping(b)
		a.maps = append(a.maps, b)
		a.cur, a.curOff = b, a.size
		a.size += int64(m)
	}
	if !a.noAlloc {
		switch err := reserve(a.f, a.curOff, int64(n)); {
		case err == errNoReserve:
			a.noAlloc = true // a filesystem without fallocate: stay sparse
		case err != nil:
			return nil, fmt.Errorf("mla: reserving %d bytes of cache spill file %s (%d in use): %w", n, a.name, a.used, err)
		}
	}
	p := a.cur[:bytes:bytes]
	a.cur, a.curOff = a.cur[n:], a.curOff+int64(n)
	a.used += int64(n)
	return p, nil
}

// Bytes is the memory handed out so far.
func (a *FileAllocator) Bytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// FileBacked is true.
func (a *FileAllocator) FileBacked() bool { return true }

// Close unmaps every page and closes the file, which frees its disk space
// (it was unlinked at creation). Pages handed out must not be used after
// Close. Closing twice is harmless.
func (a *FileAllocator) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var first error
	for _, b := range a.maps {
		if err := unix.Munmap(b); err != nil && first == nil {
			first = fmt.Errorf("mla: unmapping cache spill file %s: %w", a.name, err)
		}
	}
	a.maps, a.cur = nil, nil
	if err := a.f.Close(); err != nil && first == nil {
		first = fmt.Errorf("mla: closing cache spill file %s: %w", a.name, err)
	}
	return first
}

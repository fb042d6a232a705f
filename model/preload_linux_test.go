package model

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestPreloadRun: the preload's reader brings every page of its views into
// the page cache, over more than one batch, after the file was evicted
// from it; a stopped one walks nothing. (Skipped where the kernel keeps
// the evicted pages: then nothing could show the reader's work.)
func TestPreloadRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights")
	n := preloadBatch + preloadBatch/2 + 12345
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	views := [][]byte{m[100 : 20<<20], m[(30<<20)+5:]} // a gap, unaligned ends
	resident := func() (in, all int) {
		for _, v := range views {
			off := int(uintptr(unsafe.Pointer(&v[0])) % uintptr(pageSize))
			p := unsafe.Add(unsafe.Pointer(&v[0]), -off)
			vec := make([]byte, (len(v)+off+pageSize-1)/pageSize)
			if !residency(p, len(v)+off, vec) {
				t.Fatal("mincore failed")
			}
			for _, b := range vec {
				in += int(b & 1)
			}
			all += len(vec)
		}
		return in, all
	}
	evict := func() {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		if in, all := resident(); in > all/4 {
			t.Skipf("the page cache kept %d of %d pages after FADV_DONTNEED", in, all)
		}
	}

	evict()
	stopped := &preloader{done: make(chan struct{})}
	stopped.stop.Store(true)
	stopped.run(views)
	if stopped.walked != 0 {
		t.Errorf("a stopped preload walked %d bytes", stopped.walked)
	}

	evict()
	p := &preloader{done: make(chan struct{})}
	p.run(views)
	want := int64(len(views[0]) + len(views[1]))
	if p.walked != want {
		t.Errorf("walked %d bytes, want %d", p.walked, want)
	}
	if in, all := resident(); in != all {
		t.Errorf("after the preload %d of %d pages are resident", in, all)
	}
}

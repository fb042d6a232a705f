package model

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestWillNeedReads: on a file whose pages were dropped from the page
// cache, willNeed of an unaligned slice makes every page holding it
// resident (the reads are asynchronous: polled for up to 5 s), more than
// one madvise call's read-ahead window, and residency reports the pages.
func TestWillNeedReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w")
	size := 24 << 20 // 3 × the largest usual read-ahead window
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	count := func() int {
		v := make([]byte, size/pageSize)
		if !residency(unsafe.Pointer(&data[0]), size, v) {
			t.Fatal("mincore failed")
		}
		n := 0
		for _, x := range v {
			n += int(x & 1)
		}
		return n
	}
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, int64(size), unix.FADV_DONTNEED)
	before := count()
	if before == size/pageSize {
		t.Logf("the pages stay resident after FADV_DONTNEED (tmpfs?): only the calls are checked")
	}
	var vec []byte
	willNeed(data[100:size-100], &vec)
	deadline := time.Now().Add(5 * time.Second)
	for count() < size/pageSize && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(); got < size/pageSize {
		t.Errorf("%d of %d pages resident after willNeed (%d before)", got, size/pageSize, before)
	}
}

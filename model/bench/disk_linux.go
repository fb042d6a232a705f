package bench

import (
	"errors"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// diskCeiling is the read rate (bytes/s) of the storage holding path:
// about n bytes read with O_DIRECT (past the page cache, so what the
// device delivers) in reads of block bytes (rounded to pages; 0:
// DiskBlock) spread evenly over the file, diskQueue at a time. Paged
// decode reads whole expert matrices at scattered places, so bench passes
// their size: an SSD delivers less in 1 MiB reads than in 4 MiB ones.
func diskCeiling(path string, n, block int) (float64, error) {
	if block <= 0 {
		block = DiskBlock
	}
	block = (block + 4095) &^ 4095
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size() / int64(block) * int64(block)
	blocks := min(int64(max(n/block, 1)), size/int64(block))
	if blocks < 1 {
		return 0, errors.New("file smaller than one read")
	}
	stride := size / blocks &^ 4095
	var (
		next  int64
		mu    sync.Mutex
		total int64
		rerr  error
		wg    sync.WaitGroup
	)
	t0 := time.Now()
	for range diskQueue {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := make([]byte, block+4096)
			off := int((4096 - uintptr(unsafe.Pointer(&raw[0]))%4096) % 4096)
			buf := raw[off : off+block] // O_DIRECT: a page-aligned buffer
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= blocks {
					return
				}
				k, err := f.ReadAt(buf, i*stride)
				mu.Lock()
				total += int64(k)
				if err != nil && rerr == nil {
					rerr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	if rerr != nil {
		return 0, rerr
	}
	return float64(total) / secs, nil
}

package krun

import (
	"errors"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// diskBlock is the size of one read of the disk ceiling, and diskQueue
// how many are in flight: about what madvise read-ahead and faults'
// read-around submit (requests of up to max_sectors_kb, several queued).
const (
	diskBlock = 4 << 20
	diskQueue = 4
)

// diskCeiling is the read rate (bytes/s) of the storage holding path:
// about n bytes read with O_DIRECT (past the page cache, so what the
// device delivers) in diskBlock reads spread evenly over the file,
// diskQueue at a time.
func diskCeiling(path string, n int) (float64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size() &^ (diskBlock - 1)
	blocks := min(int64(max(n/diskBlock, 1)), size/diskBlock)
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
			raw := make([]byte, diskBlock+4096)
			off := int((4096 - uintptr(unsafe.Pointer(&raw[0]))%4096) % 4096)
			buf := raw[off : off+diskBlock] // O_DIRECT: a page-aligned buffer
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

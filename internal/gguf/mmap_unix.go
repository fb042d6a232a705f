//go:build linux || darwin

package gguf

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mmapSupported reports whether Open maps files instead of reading them.
const mmapSupported = true

// mapFile maps the first size bytes of f read-only. The mapping stays valid
// after f is closed.
func mapFile(f *os.File, size int64) ([]byte, func([]byte) error, error) {
	if size == 0 {
		return nil, nil, nil
	}
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to map on this platform")
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, unix.Munmap, nil
}

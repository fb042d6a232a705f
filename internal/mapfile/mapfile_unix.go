//go:build linux || darwin

package mapfile

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// Supported reports whether Map maps files instead of reading them.
const Supported = true

// Map maps the first size bytes of f read-only and shared (the page cache:
// untouched parts stay on disk). The mapping stays valid after f is
// closed; release (nil for an empty file) unmaps it.
func Map(f *os.File, size int64) (data []byte, release func([]byte) error, err error) {
	if size == 0 {
		return nil, nil, nil
	}
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to map on this platform")
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, unix.Munmap, nil
}

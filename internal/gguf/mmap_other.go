//go:build !linux && !darwin

package gguf

import (
	"errors"
	"io"
	"math"
	"os"
)

// mmapSupported reports whether Open maps files instead of reading them.
const mmapSupported = false

// mapFile reads the first size bytes of f into memory; this platform does not
// use mmap.
func mapFile(f *os.File, size int64) ([]byte, func([]byte) error, error) {
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to read on this platform")
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, nil, err
	}
	return data, nil, nil
}

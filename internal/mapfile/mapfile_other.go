//go:build !linux && !darwin

package mapfile

import (
	"errors"
	"io"
	"math"
	"os"
)

// Supported reports whether Map maps files instead of reading them.
const Supported = false

// Map reads the first size bytes of f into memory: this platform does not
// use mmap. release is nil.
func Map(f *os.File, size int64) (data []byte, release func([]byte) error, err error) {
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to read on this platform")
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, nil, err
	}
	return data, nil, nil
}

// Anon returns size bytes of zeroed memory (the Go heap here); release is
// nil.
func Anon(size int) (data []byte, release func([]byte) error, err error) {
	if size == 0 {
		return nil, nil, nil
	}
	return make([]byte, size), nil, nil
}

// Drop does nothing here: Map's memory is the Go heap.
func Drop([]byte) {}

//go:build !linux && !darwin

package mla

import (
	"fmt"
	"runtime"
)

// FileAllocatorSupported reports whether NewFileAllocator works on this OS.
const FileAllocatorSupported = false

// FileAllocator is not available on this OS (it needs mmap).
type FileAllocator struct{ chunk int }

// NewFileAllocator fails: file-backed cache pages need mmap (Linux, macOS).
func NewFileAllocator(dir string) (*FileAllocator, error) {
	return nil, fmt.Errorf("mla: file-backed cache pages (cache spill) are supported on linux and darwin, not %s", runtime.GOOS)
}

// Alloc fails.
func (a *FileAllocator) Alloc(bytes int) ([]byte, error) {
	return nil, fmt.Errorf("mla: file-backed cache pages are not supported on %s", runtime.GOOS)
}

// Bytes is 0.
func (a *FileAllocator) Bytes() int64 { return 0 }

// FileBacked is true.
func (a *FileAllocator) FileBacked() bool { return true }

// Close does nothing.
func (a *FileAllocator) Close() error { return nil }

package model

import (
	"os"

	"golang.org/x/sys/unix"
)

// openVerifyReader opens path for direct I/O (O_DIRECT: the page cache is
// bypassed), or through the page cache where the file system refuses it
// (tmpfs, some network file systems).
func openVerifyReader(path string) (*verifyReader, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err == nil {
		return &verifyReader{f: os.NewFile(uintptr(fd), path), direct: true}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &verifyReader{f: f}, nil
}

package model

import (
	"os"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of direct I/O's offsets, lengths and
// buffer (the logical block size of any device, at most a page).
const directAlign = 4096

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

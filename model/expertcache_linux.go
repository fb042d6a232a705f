package model

import (
	"errors"

	"golang.org/x/sys/unix"
)

// directReader reads a model file's parts with O_DIRECT.
type directReader struct{ fds []int }

// openDirect opens every part for O_DIRECT reads; an error where the file
// system refuses them (tmpfs, some network file systems).
func openDirect(paths []string) (blockReader, error) {
	r := &directReader{}
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.fds = append(r.fds, fd)
	}
	return r, nil
}

func (r *directReader) ReadAt(part int, dst []byte, off int64) (int, error) {
	if part < 0 || part >= len(r.fds) {
		return 0, errors.New("no such part")
	}
	n := 0
	for n < len(dst) {
		k, err := unix.Pread(r.fds[part], dst[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if k == 0 {
			break // end of file
		}
		n += k
		if k%directAlign != 0 {
			break // a short read ends at the end of the file
		}
	}
	return n, nil
}

func (r *directReader) Close() error {
	var err error
	for _, fd := range r.fds {
		err = errors.Join(err, unix.Close(fd))
	}
	r.fds = nil
	return err
}

package mla

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var errNoReserve = errors.New("mla: the filesystem cannot reserve blocks")

// reserve allocates the disk blocks of [off, off+n) of f (within its size),
// so that writes through the mapping cannot fail for want of space.
func reserve(f *os.File, off, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, off, n)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return errNoReserve
		}
		return err
	}
}

// adviseMapping leaves the cache out of core dumps (it can be far larger
// than the rest of the process). Sequential or random access hints are
// not given: decode re-reads the whole cache every step, and
// MADV_SEQUENTIAL would have the kernel drop pages right after reading.
func adviseMapping(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTDUMP) }

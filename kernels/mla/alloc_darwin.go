package mla

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var errNoReserve = errors.New("mla: the filesystem cannot reserve blocks")

// reserve preallocates n more bytes of disk for f (F_PREALLOCATE from the
// physical end of file), so that writes through the mapping cannot fail
// for want of space.
func reserve(f *os.File, off, n int64) error {
	st := unix.Fstore_t{Flags: unix.F_ALLOCATEALL, Posmode: unix.F_PEOFPOSMODE, Length: n}
	err := unix.FcntlFstore(f.Fd(), unix.F_PREALLOCATE, &st)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoReserve
	}
	return err
}

// adviseMapping gives no hint: decode re-reads the whole cache every step.
func adviseMapping(b []byte) {}

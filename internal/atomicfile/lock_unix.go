//go:build unix

// Advisory locks on temporary files (flock), Unix.

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

const lockSupported = true

// lock takes an exclusive advisory lock on f (released when f is closed).
func lock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLock takes f's lock if nobody holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// openNoWait opens a device or named pipe for writing without waiting
// for a reader (a pipe with none is ENXIO), then writes block as usual.
func openNoWait(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if err == syscall.ENXIO {
			return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("a named pipe with no reader")}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

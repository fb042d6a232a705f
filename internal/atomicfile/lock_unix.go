//go:build unix

// Advisory locks on temporary files (flock), Unix.

package atomicfile

import (
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

//go:build !unix

// Advisory locks on temporary files: none outside Unix (RemoveStale then
// removes nothing).

package atomicfile

import "os"

const lockSupported = false

func lock(*os.File)         {}
func tryLock(*os.File) bool { return false }

// openNoWait opens a device for writing.
func openNoWait(path string) (*os.File, error) { return os.OpenFile(path, os.O_WRONLY, 0) }

package mapfile

import "golang.org/x/sys/unix"

// adviseHuge asks for transparent huge pages over b (where THP is
// "madvise" or "always"; an error, as with THP off, is no matter).
func adviseHuge(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }

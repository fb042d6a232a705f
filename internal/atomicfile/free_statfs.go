//go:build linux || darwin || freebsd

// Free space on the filesystem of a path (statfs), Linux, macOS, FreeBSD.

package atomicfile

import "golang.org/x/sys/unix"

// statfsFree is the bytes an unprivileged process may still write on the
// filesystem holding the folder dir (f_bavail × f_bsize).
func statfsFree(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

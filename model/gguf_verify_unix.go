//go:build unix

package model

import "golang.org/x/sys/unix"

// statIdentity is what identifies the file at path beyond its name, size
// and modification time: its change time, device and inode.
func statIdentity(path string) (change int64, dev, inode uint64) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0, 0, 0
	}
	return st.Ctim.Nano(), uint64(st.Dev), uint64(st.Ino)
}

//go:build !linux

package kfile

// residentPages is unknown off Linux.
func residentPages(b []byte, pageSize int) (int, bool) { return 0, false }

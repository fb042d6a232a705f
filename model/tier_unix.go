//go:build linux || darwin

package model

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// mlock locks b's pages in RAM, explaining RLIMIT_MEMLOCK refusals.
func mlock(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	err := unix.Mlock(b)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EAGAIN) {
		var r unix.Rlimit
		limit := "unknown"
		if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r) == nil {
			limit = fmt.Sprintf("%d bytes", r.Cur)
			if r.Cur == unix.RLIM_INFINITY {
				limit = "unlimited"
			}
		}
		return fmt.Errorf("mlock: %v: RLIMIT_MEMLOCK is %s; raise it (ulimit -l, systemd LimitMEMLOCK=, or CAP_IPC_LOCK)", err, limit)
	}
	return fmt.Errorf("mlock: %w", err)
}

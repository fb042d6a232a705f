//go:build unix

package kda

import "golang.org/x/sys/unix"

// cpuTime is the process's user + system CPU seconds (getrusage), or −1
// where it fails.
func cpuTime() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

//go:build unix

package bench

import "syscall"

// majorFaults is the process's major page faults so far (-1: unknown).
func majorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return int64(ru.Majflt)
}

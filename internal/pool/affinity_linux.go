package pool

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// canPin: Linux has per-thread affinity.
const canPin = true

// allowed is the process's affinity mask at start.
var allowed = func() unix.CPUSet {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		s.Zero()
		for c := 0; c < len(s)*64; c++ {
			s.Set(c)
		}
	}
	return s
}()

// pinThread binds the calling OS thread to one CPU, or to every allowed
// CPU for -1.
func pinThread(c int) error {
	var set unix.CPUSet
	if c < 0 {
		set = allowed
	} else {
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}

// restrictProcess sets the affinity of every thread of the process to cpus
// (nil: back to the mask at start). Threads created later inherit their
// creator's mask; pinned workers re-pin themselves at their next job.
func restrictProcess(cpus []int) error {
	set := allowed
	if cpus != nil {
		set.Zero()
		for _, c := range cpus {
			set.Set(c)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && first == nil && err != unix.ESRCH {
			first = err
		}
	}
	return first
}

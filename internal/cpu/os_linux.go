package cpu

import (
	"os"

	"golang.org/x/sys/unix"
)

// osProbe adds what only the live OS can answer: the affinity mask.
func osProbe(src *Source) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for c := 0; c < len(set)*64 && c <= maxCPU; c++ {
			if set.IsSet(c) {
				src.Affinity = append(src.Affinity, c)
			}
		}
	}
}

// AvailableMemory returns the memory the OS says can be allocated without
// swapping (MemAvailable), or less where this process's cgroups limit
// memory (cgroupMemAvailable: a container's limit), or 0 when unknown.
func AvailableMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	_, avail, err := parseMeminfo(string(b))
	if err != nil {
		return 0
	}
	if cg, ok := cgroupMemAvailable(&Source{FS: os.DirFS("/")}); ok && cg < avail {
		return cg
	}
	return avail
}

//go:build !linux

package cpu

import "runtime"

// detectOS: NUMA and memory are read on Linux only; elsewhere one node.
func detectOS(i *Info) {
	n := i.LogicalCores
	if n <= 0 {
		n = runtime.NumCPU()
	}
	cpus := make([]int, n)
	for c := range cpus {
		cpus[c] = c
	}
	i.NUMA = []Node{{ID: 0, CPUs: cpus}}
}

// AvailableMemory is unknown (0) outside Linux.
func AvailableMemory() int64 { return 0 }

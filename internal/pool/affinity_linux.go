package pool

import (
	"sort"

	"golang.org/x/sys/unix"

	"github.com/ktune/ktune/internal/cpu"
)

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

var allowed unix.CPUSet

// cpuOrders lists the CPUs this process may run on: compact (by NUMA node,
// then CPU number) and spread (round-robin over nodes, the first sibling
// of each core before the second: CPU numbers above the physical core
// count are assumed to be the SMT siblings, as Linux numbers them).
func cpuOrders() (compact, spread []int) {
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return nil, nil
	}
	info := cpu.Get()
	ok := func(c int) bool { return allowed.IsSet(c) }
	return Orders(info.NUMA, info.PhysicalCores, ok)
}

// Orders computes the compact and spread CPU orders from NUMA nodes, the
// physical core count and an allowed-CPU predicate (exported for tests
// with fake topologies).
func Orders(nodes []cpu.Node, physical int, ok func(int) bool) (compact, spread []int) {
	var perNode [][]int
	for _, n := range nodes {
		var cs []int
		for _, c := range n.CPUs {
			if ok(c) {
				cs = append(cs, c)
			}
		}
		sort.Ints(cs)
		if len(cs) > 0 {
			perNode = append(perNode, cs)
			compact = append(compact, cs...)
		}
	}
	for i := range perNode {
		cs := perNode[i]
		sort.SliceStable(cs, func(a, b int) bool { return (cs[a] >= physical) == false && cs[b] >= physical })
	}
	for i := 0; ; i++ {
		added := false
		for _, cs := range perNode {
			if i < len(cs) {
				spread = append(spread, cs[i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return compact, spread
}

package cpu

// Topology: which CPUs this process may use, how they group into cores,
// core classes, packages and NUMA nodes, and how many workers may run.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Core classes of hybrid processors (Intel P/E cores, Arm big.LITTLE,
// Apple performance levels). A uniform processor's cores have no class.
const (
	ClassPerformance = "performance"
	ClassEfficiency  = "efficiency"
)

// Core is one physical core with at least one usable logical CPU.
type Core struct {
	// CPUs are its usable logical CPUs (SMT siblings), ascending.
	CPUs    []int `json:"cpus"`
	Package int   `json:"package"`
	Die     int   `json:"die"`
	Node    int   `json:"node"`
	// Class is "performance" or "efficiency" on hybrid processors ("" on
	// uniform ones); Rank orders the classes, 0 the fastest.
	Class string `json:"class,omitempty"`
	Rank  int    `json:"rank"`
	// Capacity is Linux's cpu_capacity (Arm; 0 unknown), Part the Arm
	// "CPU part" or the Windows efficiency class, for display.
	Capacity int    `json:"capacity,omitempty"`
	Part     string `json:"part,omitempty"`
	// SMT is how many siblings the core has in hardware (usable or not).
	SMT int `json:"smt"`
}

// ClassSummary counts one core class.
type ClassSummary struct {
	Name  string `json:"name"`
	Rank  int    `json:"rank"`
	Cores int    `json:"cores"`
	CPUs  int    `json:"cpus"`
	Part  string `json:"part,omitempty"`
}

// Topology is what the OS says of the CPUs this process can use.
type Topology struct {
	// From names the source: "sysfs", "sysctl", "windows" or "cpuid"
	// (nothing better was readable).
	From string `json:"from"`
	// Online are the online logical CPUs; Affinity the process's mask (nil:
	// the OS has none, or it was unreadable); CPUs = Affinity ∩ Online.
	Online   []int `json:"online"`
	Affinity []int `json:"affinity,omitempty"`
	CPUs     []int `json:"cpus"`
	// Quota is the cgroup CPU bandwidth limit in CPUs (0: none) and
	// QuotaFrom the file that set it; GOMAXPROCS the user's setting (0:
	// unset).
	Quota      float64 `json:"quota,omitempty"`
	QuotaFrom  string  `json:"quota_from,omitempty"`
	GOMAXPROCS int     `json:"gomaxprocs,omitempty"`
	// Usable is how many threads may run at once: len(CPUs), limited by
	// the quota (rounded down, at least 1: a spinning worker past the quota
	// is throttled and stalls every other at the next barrier) and by
	// GOMAXPROCS.
	Usable   int            `json:"usable"`
	Cores    []Core         `json:"cores"`
	Classes  []ClassSummary `json:"classes,omitempty"`
	Packages int            `json:"packages"`
	Dies     int            `json:"dies"`
	// CPUIDLogical is what CPUID claimed (a hint; VMs over-report).
	CPUIDLogical int `json:"cpuid_logical,omitempty"`
}

// Hybrid reports whether the usable cores come in more than one class.
func (t *Topology) Hybrid() bool { return len(t.Classes) > 1 }

// SMT reports whether some usable core has two or more usable siblings.
func (t *Topology) SMT() bool {
	for _, c := range t.Cores {
		if len(c.CPUs) > 1 {
			return true
		}
	}
	return false
}

// CPUsOfRank returns the usable CPUs of the cores of class rank r.
func (t *Topology) CPUsOfRank(r int) []int {
	var out []int
	for _, c := range t.Cores {
		if c.Rank == r {
			out = append(out, c.CPUs...)
		}
	}
	sort.Ints(out)
	return out
}

// Order lists usable CPUs in the order workers are pinned to them:
// smtFirst false fills one thread per core before any second sibling;
// true puts a core's siblings next to each other. spread deals cores
// round-robin over NUMA nodes instead of filling a node first. Classes go
// fastest first; with maxRank ≥ 0 only classes up to that rank are used.
func (t *Topology) Order(smtFirst, spread bool, maxRank int) []int {
	type slot struct{ cpu, sib, rank, node, nodeIdx, core int }
	var slots []slot
	nodeSeen := map[[2]int]int{} // (rank, node) → cores of it seen so far
	for ci, c := range t.Cores {
		if maxRank >= 0 && c.Rank > maxRank {
			continue
		}
		k := [2]int{c.Rank, c.Node}
		idx := nodeSeen[k]
		nodeSeen[k] = idx + 1
		for s, cpu := range c.CPUs {
			slots = append(slots, slot{cpu, s, c.Rank, c.Node, idx, ci})
		}
	}
	key := func(s slot) []int {
		node := s.node
		if spread {
			node = 0 // round-robin: position within the node first
		}
		switch {
		case smtFirst && spread:
			return []int{s.rank, s.nodeIdx, s.node, s.sib}
		case smtFirst:
			return []int{s.rank, node, s.core, s.sib}
		case spread:
			return []int{s.sib, s.rank, s.nodeIdx, s.node}
		default:
			return []int{s.sib, s.rank, node, s.core}
		}
	}
	sort.SliceStable(slots, func(a, b int) bool { return slices.Compare(key(slots[a]), key(slots[b])) < 0 })
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.cpu
	}
	return out
}

// DefaultThreads is the thread list tuning and benchmarks sweep by
// default: 1, 2, 4, … below the usable count, the performance cores' CPU
// count and the physical core count where they fall below it, and the
// usable count.
func (t *Topology) DefaultThreads() []int {
	n := max(t.Usable, 1)
	var out []int
	for x := 1; x < n; x *= 2 {
		out = append(out, x)
	}
	if t.Hybrid() {
		if p := len(t.CPUsOfRank(0)); p < n {
			out = append(out, p)
		}
	}
	if p := len(t.Cores); p < n {
		out = append(out, p)
	}
	out = append(out, n)
	sort.Ints(out)
	return slices.Compact(out)
}

// finish fills the derived counts: classes, packages, dies, Usable.
func (t *Topology) finish() {
	sort.Ints(t.CPUs)
	t.CPUs = slices.Compact(t.CPUs)
	sort.SliceStable(t.Cores, func(a, b int) bool { return t.Cores[a].CPUs[0] < t.Cores[b].CPUs[0] })
	byRank := map[int]*ClassSummary{}
	pk, dies := map[int]bool{}, map[[2]int]bool{}
	for _, c := range t.Cores {
		pk[c.Package] = true
		dies[[2]int{c.Package, c.Die}] = true
		s := byRank[c.Rank]
		if s == nil {
			s = &ClassSummary{Name: c.Class, Rank: c.Rank, Part: c.Part}
			byRank[c.Rank] = s
		}
		s.Cores++
		s.CPUs += len(c.CPUs)
	}
	t.Classes = nil
	if len(byRank) > 1 {
		for _, s := range byRank {
			t.Classes = append(t.Classes, *s)
		}
		sort.Slice(t.Classes, func(a, b int) bool { return t.Classes[a].Rank < t.Classes[b].Rank })
	} else {
		for i := range t.Cores { // one class: no class names
			t.Cores[i].Class, t.Cores[i].Rank = "", 0
		}
	}
	t.Packages, t.Dies = max(len(pk), 1), max(len(dies), 1)
	u := len(t.CPUs)
	if t.Quota > 0 {
		u = min(u, max(1, int(math.Floor(t.Quota+1e-9))))
	}
	if t.GOMAXPROCS > 0 {
		u = min(u, t.GOMAXPROCS)
	}
	t.Usable = max(u, 1)
}

// rankClasses turns per-core performance scores (higher is faster; all
// equal means uniform) into ranks and class names: the fastest score is
// "performance", every slower one "efficiency" (three tiers: the middle
// one is "performance" too, with its own rank).
func rankClasses(cores []Core, score func(c *Core) int) {
	var scores []int
	for i := range cores {
		scores = append(scores, score(&cores[i]))
	}
	uniq := slices.Clone(scores)
	sort.Sort(sort.Reverse(sort.IntSlice(uniq)))
	uniq = slices.Compact(uniq)
	if len(uniq) < 2 {
		return
	}
	for i := range cores {
		r := slices.Index(uniq, scores[i])
		cores[i].Rank = r
		cores[i].Class = ClassPerformance
		if r == len(uniq)-1 {
			cores[i].Class = ClassEfficiency
		}
	}
}

// gomaxprocsEnv reads a GOMAXPROCS setting (0 when unset or invalid).
func gomaxprocsEnv(env map[string]string) int {
	n, err := strconv.Atoi(strings.TrimSpace(env["GOMAXPROCS"]))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// uniformTopology is the fallback when the OS says nothing: n CPUs, each
// its own core (or CPUID's threads per core), one node.
func uniformTopology(n, tpc int) Topology {
	t := Topology{From: "cpuid"}
	tpc = max(tpc, 1)
	for c := 0; c < n; c++ {
		t.Online = append(t.Online, c)
	}
	t.CPUs = slices.Clone(t.Online)
	for c := 0; c < n; c += tpc {
		var cs []int
		for s := c; s < min(c+tpc, n); s++ {
			cs = append(cs, s)
		}
		t.Cores = append(t.Cores, Core{CPUs: cs, SMT: len(cs)})
	}
	return t
}

// intersect returns the elements of a also in b (both any order), sorted.
func intersect(a, b []int) []int {
	in := map[int]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []int
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// FormatCPUList writes CPUs in the kernel's list format ("0-3,8").
func FormatCPUList(cpus []int) string {
	s := slices.Clone(cpus)
	sort.Ints(s)
	s = slices.Compact(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

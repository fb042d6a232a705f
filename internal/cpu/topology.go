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
	// L3 numbers the last-level cache instance the core shares (0 when
	// there is one or none), for spreading over L3 domains.
	L3 int `json:"l3,omitempty"`
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
// round-robin over the memory domains — packages first, then the NUMA
// nodes within a package, then the L3 instances within a node — instead
// of filling one node (and one L3) first. Classes go fastest first; with
// maxRank ≥ 0 only classes up to that rank are used (PerfRank: the
// performance classes).
func (t *Topology) Order(smtFirst, spread bool, maxRank int) []int {
	type dom struct{ pkg, node, l3 int }
	// dealing positions of the domains: package varies fastest
	var doms []dom
	seen := map[dom]bool{}
	for _, c := range t.Cores {
		d := dom{c.Package, c.Node, c.L3}
		if !seen[d] {
			seen[d] = true
			doms = append(doms, d)
		}
	}
	nodeRank, l3Rank := map[dom]int{}, map[dom]int{}
	{
		nodesOf, l3sOf := map[int][]int{}, map[[2]int][]int{}
		for _, d := range doms {
			if !slices.Contains(nodesOf[d.pkg], d.node) {
				nodesOf[d.pkg] = append(nodesOf[d.pkg], d.node)
			}
			k := [2]int{d.pkg, d.node}
			if !slices.Contains(l3sOf[k], d.l3) {
				l3sOf[k] = append(l3sOf[k], d.l3)
			}
		}
		for _, d := range doms {
			nodeRank[d] = slices.Index(nodesOf[d.pkg], d.node)
			l3Rank[d] = slices.Index(l3sOf[[2]int{d.pkg, d.node}], d.l3)
		}
	}
	sort.SliceStable(doms, func(a, b int) bool {
		x, y := doms[a], doms[b]
		return slices.Compare([]int{l3Rank[x], nodeRank[x], x.pkg}, []int{l3Rank[y], nodeRank[y], y.pkg}) < 0
	})
	deal := map[dom]int{}
	for i, d := range doms {
		deal[d] = i
	}
	type slot struct{ cpu, sib, rank, node, pos, deal, core int }
	var slots []slot
	posIn := map[[2]int]int{} // (rank, dealing position) → cores of it seen so far
	for ci, c := range t.Cores {
		if maxRank >= 0 && c.Rank > maxRank {
			continue
		}
		d := deal[dom{c.Package, c.Node, c.L3}]
		k := [2]int{c.Rank, d}
		pos := posIn[k]
		posIn[k] = pos + 1
		for s, cpu := range c.CPUs {
			slots = append(slots, slot{cpu, s, c.Rank, c.Node, pos, d, ci})
		}
	}
	key := func(s slot) []int {
		switch {
		case smtFirst && spread:
			return []int{s.rank, s.pos, s.deal, s.sib}
		case smtFirst:
			return []int{s.rank, s.node, s.core, s.sib}
		case spread:
			return []int{s.sib, s.rank, s.pos, s.deal}
		default:
			return []int{s.sib, s.rank, s.node, s.core}
		}
	}
	sort.SliceStable(slots, func(a, b int) bool { return slices.Compare(key(slots[a]), key(slots[b])) < 0 })
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.cpu
	}
	return out
}

// Domains counts the memory domains spread deals over (package, node, L3).
func (t *Topology) Domains() int {
	seen := map[[3]int]bool{}
	for _, c := range t.Cores {
		seen[[3]int{c.Package, c.Node, c.L3}] = true
	}
	return len(seen)
}

// PerfRank is the slowest rank of a performance class (0 on a uniform
// processor): Order(…, PerfRank()) keeps the performance cores.
func (t *Topology) PerfRank() int {
	r := 0
	for _, c := range t.Cores {
		if c.Class == ClassPerformance {
			r = max(r, c.Rank)
		}
	}
	return r
}

// PerformanceCPUs returns the usable CPUs of the performance classes (all
// CPUs on a uniform processor), and how many cores they make.
func (t *Topology) PerformanceCPUs() (cpus []int, cores int) {
	for _, c := range t.Cores {
		if !t.Hybrid() || c.Class == ClassPerformance {
			cpus = append(cpus, c.CPUs...)
			cores++
		}
	}
	sort.Ints(cpus)
	return cpus, cores
}

// DefaultThreads is the thread list tuning and benchmarks sweep by
// default: 1, 2, 4, … below the usable count, the performance cores' core
// and CPU counts (hybrid) and the physical core count where they fall
// below it, and the usable count.
func (t *Topology) DefaultThreads() []int {
	n := max(t.Usable, 1)
	var out []int
	for x := 1; x < n; x *= 2 {
		out = append(out, x)
	}
	if t.Hybrid() {
		cpus, cores := t.PerformanceCPUs()
		for _, p := range []int{cores, len(cpus)} {
			if p < n {
				out = append(out, p)
			}
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
	if t.Quota > 0 && t.Quota < float64(u) { // compared as floats: a huge quota must not overflow an int
		u = max(1, int(math.Floor(t.Quota+1e-9)))
	}
	if t.GOMAXPROCS > 0 {
		u = min(u, t.GOMAXPROCS)
	}
	t.Usable = max(u, 1)
}

// rankClasses turns per-core performance scores (higher is faster; all
// equal means uniform) into ranks and class names: the fastest score is
// "performance", the slowest "efficiency", a middle tier "performance"
// with its own rank. Scores within 10% of a tier's best join that tier
// (two big clusters binned to different clocks are one class).
func rankClasses(cores []Core, score func(c *Core) int) {
	var scores []int
	for i := range cores {
		scores = append(scores, score(&cores[i]))
	}
	uniq := slices.Clone(scores)
	sort.Sort(sort.Reverse(sort.IntSlice(uniq)))
	uniq = slices.Compact(uniq)
	var tops []int // each tier's best score
	tierOf := map[int]int{}
	for _, v := range uniq {
		if len(tops) == 0 || float64(v) < 0.9*float64(tops[len(tops)-1]) {
			tops = append(tops, v)
		}
		tierOf[v] = len(tops) - 1
	}
	if len(tops) < 2 {
		return
	}
	for i := range cores {
		r := tierOf[scores[i]]
		cores[i].Rank = r
		cores[i].Class = ClassPerformance
		if r == len(tops)-1 {
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

package cpu

// Windows: cores, efficiency classes, packages, caches and NUMA nodes from
// the buffer GetLogicalProcessorInformationEx(RelationAll) fills (through
// a Source, so captured machines parse on any host).

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"
)

// LOGICAL_PROCESSOR_RELATIONSHIP values (winnt.h).
const (
	relationProcessorCore    = 0
	relationNumaNode         = 1
	relationCache            = 2
	relationProcessorPackage = 3
	relationGroup            = 4
	relationNumaNodeEx       = 6
	relationAll              = 0xffff
)

// Layout of SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX on 64-bit Windows:
// {Relationship DWORD; Size DWORD; union} with the union at offset 8 (its
// members hold a KAFFINITY, so it is 8-byte aligned). Offsets below are
// within the union.
const (
	glpiHeader = 8

	// GROUP_AFFINITY {KAFFINITY Mask; WORD Group; WORD Reserved[3]}.
	groupAffinitySize = 16

	// PROCESSOR_RELATIONSHIP {BYTE Flags; BYTE EfficiencyClass; BYTE
	// Reserved[20]; WORD GroupCount; GROUP_AFFINITY GroupMask[]}, used by
	// RelationProcessorCore and RelationProcessorPackage.
	procEffClass   = 1
	procGroupCount = 22
	procMasks      = 24

	// NUMA_NODE_RELATIONSHIP {DWORD NodeNumber; BYTE Reserved[18]; WORD
	// GroupCount; GROUP_AFFINITY GroupMasks[]}; GroupCount is 0 before
	// Windows 10 20H2, with one mask.
	numaNumber     = 0
	numaGroupCount = 22
	numaMasks      = 24

	// CACHE_RELATIONSHIP {BYTE Level; BYTE Associativity; WORD LineSize;
	// DWORD CacheSize; PROCESSOR_CACHE_TYPE Type; BYTE Reserved[18]; WORD
	// GroupCount; GROUP_AFFINITY GroupMasks[]}; GroupCount as for NUMA.
	cacheLevel      = 0
	cacheLineSize   = 2
	cacheSize       = 4
	cacheType       = 8
	cacheGroupCount = 30
	cacheMasks      = 32

	// GROUP_RELATIONSHIP {WORD MaximumGroupCount; WORD ActiveGroupCount;
	// BYTE Reserved[20]; PROCESSOR_GROUP_INFO GroupInfo[]}, each
	// {BYTE MaximumProcessorCount; BYTE ActiveProcessorCount; BYTE
	// Reserved[38]; KAFFINITY ActiveProcessorMask} (48 bytes).
	groupActive     = 2
	groupInfo       = 24
	groupInfoSize   = 48
	groupInfoActive = 40

	// maxGroups bounds a processor group number: CPU numbers are
	// group*64+bit and stay below maxCPU.
	maxGroups = maxCPU / 64
)

// glpiCore is one RelationProcessorCore record: its logical processors
// (the SMT siblings; the LTP_PC_SMT flag says no more) and its
// EfficiencyClass.
type glpiCore struct {
	cpus  []int
	class int
}

// glpiCache is one RelationCache record.
type glpiCache struct {
	level, typ, line int
	size             int64
	cpus             []int
}

// glpi is what a GetLogicalProcessorInformationEx buffer says.
type glpi struct {
	cores    []glpiCore
	packages [][]int
	caches   []glpiCache
	nodes    map[int][]int
	// active are the active processors of every group (RelationGroup);
	// nil when the buffer has no group record.
	active []int
}

// glpiError is a malformed buffer: where, and what is wrong.
type glpiError struct {
	off int
	msg string
}

func (e *glpiError) Error() string {
	return fmt.Sprintf("%s offset %d: %s", captureGLPI, e.off, e.msg)
}

// parseGLPI walks a GetLogicalProcessorInformationEx(RelationAll) buffer:
// a sequence of {Relationship, Size, union} records, each Size bytes long.
// Relationships it does not use (dies, modules, future ones) are skipped by
// their Size. Any record that does not fit, or whose counts do not fit its
// Size, is an error naming its offset: a buffer we cannot walk is not
// trusted at all.
func parseGLPI(b []byte) (*glpi, error) {
	g := &glpi{nodes: map[int][]int{}}
	le := binary.LittleEndian
	for off := 0; off < len(b); {
		if len(b)-off < glpiHeader {
			return nil, &glpiError{off, fmt.Sprintf("truncated record header (%d bytes left)", len(b)-off)}
		}
		rel, size := le.Uint32(b[off:]), le.Uint32(b[off+4:])
		if size < glpiHeader {
			return nil, &glpiError{off, fmt.Sprintf("record size %d is below the %d-byte header", size, glpiHeader)}
		}
		if uint64(size) > uint64(len(b)-off) {
			return nil, &glpiError{off, fmt.Sprintf("record size %d runs past the end of the buffer (%d bytes left)", size, len(b)-off)}
		}
		p := b[off+glpiHeader : off+int(size)]
		errAt := func(format string, args ...any) error {
			return &glpiError{off, fmt.Sprintf("relationship %d: ", rel) + fmt.Sprintf(format, args...)}
		}
		need := func(n int) error {
			if len(p) < n {
				return errAt("record of %d bytes is shorter than its %d-byte structure", size, glpiHeader+n)
			}
			return nil
		}
		switch rel {
		case relationProcessorCore, relationProcessorPackage:
			if err := need(procMasks); err != nil {
				return nil, err
			}
			n := int(le.Uint16(p[procGroupCount:]))
			if n == 0 {
				return nil, errAt("GroupCount 0")
			}
			cpus, err := glpiMasks(p, procMasks, n, errAt)
			if err != nil {
				return nil, err
			}
			if rel == relationProcessorCore {
				g.cores = append(g.cores, glpiCore{cpus: cpus, class: int(p[procEffClass])})
			} else {
				g.packages = append(g.packages, cpus)
			}
		case relationNumaNode, relationNumaNodeEx:
			if err := need(numaMasks); err != nil {
				return nil, err
			}
			cpus, err := glpiMasks(p, numaMasks, max(int(le.Uint16(p[numaGroupCount:])), 1), errAt)
			if err != nil {
				return nil, err
			}
			id := int(le.Uint32(p[numaNumber:]))
			g.nodes[id] = append(g.nodes[id], cpus...)
		case relationCache:
			if err := need(cacheMasks); err != nil {
				return nil, err
			}
			cpus, err := glpiMasks(p, cacheMasks, max(int(le.Uint16(p[cacheGroupCount:])), 1), errAt)
			if err != nil {
				return nil, err
			}
			g.caches = append(g.caches, glpiCache{
				level: int(p[cacheLevel]), typ: int(le.Uint32(p[cacheType:])), line: int(le.Uint16(p[cacheLineSize:])),
				size: int64(le.Uint32(p[cacheSize:])), cpus: cpus,
			})
		case relationGroup:
			if err := need(groupInfo); err != nil {
				return nil, err
			}
			n := int(le.Uint16(p[groupActive:]))
			if n > maxGroups {
				return nil, errAt("ActiveGroupCount %d is above %d", n, maxGroups)
			}
			if len(p) < groupInfo+n*groupInfoSize {
				return nil, errAt("ActiveGroupCount %d needs %d bytes, the record has %d", n, glpiHeader+groupInfo+n*groupInfoSize, size)
			}
			g.active = []int{}
			for k := 0; k < n; k++ {
				m := le.Uint64(p[groupInfo+k*groupInfoSize+groupInfoActive:])
				g.active = append(g.active, maskCPUs(k, m)...)
			}
		}
		off += int(size)
	}
	return g, nil
}

// glpiMasks reads n GROUP_AFFINITY structures at p[at:] into logical CPU
// numbers (group*64 + bit), ascending.
func glpiMasks(p []byte, at, n int, errAt func(string, ...any) error) ([]int, error) {
	if len(p) < at+n*groupAffinitySize {
		return nil, errAt("GroupCount %d needs %d bytes, the record has %d", n, glpiHeader+at+n*groupAffinitySize, glpiHeader+len(p))
	}
	var cpus []int
	for k := 0; k < n; k++ {
		e := p[at+k*groupAffinitySize:]
		grp := int(binary.LittleEndian.Uint16(e[8:]))
		if grp >= maxGroups {
			return nil, errAt("processor group %d is above %d", grp, maxGroups-1)
		}
		cpus = append(cpus, maskCPUs(grp, binary.LittleEndian.Uint64(e))...)
	}
	if len(cpus) == 0 {
		return nil, errAt("empty processor mask")
	}
	sort.Ints(cpus)
	return slices.Compact(cpus), nil
}

// maskCPUs lists the CPUs of a KAFFINITY mask in group grp.
func maskCPUs(grp int, m uint64) []int {
	out := make([]int, 0, bits.OnesCount64(m))
	for m != 0 {
		b := bits.TrailingZeros64(m)
		out = append(out, grp*64+b)
		m &^= 1 << b
	}
	return out
}

// windowsDetect fills i's topology, caches and NUMA nodes from src.GLPI
// (and the process affinity mask in src.Affinity). Logical CPU numbers
// are group*64 + bit, so a second processor group starts at 64 whatever
// the size of the first. On hybrid processors a higher EfficiencyClass is
// the faster core: the highest class is rank 0, "performance". A buffer
// that cannot be walked, or that lists no cores or one CPU in two cores,
// is not used at all (a warning says why): DetectFrom then falls back to
// CPUID.
func windowsDetect(src *Source, i *Info) {
	if len(src.GLPI) == 0 {
		return
	}
	g, err := parseGLPI(src.GLPI)
	if err != nil {
		i.Warnings = append(i.Warnings, err.Error()+"; the OS topology is not used")
		return
	}
	if len(g.cores) == 0 {
		i.Warnings = append(i.Warnings, captureGLPI+": no processor core records; the OS topology is not used")
		return
	}
	coreOf := map[int]int{}
	var all []int
	for k, c := range g.cores {
		for _, cpu := range c.cpus {
			if prev, dup := coreOf[cpu]; dup {
				i.Warnings = append(i.Warnings, fmt.Sprintf("%s: CPU %d is in cores %d and %d; the OS topology is not used", captureGLPI, cpu, prev, k))
				return
			}
			coreOf[cpu] = k
			all = append(all, cpu)
		}
	}
	sort.Ints(all)

	t := Topology{From: "windows", CPUIDLogical: src.CPUID.LogicalCores}
	t.Online = all
	if len(g.active) > 0 {
		if on := intersect(all, g.active); len(on) > 0 {
			t.Online = on
		} else {
			i.Warnings = append(i.Warnings, captureGLPI+": the active processor masks and the cores do not meet; using the cores' CPUs")
		}
	}
	t.Affinity = slices.Clone(src.Affinity)
	t.CPUs = slices.Clone(t.Online)
	if len(t.Affinity) > 0 {
		t.CPUs = intersect(t.Affinity, t.Online)
		if len(t.CPUs) == 0 {
			i.Warnings = append(i.Warnings, "the affinity mask and the online CPUs do not meet; using the online CPUs")
			t.CPUs = slices.Clone(t.Online)
		}
	}

	pkgOf := map[int]int{}
	for k, cs := range g.packages {
		for _, c := range cs {
			pkgOf[c] = k
		}
	}
	nodes := make([]Node, 0, len(g.nodes))
	nodeOf := map[int]int{}
	for id, cs := range g.nodes {
		sort.Ints(cs)
		nodes = append(nodes, Node{ID: id, CPUs: slices.Compact(cs)})
		for _, c := range cs {
			nodeOf[c] = id
		}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].ID < nodes[b].ID })

	usable := map[int]bool{}
	for _, c := range t.CPUs {
		usable[c] = true
	}
	classes := map[int]bool{} // of every core, usable or not
	classOf := map[int]int{}  // first usable CPU of a core → its class
	for _, c := range g.cores {
		classes[c.class] = true
	}
	for _, c := range g.cores {
		var cs []int // c.cpus is sorted
		for _, cpu := range c.cpus {
			if usable[cpu] {
				cs = append(cs, cpu)
			}
		}
		if len(cs) == 0 {
			continue
		}
		t.Cores = append(t.Cores, Core{CPUs: cs, Package: pkgOf[c.cpus[0]], Node: nodeOf[c.cpus[0]], SMT: len(c.cpus)})
		classOf[cs[0]] = c.class
	}
	if len(classes) > 1 {
		// a hybrid processor: parts name the class even when only one
		// class is usable (finish then drops the class names)
		rankClasses(t.Cores, func(c *Core) int { return classOf[c.CPUs[0]] })
		for k := range t.Cores {
			t.Cores[k].Part = fmt.Sprintf("class %d", classOf[t.Cores[k].CPUs[0]])
		}
	}
	t.GOMAXPROCS = gomaxprocsEnv(src.Env)
	t.finish()
	i.Topology = t
	if i.MemBytes == 0 {
		i.MemBytes = src.MemBytes
	}
	i.NUMA = usableNodes(nodes, t.CPUs)
	if len(i.NUMA) == 1 && i.NUMA[0].MemBytes == 0 {
		i.NUMA[0].MemBytes = i.MemBytes
	}

	var caches []CacheInfo
	for _, c := range g.caches {
		typ := ""
		switch c.typ {
		case 0:
			typ = "unified"
		case 1:
			typ = "instruction"
		case 2:
			typ = "data"
		}
		if typ == "" || c.level < 1 || c.size <= 0 {
			continue // trace caches, and what no one can use
		}
		caches = append(caches, CacheInfo{Level: c.level, Type: typ, Size: c.size, CPUs: c.cpus, From: "windows"})
		if i.CacheLine <= 0 && c.level == 1 && c.typ == 2 && c.line > 0 {
			i.CacheLine = c.line
		}
	}
	sortCaches(caches)
	i.Caches = caches
}

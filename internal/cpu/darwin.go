package cpu

// macOS: cores, performance levels, caches, memory and the arm64 features
// CPUID leaves out, from sysctl values (through a Source, so captured Macs
// parse on any host).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// darwinKeys are the sysctl names darwinDetect reads besides the
// per-level ones (darwinLevelKeys); osProbe on macOS reads exactly these.
var darwinKeys = []string{
	"hw.nperflevels",
	"hw.physicalcpu", "hw.logicalcpu", "hw.activecpu", "hw.ncpu",
	"hw.l1dcachesize", "hw.l1icachesize", "hw.l2cachesize", "hw.l3cachesize",
	"hw.cachelinesize", "hw.memsize", "hw.cpufrequency",
	"machdep.cpu.brand_string",
	"hw.optional.AdvSIMD", "hw.optional.arm.AdvSIMD", "hw.optional.neon",
	"hw.optional.arm.FEAT_DotProd", "hw.optional.arm.FEAT_BF16",
	"hw.optional.arm.FEAT_I8MM", "hw.optional.arm.FEAT_SME",
}

// darwinLevelKeys are read as hw.perflevelN.<key> for N in
// 0..hw.nperflevels-1 (0 is the fastest core type).
var darwinLevelKeys = []string{
	"physicalcpu", "logicalcpu", "l1dcachesize", "l1icachesize",
	"l2cachesize", "cpusperl2", "l3cachesize", "cpusperl3", "name",
}

// darwinStringKey reports whether a sysctl name darwinDetect reads holds a
// string (the rest are integers).
func darwinStringKey(name string) bool {
	return name == "machdep.cpu.brand_string" || strings.HasSuffix(name, ".name")
}

// maxPerfLevels bounds hw.nperflevels (Apple ships 1 or 2).
const maxPerfLevels = 8

// darwinFeatures maps hw.optional sysctls to the arm64 features they
// announce (a value ≥ 1 means present).
var darwinFeatures = []struct {
	key string
	f   Feature
}{
	{"hw.optional.AdvSIMD", ASIMD},
	{"hw.optional.arm.AdvSIMD", ASIMD},
	{"hw.optional.neon", ASIMD},
	{"hw.optional.arm.FEAT_DotProd", ASIMDDP},
	{"hw.optional.arm.FEAT_BF16", BF16},
	{"hw.optional.arm.FEAT_I8MM", I8MM},
	{"hw.optional.arm.FEAT_SME", SME},
}

// sysctlValues reads integers and strings from a Source's sysctl map,
// collecting a warning (naming the key) for every malformed value.
type sysctlValues struct {
	m     map[string]string
	warns []string
}

// num returns key's integer value; false when the key is absent, or
// malformed or outside [lo, hi] (with a warning).
func (s *sysctlValues) num(key string, lo, hi int64) (int64, bool) {
	v, ok := s.m[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		s.warns = append(s.warns, fmt.Sprintf("sysctl %s: %q is not a number; ignored", key, v))
		return 0, false
	}
	if n < lo || n > hi {
		s.warns = append(s.warns, fmt.Sprintf("sysctl %s: %d is out of range [%d, %d]; ignored", key, n, lo, hi))
		return 0, false
	}
	return n, true
}

// str returns key's string value ("" and false when absent or empty).
func (s *sysctlValues) str(key string) (string, bool) {
	v := strings.TrimSpace(s.m[key])
	return v, v != ""
}

// perfLevel is one hw.perflevelN (or, without performance levels, the
// whole machine from the hw.* keys).
type perfLevel struct {
	name                 string
	physical, logical    int
	l1d, l1i, l2, l3     int64
	cpusPerL2, cpusPerL3 int // CPUs sharing one L2, one L3 (0: unknown)
}

// maxCacheBytes bounds a cache size read from sysctl (1 TiB: a corrupt
// value, not a cache).
const maxCacheBytes = 1 << 40

// darwinLevels reads hw.perflevelN.*; nil (with a warning) when the levels
// are missing or inconsistent, so the caller falls back to the hw.* counts.
func darwinLevels(s *sysctlValues) []perfLevel {
	n, ok := s.num("hw.nperflevels", 1, maxPerfLevels)
	if !ok {
		return nil
	}
	var levels []perfLevel
	for l := 0; l < int(n); l++ {
		p := fmt.Sprintf("hw.perflevel%d.", l)
		phys, ok1 := s.num(p+"physicalcpu", 0, maxCPU)
		logi, ok2 := s.num(p+"logicalcpu", 0, maxCPU)
		if !ok1 || !ok2 {
			s.warns = append(s.warns, fmt.Sprintf("sysctl %s{physicalcpu,logicalcpu}: missing or malformed; performance levels not used", p))
			return nil
		}
		if (phys == 0) != (logi == 0) || logi < phys {
			s.warns = append(s.warns, fmt.Sprintf("sysctl %sphysicalcpu %d and logicalcpu %d disagree; performance levels not used", p, phys, logi))
			return nil
		}
		lv := perfLevel{physical: int(phys), logical: int(logi)}
		lv.name, _ = s.str(p + "name")
		lv.l1d, _ = s.num(p+"l1dcachesize", 0, maxCacheBytes)
		lv.l1i, _ = s.num(p+"l1icachesize", 0, maxCacheBytes)
		lv.l2, _ = s.num(p+"l2cachesize", 0, maxCacheBytes)
		lv.l3, _ = s.num(p+"l3cachesize", 0, maxCacheBytes)
		c2, _ := s.num(p+"cpusperl2", 0, maxCPU)
		c3, _ := s.num(p+"cpusperl3", 0, maxCPU)
		lv.cpusPerL2, lv.cpusPerL3 = int(c2), int(c3)
		levels = append(levels, lv)
	}
	total := 0
	for _, lv := range levels {
		total += lv.logical
	}
	if total == 0 || total > maxCPU {
		s.warns = append(s.warns, fmt.Sprintf("sysctl hw.perflevelN.logicalcpu: %d CPUs in all; performance levels not used", total))
		return nil
	}
	return levels
}

// darwinFlat describes the machine as one level from hw.physicalcpu,
// hw.logicalcpu (else hw.activecpu, else hw.ncpu) and the hw.*cachesize
// keys (Intel Macs, and macOS before performance levels). Nil when no CPU
// count is readable.
func darwinFlat(s *sysctlValues) []perfLevel {
	var logi int64
	var ok bool
	for _, k := range []string{"hw.logicalcpu", "hw.activecpu", "hw.ncpu"} {
		if logi, ok = s.num(k, 1, maxCPU); ok {
			break
		}
	}
	if !ok {
		return nil
	}
	phys, ok := s.num("hw.physicalcpu", 1, maxCPU)
	if !ok || phys > logi {
		phys = logi
	}
	lv := perfLevel{physical: int(phys), logical: int(logi)}
	lv.l1d, _ = s.num("hw.l1dcachesize", 0, maxCacheBytes)
	lv.l1i, _ = s.num("hw.l1icachesize", 0, maxCacheBytes)
	lv.l2, _ = s.num("hw.l2cachesize", 0, maxCacheBytes)
	lv.l3, _ = s.num("hw.l3cachesize", 0, maxCacheBytes)
	lv.cpusPerL3 = lv.logical // one L3 for the package
	return []perfLevel{lv}
}

// darwinDetect fills i's topology, caches, NUMA node, memory, brand, cache
// line, nominal clock and (on arm64) features from src.Sysctl.
//
// Numbering: macOS has no affinity call and does not name which logical
// CPU sits on which core type, so the numbers here are ours. We follow the
// kernel's own order on Apple silicon, which brings the efficiency
// cluster up first: the slowest level's CPUs are numbered first (an M2 Pro
// has efficiency cores 0–3 and performance cores 4–11), and within a
// level each core's SMT siblings (Intel Macs) are adjacent. Placement
// orders still put the fastest level first (Rank 0).
func darwinDetect(src *Source, i *Info) {
	if len(src.Sysctl) == 0 {
		return
	}
	s := &sysctlValues{m: src.Sysctl}
	defer func() { i.Warnings = append(i.Warnings, s.warns...) }()

	// features, brand, line size, clock and memory stand on their own
	if src.GOARCH == "arm64" {
		for _, df := range darwinFeatures {
			if v, ok := s.num(df.key, 0, 1<<31); ok && v > 0 {
				i.Hardware |= NewSet(df.f)
			}
		}
	}
	if b, ok := s.str("machdep.cpu.brand_string"); ok && i.Brand == "" {
		i.Brand = b
	}
	if v, ok := s.num("hw.cachelinesize", 1, 4096); ok {
		i.CacheLine = int(v)
	}
	if v, ok := s.num("hw.cpufrequency", 1, 1<<40); ok {
		i.NominalHz = v
	}
	if v, ok := s.num("hw.memsize", 1, 1<<56); ok {
		i.MemBytes = v
	}

	levels := darwinLevels(s)
	perLevel := levels != nil
	if !perLevel {
		levels = darwinFlat(s)
	}
	if levels == nil {
		return // DetectFrom falls back to CPUID, with a warning
	}
	total := 0
	for _, lv := range levels {
		total += lv.logical
	}
	if perLevel {
		if n, ok := s.num("hw.logicalcpu", 1, maxCPU); ok && int(n) != total {
			s.warns = append(s.warns, fmt.Sprintf("sysctl: the performance levels hold %d CPUs, hw.logicalcpu says %d: the levels' count is used", total, n))
		}
	}

	t := Topology{From: "sysctl", CPUIDLogical: src.CPUID.LogicalCores}
	for c := 0; c < total; c++ {
		t.Online = append(t.Online, c)
	}
	t.CPUs = slices.Clone(t.Online)
	levelOf := map[int]int{} // first CPU of a core → its level
	var caches []CacheInfo
	base := 0
	for l := len(levels) - 1; l >= 0; l-- { // the slowest level first
		lv := levels[l]
		if lv.logical == 0 {
			continue
		}
		tpc := lv.logical / lv.physical
		if lv.logical%lv.physical != 0 {
			s.warns = append(s.warns, fmt.Sprintf("sysctl: %d logical CPUs on %d cores do not divide evenly; each CPU is taken as its own core", lv.logical, lv.physical))
			tpc = 1
		}
		var levelCPUs []int
		for c := base; c < base+lv.logical; c++ {
			levelCPUs = append(levelCPUs, c)
		}
		for k := 0; k < lv.logical/tpc; k++ {
			cs := levelCPUs[k*tpc : (k+1)*tpc]
			t.Cores = append(t.Cores, Core{CPUs: slices.Clone(cs), SMT: tpc, Part: lv.name})
			levelOf[cs[0]] = l
			if lv.l1d > 0 {
				caches = append(caches, CacheInfo{Level: 1, Type: "data", Size: lv.l1d, CPUs: slices.Clone(cs), From: "sysctl"})
			}
			if lv.l1i > 0 {
				caches = append(caches, CacheInfo{Level: 1, Type: "instruction", Size: lv.l1i, CPUs: slices.Clone(cs), From: "sysctl"})
			}
		}
		per2 := lv.cpusPerL2
		if per2 <= 0 {
			// Apple silicon shares an L2 per cluster; without the count,
			// take the whole level. Intel Macs have one per core.
			per2 = tpc
			if src.GOARCH == "arm64" {
				per2 = lv.logical
			}
		}
		per3 := lv.cpusPerL3
		if per3 <= 0 {
			per3 = lv.logical
		}
		caches = append(caches, groupCaches(2, lv.l2, levelCPUs, per2)...)
		caches = append(caches, groupCaches(3, lv.l3, levelCPUs, per3)...)
		base += lv.logical
	}
	if len(levels) > 1 {
		rankClasses(t.Cores, func(c *Core) int { return -levelOf[c.CPUs[0]] })
	}
	if perLevel && !hasLevel3(caches) {
		// Apple silicon reports no L3; an Intel Mac with performance
		// levels but no per-level L3 shares hw.l3cachesize package-wide.
		if l3, ok := s.num("hw.l3cachesize", 0, maxCacheBytes); ok {
			caches = append(caches, groupCaches(3, l3, t.Online, total)...)
		}
	}
	sortCaches(caches)
	t.GOMAXPROCS = gomaxprocsEnv(src.Env)
	t.finish()
	i.Topology = t
	i.Caches = caches
	i.NUMA = []Node{{ID: 0, CPUs: slices.Clone(t.CPUs), MemBytes: i.MemBytes}}
}

// groupCaches splits cpus into consecutive groups of per CPUs, each
// sharing one cache of the given level and size (none when size ≤ 0).
func groupCaches(level int, size int64, cpus []int, per int) []CacheInfo {
	if size <= 0 || per <= 0 {
		return nil
	}
	var out []CacheInfo
	for g := 0; g < len(cpus); g += per {
		cs := slices.Clone(cpus[g:min(g+per, len(cpus))])
		out = append(out, CacheInfo{Level: level, Type: "unified", Size: size, CPUs: cs, From: "sysctl"})
	}
	return out
}

func hasLevel3(cs []CacheInfo) bool {
	for _, c := range cs {
		if c.Level == 3 {
			return true
		}
	}
	return false
}

package cpu

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"

	"github.com/klauspost/cpuid/v2"
)

// cpuidMap maps cpuid's feature IDs to ours.
var cpuidMap = map[Feature]cpuid.FeatureID{
	AVX2:       cpuid.AVX2,
	FMA:        cpuid.FMA3,
	AVX512F:    cpuid.AVX512F,
	AVX512BW:   cpuid.AVX512BW,
	AVX512VL:   cpuid.AVX512VL,
	AVX512DQ:   cpuid.AVX512DQ,
	AVX512VNNI: cpuid.AVX512VNNI,
	AVXVNNI:    cpuid.AVXVNNI,
	AVX512BF16: cpuid.AVX512BF16,
	AVX512FP16: cpuid.AVX512FP16,
	AMXTile:    cpuid.AMXTILE,
	AMXInt8:    cpuid.AMXINT8,
	AMXBF16:    cpuid.AMXBF16,
	ASIMD:      cpuid.ASIMD,
	ASIMDDP:    cpuid.ASIMDDP,
	I8MM:       cpuid.I8MM,
	BF16:       cpuid.BF16,
	SVE:        cpuid.SVE,
	SVE2:       cpuid.SVE2,
}

// LiveSource reads this machine: CPUID through klauspost/cpuid, the
// kernel's answers (AMX permission, SVE length, SME), and the OS's
// topology files and calls, recording what it reads for WriteCapture.
func LiveSource() *Source {
	c := &cpuid.CPU
	src := &Source{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Env: map[string]string{}}
	f := CPUIDFacts{
		Vendor: c.VendorString, Brand: c.BrandName, Family: c.Family, Model: c.Model, Stepping: c.Stepping,
		PhysicalCores: c.PhysicalCores, LogicalCores: c.LogicalCores, ThreadsPerCore: c.ThreadsPerCore,
		CacheLine: c.CacheLine, Hz: c.Hz,
		Cache: Cache{L1D: int64(c.Cache.L1D), L1I: int64(c.Cache.L1I), L2: int64(c.Cache.L2), L3: int64(c.Cache.L3)},
	}
	if c.HypervisorVendorString != "" {
		f.Hypervisor = c.HypervisorVendorString
	} else if c.Supports(cpuid.HYPERVISOR) {
		f.Hypervisor = "unknown"
	}
	var hw Set
	for feat, id := range cpuidMap {
		if (X86.Has(feat) && runtime.GOARCH != "amd64") || (ARM64.Has(feat) && runtime.GOARCH != "arm64") {
			continue // cpuid's arm and x86 IDs never mix, but be explicit
		}
		if c.Supports(id) {
			hw |= NewSet(feat)
		}
	}
	archProbe(&f, &hw) // AMX permission, SVE length, SME
	f.Features = hw.Names()
	src.CPUID = f
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		src.Env["GOMAXPROCS"] = v
	}
	if runtime.GOOS == "linux" {
		src.FS = newRecordFS(os.DirFS("/"))
	}
	osProbe(src)
	return src
}

// DetectFrom describes the machine a Source reads: features from CPUID,
// everything about cores, caches, NUMA and memory from the OS first
// (CPUID's counts only where the OS says nothing, with a warning). It is
// pure: captured machines detect the same on any host.
func DetectFrom(src *Source) Info {
	c := src.CPUID
	i := Info{
		Arch: src.GOARCH, OS: src.GOOS, Vendor: c.Vendor, Brand: c.Brand,
		Family: c.Family, Model: c.Model, Stepping: c.Stepping, Hypervisor: c.Hypervisor,
		CacheLine: c.CacheLine, NominalHz: max(c.Hz, 0), Hardware: c.Hardware(),
		AMXPermission: c.AMXPermission, SVEBits: c.SVEBits,
	}
	switch src.GOOS {
	case "linux":
		linuxDetect(src, &i)
	case "darwin":
		darwinDetect(src, &i)
	case "windows":
		windowsDetect(src, &i)
	}
	t := &i.Topology
	if len(t.Cores) == 0 {
		n := min(c.LogicalCores, maxCPU+1) // a hint: never trusted past the kernel's own limit
		if n <= 0 {
			n = max(len(src.Affinity), 1)
		}
		u := uniformTopology(n, c.ThreadsPerCore)
		u.CPUIDLogical, u.Affinity = c.LogicalCores, slices.Clone(src.Affinity)
		if cs := intersect(u.Affinity, u.Online); len(cs) > 0 {
			u.CPUs = cs
			var cores []Core
			for _, k := range u.Cores {
				if cs := intersect(k.CPUs, u.CPUs); len(cs) > 0 {
					k.CPUs = cs
					cores = append(cores, k)
				}
			}
			u.Cores = cores
		} else if len(u.Affinity) > 0 {
			i.Warnings = append(i.Warnings, fmt.Sprintf("the affinity mask %s names none of CPUID's %d CPUs; using them all", FormatCPUList(u.Affinity), n))
		}
		u.GOMAXPROCS = gomaxprocsEnv(src.Env)
		u.finish()
		*t = u
		i.Warnings = append(i.Warnings, fmt.Sprintf("the OS gave no CPU topology: %d CPUs as CPUID reports (a hint; VMs over-report)", len(u.CPUs)))
	}
	if len(i.NUMA) == 0 {
		i.NUMA = []Node{{ID: 0, CPUs: slices.Clone(t.CPUs), MemBytes: i.MemBytes}}
	}
	i.LogicalCores, i.PhysicalCores, i.Usable = len(t.CPUs), len(t.Cores), t.Usable
	i.ThreadsPerCore = 1
	for _, k := range t.Cores {
		i.ThreadsPerCore = max(i.ThreadsPerCore, len(k.CPUs))
	}
	// x86 CPUID describes one package (a 2-socket server's 64 online CPUs
	// are 2 × its 32), so only a count the online CPUs are not a whole
	// number of is a disagreement; elsewhere cpuid's count is not the
	// hardware's (Linux arm64: runtime.NumCPU, the affinity count)
	if n := c.LogicalCores; src.GOARCH == "amd64" && n > 0 && (n > len(t.Online) || len(t.Online)%n != 0) && t.From != "cpuid" {
		i.Warnings = append(i.Warnings, fmt.Sprintf("CPUID reports %d logical CPUs, the OS %d online (%d usable): the OS's count is used", c.LogicalCores, len(t.Online), t.Usable))
	}
	// each core's L3 instance (spread deals over them)
	var l3s [][]int
	for _, ci := range i.Caches {
		if ci.Level == 3 {
			l3s = append(l3s, ci.CPUs)
		}
	}
	l3Of := map[int]int{}
	for j := len(l3s) - 1; j >= 0; j-- {
		for _, c := range l3s[j] {
			l3Of[c] = j
		}
	}
	for k := range t.Cores {
		t.Cores[k].L3 = l3Of[t.Cores[k].CPUs[0]]
	}
	i.Cache = summariseCaches(i.Caches, t, c.Cache)
	if i.CacheLine <= 0 {
		i.CacheLine = 64
	}
	if i.Hardware.Intersect(AMX) != 0 && !i.AMXPermission && i.Arch == "amd64" {
		i.Warnings = append(i.Warnings, "the CPU has AMX but the OS did not grant the tile-data permission; AMX variants are off")
	}
	return i
}

// summariseCaches gives the per-core L1d/L1i/L2 and the L3 instance a
// worker sees first (the first core in pool order), from the OS's cache
// list; CPUID's sizes fill what the OS does not list. Each size says where
// it came from; unknown sizes are -1 (roofline then measures them).
func summariseCaches(list []CacheInfo, t *Topology, hint Cache) Cache {
	out := Cache{L1D: -1, L1I: -1, L2: -1, L3: -1, From: map[string]string{}}
	order := t.Order(false, false, -1)
	first := -1
	if len(order) > 0 {
		first = order[0]
	}
	coreOf := map[int]int{} // logical CPU → its core
	for ki, k := range t.Cores {
		for _, c := range k.CPUs {
			coreOf[c] = ki
		}
	}
	coresIn := func(cpus []int) int {
		seen := map[int]bool{}
		for _, c := range cpus {
			if k, ok := coreOf[c]; ok {
				seen[k] = true
			}
		}
		return max(len(seen), 1)
	}
	for _, ci := range list {
		if !slices.Contains(ci.CPUs, first) {
			continue
		}
		switch {
		case ci.Level == 1 && ci.Type == "data":
			out.L1D, out.From["l1d"] = ci.Size, ci.From
		case ci.Level == 1 && ci.Type == "instruction":
			out.L1I, out.From["l1i"] = ci.Size, ci.From
		case ci.Level == 2 && ci.Type != "instruction":
			// a cluster-shared L2 (E-core modules) counts per core
			out.L2, out.From["l2"] = ci.Size/int64(coresIn(ci.CPUs)), ci.From
		case ci.Level == 3:
			out.L3, out.From["l3"] = ci.Size, ci.From
		}
	}
	for _, ci := range list {
		if ci.Level == 3 {
			out.L3Total += ci.Size
		}
	}
	fill := func(p *int64, v int64, key string) {
		if *p <= 0 && v > 0 && v <= maxCacheSize {
			*p, out.From[key] = v, "cpuid"
		}
	}
	fill(&out.L1D, hint.L1D, "l1d")
	fill(&out.L1I, hint.L1I, "l1i")
	fill(&out.L2, hint.L2, "l2")
	fill(&out.L3, hint.L3, "l3")
	if out.L3 > 0 && out.L3Total < out.L3 {
		out.L3Total = out.L3
	}
	if len(out.From) == 0 {
		out.From = nil
	}
	return out
}

func sortCaches(cs []CacheInfo) {
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].Level != cs[b].Level {
			return cs[a].Level < cs[b].Level
		}
		if cs[a].Type != cs[b].Type {
			return cs[a].Type < cs[b].Type
		}
		return cs[a].CPUs[0] < cs[b].CPUs[0]
	})
}

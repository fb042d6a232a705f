package cpu

// Linux: topology, caches, classes, NUMA, memory and the cgroup CPU quota
// from /sys and /proc (through a Source, so captured machines parse on any
// host).

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const sysCPU = "/sys/devices/system/cpu"

// linuxDetect fills i's topology, caches, NUMA nodes and memory from src.
func linuxDetect(src *Source, i *Info) {
	t, warns := linuxTopology(src)
	i.Warnings = append(i.Warnings, warns...)
	nodes, err := readNUMA(src)
	if err != nil {
		i.Warnings = append(i.Warnings, "NUMA: "+err.Error())
	}
	nodeOf := map[int]int{}
	for _, n := range nodes {
		for _, c := range n.CPUs {
			nodeOf[c] = n.ID
		}
	}
	for k := range t.Cores {
		t.Cores[k].Node = nodeOf[t.Cores[k].CPUs[0]]
	}
	q, from, qerr := cgroupQuota(src)
	if qerr != nil {
		i.Warnings = append(i.Warnings, "cgroup: "+qerr.Error())
	}
	t.Quota, t.QuotaFrom = q, from
	t.GOMAXPROCS = gomaxprocsEnv(src.Env)
	t.finish()
	i.Topology = t
	i.NUMA = usableNodes(nodes, t.CPUs)
	caches, cw := linuxCaches(src, &t)
	i.Warnings = append(i.Warnings, cw...)
	i.Caches = caches
	if v, ok := src.readFile("/proc/meminfo"); ok {
		if total, _, err := parseMeminfo(v); err == nil {
			i.MemBytes = total
		}
	}
	if len(nodes) == 0 && len(i.NUMA) == 1 {
		// no node folder (a kernel without CONFIG_NUMA): one node, all memory
		i.NUMA[0].MemBytes = i.MemBytes
	}
	cpuinfo, _ := src.readFile("/proc/cpuinfo")
	if i.NominalHz == 0 {
		i.NominalHz = cpuinfoHz(cpuinfo)
	}
	if src.GOARCH == "arm64" {
		if fam, model, ok := armIdentity(cpuinfo, &t); ok {
			i.Family, i.Model = fam, model
		}
	}
}

// armIdentity gives the family and model klauspost/cpuid derives from
// MIDR_EL1 (bits 23:16, variant and architecture 0xf; bits 15:0, part and
// revision) for the first CPU of the fastest usable class, from
// /proc/cpuinfo. cpuid reads the MIDR of whichever CPU it happens to run
// on, which on big.LITTLE changes from run to run, and with it the
// fingerprint.
func armIdentity(cpuinfo string, t *Topology) (family, model int, ok bool) {
	first := -1
	for _, c := range t.Cores {
		if c.Rank == 0 {
			first = c.CPUs[0]
			break
		}
	}
	for _, p := range parseCPUInfo(cpuinfo) {
		if p.id != first {
			continue
		}
		v, err1 := strconv.ParseInt(p.variant, 0, 64)
		pt, err2 := strconv.ParseInt(p.part, 0, 64)
		r, err3 := strconv.ParseInt(p.revision, 0, 64)
		if err1 != nil || err2 != nil || err3 != nil || v < 0 || v > 0xf || pt < 0 || pt > 0xfff || r < 0 || r > 0xf {
			return 0, 0, false
		}
		return int(v)<<4 | 0xf, int(pt)<<4 | int(r), true
	}
	return 0, 0, false
}

// linuxTopology reads online CPUs, the affinity, and per CPU its package,
// die, core siblings and class.
func linuxTopology(src *Source) (Topology, []string) {
	var warns []string
	t := Topology{From: "sysfs", CPUIDLogical: src.CPUID.LogicalCores}
	if v, ok := src.readFile(sysCPU + "/online"); ok {
		cs, err := ParseCPUList(v)
		if err != nil {
			warns = append(warns, sysCPU+"/online: "+err.Error())
		}
		t.Online = cs
	}
	cpuinfo, _ := src.readFile("/proc/cpuinfo")
	procs := parseCPUInfo(cpuinfo)
	if len(t.Online) == 0 {
		for _, p := range procs {
			t.Online = append(t.Online, p.id)
		}
		sort.Ints(t.Online)
		if len(t.Online) > 0 {
			t.From = "procfs"
		}
	}
	if len(t.Online) == 0 {
		n := min(max(src.CPUID.LogicalCores, 1), maxCPU+1)
		if len(src.Affinity) > 0 {
			n = slices.Max(src.Affinity) + 1
		}
		u := uniformTopology(n, src.CPUID.ThreadsPerCore)
		warns = append(warns, fmt.Sprintf("no %s/online or /proc/cpuinfo: assuming %d CPUs", sysCPU, n))
		t.Online, t.Cores, t.From = u.Online, u.Cores, u.From
	}
	sort.Ints(t.Online)
	t.Online = slices.Compact(t.Online)
	t.Affinity = slices.Clone(src.Affinity)
	t.CPUs = t.Online
	if len(t.Affinity) > 0 {
		t.CPUs = intersect(t.Affinity, t.Online)
		if len(t.CPUs) == 0 {
			warns = append(warns, "the affinity mask and the online CPUs do not meet; using the online CPUs")
			t.CPUs = t.Online
		}
	}
	if t.From == "cpuid" {
		return t, warns
	}

	// cores: by package and sibling list; classes by the hybrid PMU lists,
	// else cpu_capacity, else the Arm part numbers
	pcore, pcOK := cpuListFile(src, "/sys/devices/cpu_core/cpus")
	ecore, ecOK := cpuListFile(src, "/sys/devices/cpu_atom/cpus")
	part := map[int]string{}
	for _, p := range procs {
		part[p.id] = p.part
	}
	byKey := map[string]int{}
	noTopo := 0
	for _, c := range t.CPUs {
		base := fmt.Sprintf("%s/cpu%d", sysCPU, c)
		pkg, okP := src.readInt(base + "/topology/physical_package_id")
		die, _ := src.readInt(base + "/topology/die_id")
		sib, okS := src.readFile(base + "/topology/core_cpus_list")
		if !okS {
			sib, okS = src.readFile(base + "/topology/thread_siblings_list")
		}
		sibs, err := ParseCPUList(sib)
		if !okP || !okS || err != nil || !slices.Contains(sibs, c) {
			noTopo++
			sibs = []int{c}
		}
		key := fmt.Sprintf("%d/%s", pkg, FormatCPUList(sibs))
		k, seen := byKey[key]
		if !seen {
			k = len(t.Cores)
			byKey[key] = k
			t.Cores = append(t.Cores, Core{Package: max(int(pkg), 0), Die: max(int(die), 0), SMT: len(sibs), Part: part[c]})
			if capv, ok := src.readInt(base + "/cpu_capacity"); ok {
				t.Cores[k].Capacity = int(capv)
			}
		}
		t.Cores[k].CPUs = append(t.Cores[k].CPUs, c)
	}
	if noTopo > 0 {
		warns = append(warns, fmt.Sprintf("%d CPUs have no readable topology in %s: each is taken as its own core", noTopo, sysCPU))
	}
	switch {
	case pcOK && ecOK && len(pcore) > 0 && len(ecore) > 0:
		rankClasses(t.Cores, func(c *Core) int {
			if slices.Contains(pcore, c.CPUs[0]) {
				return 1
			}
			return 0
		})
		for k := range t.Cores {
			// by the list, not the rank: E-cores alone are all rank 0
			t.Cores[k].Part = map[bool]string{true: "cpu_core", false: "cpu_atom"}[slices.Contains(pcore, t.Cores[k].CPUs[0])]
		}
	case capacitiesValid(t.Cores, &warns) && distinct(t.Cores, func(c *Core) int { return c.Capacity }) > 1:
		rankClasses(t.Cores, func(c *Core) int { return c.Capacity })
	case distinct(t.Cores, func(c *Core) int { return armPartScore(c.Part) }) > 1:
		rankClasses(t.Cores, func(c *Core) int { return armPartScore(c.Part) })
	}
	return t, warns
}

// capacitiesValid reports whether every core has a cpu_capacity in
// Linux's range (1 to SCHED_CAPACITY_SCALE, 1024); one missing or garbage
// value would make its core a class of its own, so then none is used
// (with a warning when some were given).
func capacitiesValid(cores []Core, warns *[]string) bool {
	bad, some := 0, false
	for i := range cores {
		c := cores[i].Capacity
		some = some || c != 0
		if c < 1 || c > 1024 {
			bad++
		}
	}
	if bad > 0 && some {
		*warns = append(*warns, fmt.Sprintf("%d cores have no valid cpu_capacity (1 to 1024): core classes taken from the CPU part instead", bad))
	}
	return bad == 0
}

func distinct(cores []Core, f func(c *Core) int) int {
	seen := map[int]bool{}
	for i := range cores {
		seen[f(&cores[i])] = true
	}
	return len(seen)
}

// armPartScore ranks Arm core designs by their "CPU part" where Linux
// gives no cpu_capacity: the little in-order designs (Cortex-A35/A53/A55/
// A510/A520) below everything else; unknown parts count as big.
func armPartScore(part string) int {
	switch strings.ToLower(part) {
	case "0xd04", "0xd03", "0xd05", "0xd46", "0xd80":
		return 0
	case "":
		return 1
	}
	return 1
}

func cpuListFile(src *Source, name string) ([]int, bool) {
	v, ok := src.readFile(name)
	if !ok {
		return nil, false
	}
	cs, err := ParseCPUList(v)
	return cs, err == nil
}

// cpuinfoProc is one "processor" block of /proc/cpuinfo.
type cpuinfoProc struct {
	id   int
	part string
	// variant and revision complete the Arm MIDR ("0x4", "0")
	variant, revision string
}

func parseCPUInfo(text string) []cpuinfoProc {
	var out []cpuinfoProc
	for _, block := range strings.Split(text, "\n\n") {
		p := cpuinfoProc{id: -1}
		for _, line := range strings.Split(block, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "processor":
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 && n <= maxCPU {
					p.id = n
				}
			case "CPU part":
				p.part = strings.TrimSpace(v)
			case "CPU variant":
				p.variant = strings.TrimSpace(v)
			case "CPU revision":
				p.revision = strings.TrimSpace(v)
			}
		}
		if p.id >= 0 {
			out = append(out, p)
		}
	}
	return out
}

// usableNodes keeps the nodes that hold a usable CPU, their CPU lists cut
// to the usable ones (one node 0 when the OS lists none).
func usableNodes(nodes []Node, cpus []int) []Node {
	var out []Node
	for _, n := range nodes {
		cs := intersect(n.CPUs, cpus)
		if len(cs) > 0 {
			n.CPUs = cs
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []Node{{ID: 0, CPUs: slices.Clone(cpus)}}
		if len(nodes) == 1 {
			out[0].MemBytes = nodes[0].MemBytes
		}
	}
	return out
}

// readNUMA reads devices/system/node/node*/cpulist and meminfo.
func readNUMA(src *Source) ([]Node, error) {
	dir := "/sys/devices/system/node"
	var nodes []Node
	for _, name := range src.readDir(dir) {
		if !strings.HasPrefix(name, "node") {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(name, "node"))
		if err != nil {
			continue
		}
		n := Node{ID: id}
		v, ok := src.readFile(path.Join(dir, name, "cpulist"))
		if !ok {
			return nil, fmt.Errorf("%s: unreadable", path.Join(dir, name, "cpulist"))
		}
		if n.CPUs, err = ParseCPUList(v); err != nil {
			return nil, fmt.Errorf("%s: %v", path.Join(dir, name, "cpulist"), err)
		}
		if mv, ok := src.readFile(path.Join(dir, name, "meminfo")); ok {
			if total, _, err := parseMeminfo(mv); err == nil {
				n.MemBytes = total
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].ID < nodes[b].ID })
	return nodes, nil
}

// linuxCaches reads cpu*/cache/index*/{level,type,size,shared_cpu_list}
// for one CPU of each usable core and returns the distinct instances.
func linuxCaches(src *Source, t *Topology) ([]CacheInfo, []string) {
	seen := map[string]bool{}
	var out []CacheInfo
	var warns []string
	for _, core := range t.Cores {
		c := core.CPUs[0]
		dir := fmt.Sprintf("%s/cpu%d/cache", sysCPU, c)
		for _, idx := range src.readDir(dir) {
			if !strings.HasPrefix(idx, "index") {
				continue
			}
			base := path.Join(dir, idx)
			lv, ok1 := src.readInt(base + "/level")
			typ, ok2 := src.readFile(base + "/type")
			sz, ok3 := src.readFile(base + "/size")
			shared, _ := src.readFile(base + "/shared_cpu_list")
			if !ok1 || !ok2 || !ok3 {
				continue
			}
			size, err := parseCacheSize(sz)
			if err != nil || size <= 0 || size > maxCacheSize {
				warns = append(warns, fmt.Sprintf("%s/size: %q is not a cache size; ignored", base, sz))
				continue
			}
			cpus, err := ParseCPUList(shared)
			if err != nil || len(cpus) == 0 {
				cpus = []int{c}
			}
			key := fmt.Sprintf("%d/%s/%s", lv, typ, FormatCPUList(cpus))
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, CacheInfo{Level: int(lv), Type: strings.ToLower(typ), Size: size, CPUs: cpus, From: "sysfs"})
		}
	}
	sortCaches(out)
	return out, warns
}

// maxCacheSize bounds a believable cache (the largest L3s are about a
// gigabyte); a bigger figure is a corrupt file or a lying hypervisor.
const maxCacheSize = 16 << 30

// parseCacheSize reads sysfs sizes: "48K", "2048K", "32M", or bytes.
func parseCacheSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1<<40/mult {
		return 0, fmt.Errorf("bad cache size %q", s)
	}
	return n * mult, nil
}

// cgroupQuota finds the CPU bandwidth limit of this process's cgroup: v2
// cpu.max ("max 100000" or "400000 100000"), or v1 cpu.cfs_quota_us over
// cpu.cfs_period_us, at the process's cgroup and every ancestor up to the
// mount (a parent's limit binds the children); the smallest limit wins. A
// container sees its own cgroup as the mount's root, so the walk covers
// both a host's view and a container's.
func cgroupQuota(src *Source) (float64, string, error) {
	text, ok := src.readFile("/proc/self/cgroup")
	if !ok {
		return 0, "", nil
	}
	best, from := 0.0, ""
	consider := func(q float64, f string) {
		if q > 0 && (best == 0 || q < best) {
			best, from = q, f
		}
	}
	for _, line := range strings.Split(text, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, cg := parts[1], parts[2]
		if !strings.HasPrefix(cg, "/") {
			continue
		}
		switch {
		case parts[0] == "0" && ctrls == "": // v2
			for _, d := range ancestors("/sys/fs/cgroup", cg) {
				f := d + "/cpu.max"
				v, ok := src.readFile(f)
				if !ok {
					continue
				}
				q, err := parseCPUMax(v)
				if err != nil {
					return 0, "", fmt.Errorf("%s: %v", f, err)
				}
				consider(q, f)
			}
		case slices.Contains(strings.Split(ctrls, ","), "cpu"): // v1
			for _, mnt := range []string{"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct,cpu"} {
				for _, d := range ancestors(mnt, cg) {
					qv, ok1 := src.readInt(d + "/cpu.cfs_quota_us")
					pv, ok2 := src.readInt(d + "/cpu.cfs_period_us")
					if !ok1 || !ok2 || qv <= 0 {
						continue
					}
					if pv <= 0 {
						return 0, "", fmt.Errorf("%s/cpu.cfs_period_us: %d is not a period", d, pv)
					}
					consider(float64(qv)/float64(pv), d+"/cpu.cfs_quota_us")
				}
			}
		}
	}
	return best, from, nil
}

// cgroupMemAvailable is the memory this process's cgroups let it still
// allocate: at its cgroup and every ancestor that limits memory (v2
// memory.max; v1 memory.limit_in_bytes below 2⁶⁰), the limit less the
// usage (memory.current; memory.usage_in_bytes) plus the usage's
// reclaimable page cache (inactive_file in memory.stat; v1
// total_inactive_file), at least 0; the least of them. false where no
// cgroup limits memory: MemAvailable, which a container reads from the
// host, does not see a container's limit.
func cgroupMemAvailable(src *Source) (int64, bool) {
	text, ok := src.readFile("/proc/self/cgroup")
	if !ok {
		return 0, false
	}
	best, found := int64(0), false
	consider := func(limit, usage int64, stat, key string) {
		free := limit - usage
		if st, ok := src.readFile(stat); ok {
			for _, line := range strings.Split(st, "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == key {
					if v, err := strconv.ParseInt(f[1], 10, 64); err == nil && v > 0 {
						free += min(v, usage)
					}
				}
			}
		}
		free = max(free, 0)
		if !found || free < best {
			best, found = free, true
		}
	}
	for _, line := range strings.Split(text, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			for _, d := range ancestors("/sys/fs/cgroup", parts[2]) {
				limit, ok1 := src.readInt(d + "/memory.max") // "max": no limit, not an int
				usage, ok2 := src.readInt(d + "/memory.current")
				if ok1 && ok2 && limit > 0 {
					consider(limit, usage, d+"/memory.stat", "inactive_file")
				}
			}
		case slices.Contains(strings.Split(parts[1], ","), "memory"): // v1
			for _, d := range ancestors("/sys/fs/cgroup/memory", parts[2]) {
				limit, ok1 := src.readInt(d + "/memory.limit_in_bytes")
				usage, ok2 := src.readInt(d + "/memory.usage_in_bytes")
				if ok1 && ok2 && limit > 0 && limit < 1<<60 {
					consider(limit, usage, d+"/memory.stat", "total_inactive_file")
				}
			}
		}
	}
	return best, found
}

// ancestors lists mnt+cg, then each parent folder up to mnt itself (none
// for a path longer than PATH_MAX or deeper than 64 levels: no real cgroup
// is, and a corrupt one must not cost a file read per level).
func ancestors(mnt, cg string) []string {
	cg = path.Clean(cg)
	if len(cg) > 4096 || strings.Count(cg, "/") > 64 {
		return nil
	}
	var out []string
	for {
		out = append(out, path.Join(mnt, cg))
		if cg == "/" || cg == "." {
			return out
		}
		cg = path.Dir(cg)
	}
}

// parseCPUMax reads cgroup v2 cpu.max: "$MAX $PERIOD", MAX "max" for none.
func parseCPUMax(v string) (float64, error) {
	f := strings.Fields(v)
	if len(f) == 0 || len(f) > 2 {
		return 0, fmt.Errorf("%q is not \"$MAX $PERIOD\"", v)
	}
	if f[0] == "max" {
		return 0, nil
	}
	q, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || q <= 0 {
		return 0, fmt.Errorf("%q: bad quota", v)
	}
	period := int64(100000)
	if len(f) == 2 {
		if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
			return 0, fmt.Errorf("%q: bad period", v)
		}
	}
	return float64(q) / float64(period), nil
}

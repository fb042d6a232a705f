package cpu

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const m2ProDir = "testdata/machines/apple-m2-pro"

func loadM2Pro(t *testing.T) *Source {
	t.Helper()
	src, err := LoadCapture(m2ProDir)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func seq(lo, hi int) []int {
	var out []int
	for c := lo; c < hi; c++ {
		out = append(out, c)
	}
	return out
}

// TestDarwinAppleM2Pro detects the M2 Pro fixture: 8 performance cores
// (CPUs 4–11, two clusters of 4 sharing a 16 MiB L2) and 4 efficiency
// cores (CPUs 0–3, one 4 MiB L2), no SMT, no affinity, one node.
func TestDarwinAppleM2Pro(t *testing.T) {
	i := Describe(loadM2Pro(t))
	tp := &i.Topology
	if len(i.Warnings) > 0 {
		t.Errorf("warnings: %q", i.Warnings)
	}
	if tp.From != "sysctl" || !slices.Equal(tp.Online, seq(0, 12)) || !slices.Equal(tp.CPUs, seq(0, 12)) || tp.Affinity != nil {
		t.Errorf("from %q online %v cpus %v affinity %v", tp.From, tp.Online, tp.CPUs, tp.Affinity)
	}
	if i.Usable != 12 || i.LogicalCores != 12 || i.PhysicalCores != 12 || i.ThreadsPerCore != 1 || tp.SMT() {
		t.Errorf("usable %d logical %d physical %d threads/core %d", i.Usable, i.LogicalCores, i.PhysicalCores, i.ThreadsPerCore)
	}
	want := []ClassSummary{
		{Name: ClassPerformance, Rank: 0, Cores: 8, CPUs: 8, Part: "Performance"},
		{Name: ClassEfficiency, Rank: 1, Cores: 4, CPUs: 4, Part: "Efficiency"},
	}
	if !reflect.DeepEqual(tp.Classes, want) || !tp.Hybrid() {
		t.Errorf("classes %+v, want %+v", tp.Classes, want)
	}
	if p, e := tp.CPUsOfRank(0), tp.CPUsOfRank(1); !slices.Equal(p, seq(4, 12)) || !slices.Equal(e, seq(0, 4)) {
		t.Errorf("performance CPUs %v, efficiency CPUs %v", p, e)
	}
	for _, k := range tp.Cores {
		if len(k.CPUs) != 1 || k.SMT != 1 || k.Node != 0 || k.Package != 0 {
			t.Errorf("core %+v", k)
		}
	}
	if tp.Packages != 1 || tp.Dies != 1 {
		t.Errorf("packages %d dies %d", tp.Packages, tp.Dies)
	}
	if got := tp.DefaultThreads(); !slices.Equal(got, []int{1, 2, 4, 8, 12}) {
		t.Errorf("DefaultThreads = %v", got)
	}
	if got := tp.Order(false, false, -1); !slices.Equal(got, append(seq(4, 12), seq(0, 4)...)) {
		t.Errorf("Order(false, false, -1) = %v", got)
	}
	if got := tp.Order(false, false, 0); !slices.Equal(got, seq(4, 12)) {
		t.Errorf("Order(false, false, 0) = %v", got)
	}

	// caches: an L1d and L1i per core, an L2 per cluster, no L3
	count := map[string]int{}
	for _, c := range i.Caches {
		count[c.Type+string(rune('0'+c.Level))]++
		if c.From != "sysctl" {
			t.Errorf("cache %+v not from sysctl", c)
		}
	}
	if !maps.Equal(count, map[string]int{"data1": 12, "instruction1": 12, "unified2": 3}) {
		t.Errorf("cache instances %v", count)
	}
	l2 := map[string]int64{}
	for _, c := range i.Caches {
		if c.Level == 2 {
			l2[FormatCPUList(c.CPUs)] = c.Size
		}
		if c.Level == 1 && c.Type == "data" && c.CPUs[0] >= 4 && c.Size != 128<<10 {
			t.Errorf("P-core L1d %+v", c)
		}
		if c.Level == 1 && c.Type == "data" && c.CPUs[0] < 4 && c.Size != 64<<10 {
			t.Errorf("E-core L1d %+v", c)
		}
	}
	if !maps.Equal(l2, map[string]int64{"0-3": 4 << 20, "4-7": 16 << 20, "8-11": 16 << 20}) {
		t.Errorf("L2 instances %v", l2)
	}
	wantCache := Cache{L1D: 128 << 10, L1I: 192 << 10, L2: 4 << 20, L3: -1,
		From: map[string]string{"l1d": "sysctl", "l1i": "sysctl", "l2": "sysctl"}}
	if !reflect.DeepEqual(i.Cache, wantCache) {
		t.Errorf("cache summary %+v, want %+v", i.Cache, wantCache)
	}

	if want := NewSet(ASIMD, ASIMDDP, I8MM, BF16); i.Hardware != want || i.Effective != want {
		t.Errorf("hardware %v effective %v, want %v", i.Hardware, i.Effective, want)
	}
	if i.MemBytes != 16<<30 || len(i.NUMA) != 1 || !slices.Equal(i.NUMA[0].CPUs, seq(0, 12)) || i.NUMA[0].MemBytes != 16<<30 {
		t.Errorf("memory %d, NUMA %+v", i.MemBytes, i.NUMA)
	}
	if i.CacheLine != 128 || i.Brand != "Apple M2 Pro" || i.NominalHz != 0 {
		t.Errorf("cache line %d brand %q nominal Hz %d", i.CacheLine, i.Brand, i.NominalHz)
	}
}

// TestDarwinSysctlFeatures: on arm64 the hw.optional sysctls add what CPUID
// missed (and the brand), on amd64 they are not read.
func TestDarwinSysctlFeatures(t *testing.T) {
	src := loadM2Pro(t)
	src.CPUID.Features, src.CPUID.Brand = nil, ""
	src.Sysctl = maps.Clone(src.Sysctl)
	src.Sysctl["hw.optional.arm.FEAT_SME"] = "1"
	i := DetectFrom(src)
	if want := NewSet(ASIMD, ASIMDDP, I8MM, BF16, SME); i.Hardware != want {
		t.Errorf("arm64 hardware %v, want %v", i.Hardware, want)
	}
	if i.Brand != "Apple M2 Pro" {
		t.Errorf("brand %q", i.Brand)
	}
	src.GOARCH = "amd64"
	src.CPUID.Features = []string{"avx2", "fma"}
	if i := DetectFrom(src); i.Hardware != NewSet(AVX2, FMA) {
		t.Errorf("amd64 hardware %v, want avx2,fma only", i.Hardware)
	}
}

// TestDarwinMalformedSysctl: a bad value is skipped with a warning naming
// its key; a bad per-level count drops the performance levels for the
// hw.* counts; no readable count at all leaves DetectFrom's CPUID fallback.
func TestDarwinMalformedSysctl(t *testing.T) {
	src := loadM2Pro(t)
	src.Sysctl = maps.Clone(src.Sysctl)
	src.Sysctl["hw.perflevel0.physicalcpu"] = "eight"
	src.Sysctl["hw.memsize"] = "-5"
	src.Sysctl["hw.perflevel1.l1dcachesize"] = "64K"
	i := DetectFrom(src)
	for _, key := range []string{"hw.perflevel0.physicalcpu", "hw.memsize"} {
		if !slices.ContainsFunc(i.Warnings, func(w string) bool { return strings.Contains(w, key) }) {
			t.Errorf("no warning names %s: %q", key, i.Warnings)
		}
	}
	tp := &i.Topology
	if tp.From != "sysctl" || i.Usable != 12 || len(tp.Cores) != 12 || tp.Hybrid() {
		t.Errorf("fallback to hw.logicalcpu: from %q usable %d cores %d hybrid %v", tp.From, i.Usable, len(tp.Cores), tp.Hybrid())
	}
	if i.MemBytes != 0 {
		t.Errorf("memory %d from a malformed hw.memsize", i.MemBytes)
	}
	// flat caches: hw.l1dcachesize per core, hw.l2cachesize over the whole
	// machine (arm64 without cpusperl2)
	if i.Cache.L1D != 64<<10 || i.Cache.L2 != 4<<20/12 {
		t.Errorf("flat cache summary %+v", i.Cache)
	}

	// a malformed per-level cache size alone keeps the levels
	src = loadM2Pro(t)
	src.Sysctl = maps.Clone(src.Sysctl)
	src.Sysctl["hw.perflevel1.l1dcachesize"] = "64K"
	i = DetectFrom(src)
	if !i.Topology.Hybrid() || len(i.Warnings) != 1 || !strings.Contains(i.Warnings[0], "hw.perflevel1.l1dcachesize") {
		t.Errorf("hybrid %v warnings %q", i.Topology.Hybrid(), i.Warnings)
	}

	for _, k := range []string{"hw.nperflevels", "hw.logicalcpu", "hw.activecpu", "hw.ncpu"} {
		src.Sysctl[k] = "x"
	}
	i = DetectFrom(src)
	if i.Topology.From != "cpuid" || i.Usable != 12 {
		t.Errorf("no counts: from %q usable %d", i.Topology.From, i.Usable)
	}
}

// TestDarwinIntelMac reads an Intel Mac (no performance levels): SMT
// siblings from hw.logicalcpu/hw.physicalcpu, an L2 per core, one L3, the
// nominal clock; CPUID's features untouched. Values as an i7-9750H
// MacBook Pro reports them (6 cores, 12 threads, 256 KiB L2, 12 MiB L3).
func TestDarwinIntelMac(t *testing.T) {
	src := &Source{GOOS: "darwin", GOARCH: "amd64",
		CPUID: CPUIDFacts{Vendor: "GenuineIntel", Brand: "Intel(R) Core(TM) i7-9750H CPU @ 2.60GHz", LogicalCores: 12, Features: []string{"avx2", "fma"}},
		Env:   map[string]string{"GOMAXPROCS": "8"},
	}
	var err error
	src.Sysctl, err = ParseSysctl(`hw.ncpu: 12
hw.physicalcpu: 6
hw.logicalcpu: 12
hw.l1icachesize: 32768
hw.l1dcachesize: 32768
hw.l2cachesize: 262144
hw.l3cachesize: 12582912
hw.cachelinesize: 64
hw.cpufrequency: 2600000000
hw.memsize: 17179869184
hw.optional.neon: 1
machdep.cpu.brand_string: Intel(R) Core(TM) i7-9750H CPU @ 2.60GHz
`)
	if err != nil {
		t.Fatal(err)
	}
	i := DetectFrom(src)
	tp := &i.Topology
	if len(i.Warnings) > 0 {
		t.Errorf("warnings %q", i.Warnings)
	}
	if len(tp.Cores) != 6 || !tp.SMT() || tp.Hybrid() || i.ThreadsPerCore != 2 || tp.Usable != 8 || tp.GOMAXPROCS != 8 {
		t.Errorf("cores %d smt %v hybrid %v threads/core %d usable %d", len(tp.Cores), tp.SMT(), tp.Hybrid(), i.ThreadsPerCore, tp.Usable)
	}
	if !slices.Equal(tp.Cores[1].CPUs, []int{2, 3}) || tp.Cores[1].SMT != 2 {
		t.Errorf("core 1 %+v", tp.Cores[1])
	}
	if got := tp.Order(false, false, -1); !slices.Equal(got[:6], []int{0, 2, 4, 6, 8, 10}) {
		t.Errorf("Order = %v", got)
	}
	want := Cache{L1D: 32 << 10, L1I: 32 << 10, L2: 256 << 10, L3: 12 << 20, L3Total: 12 << 20,
		From: map[string]string{"l1d": "sysctl", "l1i": "sysctl", "l2": "sysctl", "l3": "sysctl"}}
	if !reflect.DeepEqual(i.Cache, want) {
		t.Errorf("cache %+v, want %+v", i.Cache, want)
	}
	if i.NominalHz != 2600000000 || i.CacheLine != 64 || i.Hardware != NewSet(AVX2, FMA) {
		t.Errorf("nominal %d line %d hardware %v", i.NominalHz, i.CacheLine, i.Hardware)
	}
}

// FuzzDarwinSysctl: no sysctl text makes detection panic or report an
// impossible topology.
func FuzzDarwinSysctl(f *testing.F) {
	src, err := LoadCapture(m2ProDir)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(FormatSysctl(src.Sysctl))
	f.Add("hw.nperflevels: 8\nhw.perflevel7.physicalcpu: 3\nhw.perflevel7.logicalcpu: 7\n")
	f.Add("hw.logicalcpu: 16384\nhw.physicalcpu: 1\nhw.l2cachesize: 1\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseSysctl(text)
		if err != nil {
			return
		}
		// darwinDetect alone: DetectFrom's cache summary is quadratic in
		// the CPU count, too slow for fuzzing at 16384 CPUs
		var i Info
		darwinDetect(&Source{GOOS: "darwin", GOARCH: "arm64", Sysctl: m}, &i)
		if len(i.Topology.Cores) > 0 {
			i.Usable = i.Topology.Usable
			checkTopology(t, &i)
		}
	})
}

// checkTopology checks what holds for any detected machine.
func checkTopology(t *testing.T, i *Info) {
	t.Helper()
	tp := &i.Topology
	if i.Usable < 1 || i.Usable > len(tp.CPUs) || len(tp.Cores) == 0 {
		t.Fatalf("usable %d of %d CPUs, %d cores", i.Usable, len(tp.CPUs), len(tp.Cores))
	}
	usable := map[int]bool{}
	for _, c := range tp.CPUs {
		usable[c] = true
	}
	seen := map[int]bool{}
	for _, k := range tp.Cores {
		if len(k.CPUs) == 0 {
			t.Fatalf("empty core %+v", k)
		}
		for _, c := range k.CPUs {
			if seen[c] || !usable[c] {
				t.Fatalf("CPU %d twice or not usable", c)
			}
			seen[c] = true
		}
	}
	if len(seen) != len(tp.CPUs) {
		t.Fatalf("cores hold %d CPUs, %d usable", len(seen), len(tp.CPUs))
	}
	for _, c := range i.Caches {
		if len(c.CPUs) == 0 || c.Size <= 0 {
			t.Fatalf("cache %+v", c)
		}
	}
}

package cpu

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var updateGLPI = flag.Bool("glpi.update", false, "rewrite the glpi.bin of the Windows fixtures from the encoder in windows_test.go")

// ---- an encoder of GetLogicalProcessorInformationEx buffers ---------------
//
// It writes the documented 64-bit layouts (winnt.h) independently of the
// parser's constants: field by field, with the reserved bytes as padding.

// gmask is one GROUP_AFFINITY: a group and its 64-bit mask.
type gmask struct {
	group uint16
	mask  uint64
}

// cpuMask is the GROUP_AFFINITY of the given CPUs (all in one group).
func cpuMask(group uint16, cpus ...int) gmask {
	m := gmask{group: group}
	for _, c := range cpus {
		m.mask |= 1 << (c % 64)
	}
	return m
}

func rangeMask(group uint16, lo, hi int) gmask { return cpuMask(group, seq(lo, hi)...) }

type enc struct{ bytes.Buffer }

func (e *enc) u8(v byte)        { e.WriteByte(v) }
func (e *enc) u16(v uint16)     { binary.Write(&e.Buffer, binary.LittleEndian, v) }
func (e *enc) u32(v uint32)     { binary.Write(&e.Buffer, binary.LittleEndian, v) }
func (e *enc) u64(v uint64)     { binary.Write(&e.Buffer, binary.LittleEndian, v) }
func (e *enc) pad(n int)        { e.Write(make([]byte, n)) }
func (e *enc) affinity(m gmask) { e.u64(m.mask); e.u16(m.group); e.pad(6) }
func (e *enc) affinities(m []gmask) {
	for _, x := range m {
		e.affinity(x)
	}
}

// record wraps a union body in {Relationship, Size}.
func record(rel uint32, body []byte) []byte {
	var e enc
	e.u32(rel)
	e.u32(uint32(8 + len(body)))
	e.Write(body)
	return e.Bytes()
}

// procRec is a PROCESSOR_RELATIONSHIP record (core, package, die, module).
func procRec(rel uint32, flags, class byte, masks ...gmask) []byte {
	var e enc
	e.u8(flags)
	e.u8(class)
	e.pad(20)
	e.u16(uint16(len(masks)))
	e.affinities(masks)
	return record(rel, e.Bytes())
}

// coreRec is a RelationProcessorCore record; LTP_PC_SMT is set from the
// mask.
func coreRec(class byte, m gmask) []byte {
	flags := byte(0)
	if m.mask&(m.mask-1) != 0 {
		flags = 1
	}
	return procRec(0, flags, class, m)
}

// cacheRec is a CACHE_RELATIONSHIP record; oldLayout writes GroupCount 0
// (Windows before 10 20H2: the field was reserved, one mask follows).
func cacheRec(level, assoc byte, size uint32, typ uint32, oldLayout bool, masks ...gmask) []byte {
	var e enc
	e.u8(level)
	e.u8(assoc)
	e.u16(64)
	e.u32(size)
	e.u32(typ)
	e.pad(18)
	if oldLayout {
		e.u16(0)
	} else {
		e.u16(uint16(len(masks)))
	}
	e.affinities(masks)
	return record(2, e.Bytes())
}

// numaRec is a NUMA_NODE_RELATIONSHIP record (GroupCount as cacheRec).
func numaRec(node uint32, oldLayout bool, masks ...gmask) []byte {
	var e enc
	e.u32(node)
	e.pad(18)
	if oldLayout {
		e.u16(0)
	} else {
		e.u16(uint16(len(masks)))
	}
	e.affinities(masks)
	return record(1, e.Bytes())
}

// groupRec is a GROUP_RELATIONSHIP record: one PROCESSOR_GROUP_INFO per
// active mask.
func groupRec(active ...uint64) []byte {
	var e enc
	e.u16(uint16(len(active)))
	e.u16(uint16(len(active)))
	e.pad(20)
	for _, m := range active {
		n := byte(0)
		for x := m; x != 0; x &= x - 1 {
			n++
		}
		e.u8(n)
		e.u8(n)
		e.pad(38)
		e.u64(m)
	}
	return record(4, e.Bytes())
}

const (
	cacheUnified     = 0
	cacheInstruction = 1
	cacheData        = 2
	cacheTrace       = 3
)

// i71260pGLPI is an Intel Core i7-1260P (Alder Lake-P) as Windows 11 lists
// it: 4 P-cores with SMT (CPUs 0–7, EfficiencyClass 1; 48 KiB L1d, 32 KiB
// L1i, 1.25 MiB L2 each), 8 E-cores (CPUs 8–15, EfficiencyClass 0; 32 KiB
// L1d, 64 KiB L1i; a 2 MiB L2 per 4-core module), an 18 MiB L3, one
// package, one NUMA node, one group; die and module records included.
// Cache sizes are Intel's published ones for the part.
func i71260pGLPI() []byte {
	var b []byte
	for k := 0; k < 4; k++ {
		m := cpuMask(0, 2*k, 2*k+1)
		b = append(b, coreRec(1, m)...)
		b = append(b, cacheRec(1, 12, 48<<10, cacheData, false, m)...)
		b = append(b, cacheRec(1, 8, 32<<10, cacheInstruction, false, m)...)
		b = append(b, cacheRec(2, 10, 1280<<10, cacheUnified, false, m)...)
	}
	for k := 0; k < 8; k++ {
		m := cpuMask(0, 8+k)
		b = append(b, coreRec(0, m)...)
		b = append(b, cacheRec(1, 8, 32<<10, cacheData, false, m)...)
		b = append(b, cacheRec(1, 8, 64<<10, cacheInstruction, false, m)...)
	}
	for k := 0; k < 2; k++ {
		m := rangeMask(0, 8+4*k, 12+4*k)
		b = append(b, cacheRec(2, 16, 2<<20, cacheUnified, false, m)...)
		b = append(b, procRec(7, 0, 0, m)...) // RelationProcessorModule
	}
	all := rangeMask(0, 0, 16)
	b = append(b, cacheRec(3, 12, 18<<20, cacheUnified, false, all)...)
	b = append(b, procRec(3, 0, 0, all)...) // package
	b = append(b, procRec(5, 0, 0, all)...) // RelationProcessorDie
	b = append(b, numaRec(0, false, all)...)
	b = append(b, groupRec(all.mask)...)
	return b
}

// xeon2GroupGLPI is a two-socket server with 2 × 24 cores × 2 threads
// (Xeon Gold 6342: 48 KiB L1d, 32 KiB L1i, 1.25 MiB L2 per core, 36 MiB
// L3 per socket): 96 CPUs in two processor groups of 48, one per socket
// and NUMA node, so group 1's CPUs are 64–111. oldLayout writes the cache
// and NUMA records as Windows before 10 20H2 did.
func xeon2GroupGLPI(oldLayout bool) []byte {
	var b []byte
	for g := uint16(0); g < 2; g++ {
		for k := 0; k < 24; k++ {
			m := cpuMask(g, 2*k, 2*k+1)
			b = append(b, coreRec(0, m)...)
			b = append(b, cacheRec(1, 12, 48<<10, cacheData, oldLayout, m)...)
			b = append(b, cacheRec(1, 8, 32<<10, cacheInstruction, oldLayout, m)...)
			b = append(b, cacheRec(2, 20, 1280<<10, cacheUnified, oldLayout, m)...)
		}
		all := rangeMask(g, 0, 48)
		b = append(b, cacheRec(3, 12, 36<<20, cacheUnified, oldLayout, all)...)
		b = append(b, cacheRec(1, 8, 16<<10, cacheTrace, oldLayout, all)...) // ignored
		b = append(b, procRec(3, 0, 0, all)...)
		b = append(b, numaRec(uint32(g), oldLayout, all)...)
	}
	b = append(b, groupRec(1<<48-1, 1<<48-1)...)
	return b
}

const windowsFixture = "testdata/machines/windows-i7-1260p"

// TestWindowsFixtureBytes keeps the committed glpi.bin equal to the
// encoder's (go test -run TestWindowsFixtureBytes -args -glpi.update
// rewrites it).
func TestWindowsFixtureBytes(t *testing.T) {
	p := filepath.Join(windowsFixture, captureGLPI)
	want := i71260pGLPI()
	if *updateGLPI {
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from i71260pGLPI(); rerun with -args -glpi.update", p)
	}
}

// TestWindowsHybridLaptop detects the i7-1260P fixture.
func TestWindowsHybridLaptop(t *testing.T) {
	src, err := LoadCapture(windowsFixture)
	if err != nil {
		t.Fatal(err)
	}
	i := Describe(src)
	tp := &i.Topology
	if len(i.Warnings) > 0 {
		t.Errorf("warnings %q", i.Warnings)
	}
	if tp.From != "windows" || !slices.Equal(tp.Online, seq(0, 16)) || !slices.Equal(tp.CPUs, seq(0, 16)) {
		t.Errorf("from %q online %v cpus %v", tp.From, tp.Online, tp.CPUs)
	}
	if i.Usable != 16 || i.LogicalCores != 16 || i.PhysicalCores != 12 || i.ThreadsPerCore != 2 || !tp.SMT() {
		t.Errorf("usable %d logical %d physical %d threads/core %d", i.Usable, i.LogicalCores, i.PhysicalCores, i.ThreadsPerCore)
	}
	want := []ClassSummary{
		{Name: ClassPerformance, Rank: 0, Cores: 4, CPUs: 8, Part: "class 1"},
		{Name: ClassEfficiency, Rank: 1, Cores: 8, CPUs: 8, Part: "class 0"},
	}
	if !reflect.DeepEqual(tp.Classes, want) {
		t.Errorf("classes %+v, want %+v", tp.Classes, want)
	}
	if !slices.Equal(tp.CPUsOfRank(0), seq(0, 8)) || !slices.Equal(tp.CPUsOfRank(1), seq(8, 16)) {
		t.Errorf("P CPUs %v, E CPUs %v", tp.CPUsOfRank(0), tp.CPUsOfRank(1))
	}
	if k := tp.Cores[1]; !slices.Equal(k.CPUs, []int{2, 3}) || k.SMT != 2 || k.Rank != 0 {
		t.Errorf("core 1 %+v", k)
	}
	if k := tp.Cores[4]; !slices.Equal(k.CPUs, []int{8}) || k.SMT != 1 || k.Class != ClassEfficiency {
		t.Errorf("core 4 %+v", k)
	}
	if tp.Packages != 1 || len(i.NUMA) != 1 || !slices.Equal(i.NUMA[0].CPUs, seq(0, 16)) {
		t.Errorf("packages %d NUMA %+v", tp.Packages, i.NUMA)
	}
	if got := tp.DefaultThreads(); !slices.Equal(got, []int{1, 2, 4, 8, 12, 16}) {
		t.Errorf("DefaultThreads = %v", got)
	}
	if got, want := tp.Order(false, false, -1), []int{0, 2, 4, 6, 8, 9, 10, 11, 12, 13, 14, 15, 1, 3, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("Order(false, false, -1) = %v, want %v", got, want)
	}
	if got, want := tp.Order(false, false, 0), []int{0, 2, 4, 6, 1, 3, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("Order(false, false, 0) = %v, want %v", got, want)
	}
	if got := tp.Order(true, false, -1); !slices.Equal(got, seq(0, 16)) {
		t.Errorf("Order(true, false, -1) = %v", got)
	}

	count := map[string]int{}
	l2 := map[string]int64{}
	for _, c := range i.Caches {
		count[c.Type+string(rune('0'+c.Level))]++
		if c.Level == 2 {
			l2[FormatCPUList(c.CPUs)] = c.Size
		}
	}
	if !maps.Equal(count, map[string]int{"data1": 12, "instruction1": 12, "unified2": 6, "unified3": 1}) {
		t.Errorf("cache instances %v", count)
	}
	if l2["0-1"] != 1280<<10 || l2["8-11"] != 2<<20 || l2["12-15"] != 2<<20 {
		t.Errorf("L2 instances %v", l2)
	}
	wantCache := Cache{L1D: 48 << 10, L1I: 32 << 10, L2: 1280 << 10, L3: 18 << 20, L3Total: 18 << 20,
		From: map[string]string{"l1d": "windows", "l1i": "windows", "l2": "windows", "l3": "windows"}}
	if !reflect.DeepEqual(i.Cache, wantCache) {
		t.Errorf("cache summary %+v, want %+v", i.Cache, wantCache)
	}
	if i.Hardware != NewSet(AVX2, FMA, AVXVNNI) {
		t.Errorf("hardware %v", i.Hardware)
	}

	// a process limited to CPUs 0, 1 and 8: one P-core (both threads) and
	// one E-core; the P-core still has 2 hardware threads
	src.Affinity = []int{0, 1, 8}
	i = Describe(src)
	tp = &i.Topology
	if !slices.Equal(tp.CPUs, []int{0, 1, 8}) || len(tp.Cores) != 2 || tp.Cores[0].SMT != 2 || i.Usable != 3 || !tp.Hybrid() {
		t.Errorf("affinity 0,1,8: cpus %v cores %+v usable %d", tp.CPUs, tp.Cores, i.Usable)
	}
	if got := tp.Order(false, false, -1); !slices.Equal(got, []int{0, 8, 1}) {
		t.Errorf("affinity 0,1,8: Order = %v", got)
	}

	// E-cores only: uniform, but the parts still say which class
	src.Affinity = seq(8, 16)
	i = Describe(src)
	tp = &i.Topology
	if tp.Hybrid() || i.Usable != 8 || tp.Cores[0].Part != "class 0" || tp.Cores[0].Class != "" || tp.Cores[0].Rank != 0 {
		t.Errorf("E-cores only: hybrid %v usable %d core 0 %+v", tp.Hybrid(), i.Usable, tp.Cores[0])
	}
	if i.Cache.L1D != 32<<10 || i.Cache.L2 != 512<<10 {
		t.Errorf("E-cores only: cache %+v (want the E-core L1d, 2M L2 / 4 cores)", i.Cache)
	}

	// the group record's active mask says which processors are online:
	// here the last E-module's CPUs 14 and 15 are not
	b := i71260pGLPI()
	grp := groupRec(1<<16 - 1)
	b = append(b[:len(b)-len(grp)], groupRec(1<<14-1)...)
	i = Describe(&Source{GOOS: "windows", GOARCH: "amd64", GLPI: b})
	if tp := &i.Topology; !slices.Equal(tp.Online, seq(0, 14)) || i.Usable != 14 || len(tp.Cores) != 10 || len(i.Warnings) > 0 {
		t.Errorf("14 active: online %v usable %d cores %d warnings %q", tp.Online, i.Usable, len(tp.Cores), i.Warnings)
	}
}

// TestWindowsTwoGroups detects 96 CPUs in two processor groups, in the
// current layout and in the pre-20H2 one (GroupCount 0 in cache and NUMA
// records), and a process confined to group 0.
func TestWindowsTwoGroups(t *testing.T) {
	online := append(seq(0, 48), seq(64, 112)...)
	for _, old := range []bool{false, true} {
		src := &Source{GOOS: "windows", GOARCH: "amd64", GLPI: xeon2GroupGLPI(old),
			CPUID: CPUIDFacts{Vendor: "GenuineIntel", LogicalCores: 96, CacheLine: 64}}
		i := Describe(src)
		tp := &i.Topology
		if len(i.Warnings) > 0 {
			t.Errorf("old=%v: warnings %q", old, i.Warnings)
		}
		if tp.From != "windows" || !slices.Equal(tp.Online, online) || i.Usable != 96 || i.PhysicalCores != 48 || i.ThreadsPerCore != 2 {
			t.Errorf("old=%v: from %q online %v usable %d cores %d", old, tp.From, FormatCPUList(tp.Online), i.Usable, i.PhysicalCores)
		}
		if tp.Hybrid() || tp.Packages != 2 || tp.Cores[30].Package != 1 || tp.Cores[30].Node != 1 || tp.Cores[30].Part != "" {
			t.Errorf("old=%v: hybrid %v packages %d core 30 %+v", old, tp.Hybrid(), tp.Packages, tp.Cores[30])
		}
		if len(i.NUMA) != 2 || !slices.Equal(i.NUMA[0].CPUs, seq(0, 48)) || i.NUMA[1].ID != 1 || !slices.Equal(i.NUMA[1].CPUs, seq(64, 112)) {
			t.Errorf("old=%v: NUMA %+v", old, i.NUMA)
		}
		order := tp.Order(false, false, -1)
		var firsts []int
		for c := 0; c < 48; c += 2 {
			firsts = append(firsts, c)
		}
		for c := 64; c < 112; c += 2 {
			firsts = append(firsts, c)
		}
		if !slices.Equal(order[:48], firsts) || order[48] != 1 {
			t.Errorf("old=%v: Order(false, false, -1) = %v", old, order)
		}
		if spread := tp.Order(false, true, -1); !slices.Equal(spread[:4], []int{0, 64, 2, 66}) {
			t.Errorf("old=%v: Order(false, true, -1) starts %v", old, spread[:4])
		}
		want := Cache{L1D: 48 << 10, L1I: 32 << 10, L2: 1280 << 10, L3: 36 << 20, L3Total: 72 << 20,
			From: map[string]string{"l1d": "windows", "l1i": "windows", "l2": "windows", "l3": "windows"}}
		if !reflect.DeepEqual(i.Cache, want) {
			t.Errorf("old=%v: cache %+v, want %+v", old, i.Cache, want)
		}
		for _, c := range i.Caches {
			if c.Level == 3 && !slices.Equal(c.CPUs, seq(0, 48)) && !slices.Equal(c.CPUs, seq(64, 112)) {
				t.Errorf("old=%v: L3 over %s", old, FormatCPUList(c.CPUs))
			}
		}
		if got := tp.DefaultThreads(); !slices.Equal(got, []int{1, 2, 4, 8, 16, 32, 48, 64, 96}) {
			t.Errorf("old=%v: DefaultThreads = %v", old, got)
		}

		// a process confined to group 0 (GetProcessAffinityMask's mask)
		src.Affinity = seq(0, 48)
		i = Describe(src)
		if i.Usable != 48 || len(i.NUMA) != 1 || i.NUMA[0].ID != 0 || i.Topology.Packages != 1 {
			t.Errorf("old=%v: group 0 only: usable %d NUMA %+v", old, i.Usable, i.NUMA)
		}
	}
}

// TestWindowsMalformedGLPI: every buffer detection cannot walk is refused
// with a warning naming glpi.bin, the offset and the problem, and CPUID's
// fallback is used.
func TestWindowsMalformedGLPI(t *testing.T) {
	good := i71260pGLPI()
	firstSize := int(binary.LittleEndian.Uint32(good[4:]))
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	put16 := func(b []byte, at int, v uint16) []byte { binary.LittleEndian.PutUint16(b[at:], v); return b }
	put32 := func(b []byte, at int, v uint32) []byte { binary.LittleEndian.PutUint32(b[at:], v); return b }
	cases := []struct {
		name string
		buf  []byte
		want string
	}{
		{"truncated header", append(slices.Clone(good), 1, 2, 3, 4, 5), fmt.Sprintf("offset %d: truncated record header (5 bytes left)", len(good))},
		{"size 0", edit(func(b []byte) []byte { return put32(b, 4, 0) }), "offset 0: record size 0 is below"},
		{"size 7", edit(func(b []byte) []byte { return put32(b, firstSize+4, 7) }), "offset 48: record size 7 is below"},
		{"size past end", edit(func(b []byte) []byte { return put32(b, 4, 1<<31) }), "offset 0: record size 2147483648 runs past the end"},
		{"cut mid-record", good[:len(good)-10], "runs past the end of the buffer"},
		{"core shorter than its structure", record(0, make([]byte, 20)), "offset 0: relationship 0: record of 28 bytes is shorter than its 32-byte structure"},
		{"GroupCount does not fit", edit(func(b []byte) []byte { return put16(b, 8+22, 5) }), "offset 0: relationship 0: GroupCount 5 needs 112 bytes, the record has 48"},
		{"GroupCount 0 on a core", edit(func(b []byte) []byte { return put16(b, 8+22, 0) }), "offset 0: relationship 0: GroupCount 0"},
		{"cache GroupCount does not fit", edit(func(b []byte) []byte { return put16(b, firstSize+8+30, 9) }), "offset 48: relationship 2: GroupCount 9 needs"},
		{"group out of range", edit(func(b []byte) []byte { return put16(b, 8+24+8, 300) }), "processor group 300 is above 255"},
		{"empty mask", edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[8+24:], 0); return b }), "offset 0: relationship 0: empty processor mask"},
		{"ActiveGroupCount does not fit", append(slices.Clone(good), record(4, append([]byte{2, 0, 2, 0}, make([]byte, 20+48)...))...), fmt.Sprintf("offset %d: relationship 4: ActiveGroupCount 2 needs 128 bytes, the record has 80", len(good))},
		{"a CPU in two cores", append(slices.Clone(good), coreRec(0, cpuMask(0, 3))...), "CPU 3 is in cores 1 and 12"},
		{"no cores", groupRec(0xffff), "no processor core records"},
	}
	for _, c := range cases {
		src := &Source{GOOS: "windows", GOARCH: "amd64", GLPI: c.buf, CPUID: CPUIDFacts{LogicalCores: 16, ThreadsPerCore: 2}}
		i := DetectFrom(src)
		if !slices.ContainsFunc(i.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "glpi.bin") && strings.Contains(w, c.want)
		}) {
			t.Errorf("%s: no warning with %q: %q", c.name, c.want, i.Warnings)
		}
		if i.Topology.From != "cpuid" || i.Usable != 16 {
			t.Errorf("%s: from %q usable %d, want the CPUID fallback", c.name, i.Topology.From, i.Usable)
		}
	}

	// relationships detection does not know are skipped by their size
	src := &Source{GOOS: "windows", GOARCH: "amd64", GLPI: append(record(42, []byte{1, 2, 3}), good...)}
	if i := DetectFrom(src); i.Topology.From != "windows" || i.Usable != 16 || len(i.Warnings) > 0 {
		t.Errorf("unknown relationship: from %q usable %d warnings %q", i.Topology.From, i.Usable, i.Warnings)
	}
}

// FuzzWindowsGLPI: no buffer makes detection panic, loop, report an
// impossible topology, or refuse it silently.
func FuzzWindowsGLPI(f *testing.F) {
	f.Add(i71260pGLPI())
	f.Add(xeon2GroupGLPI(false))
	f.Add(xeon2GroupGLPI(true))
	f.Add(i71260pGLPI()[:100])
	f.Add(record(0, make([]byte, 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		// windowsDetect alone (DetectFrom's cache summary is quadratic in
		// the CPU count); the unit tests cover DetectFrom's fallback
		var i Info
		windowsDetect(&Source{GOOS: "windows", GOARCH: "amd64", GLPI: b}, &i)
		switch {
		case len(i.Topology.Cores) > 0:
			i.Usable = i.Topology.Usable
			checkTopology(t, &i)
		case len(b) > 0 && len(i.Warnings) == 0:
			t.Fatal("buffer refused without a warning")
		}
	})
}

// Package cpu detects the processor ktune runs on: vendor and model, the
// features kernel variants need, caches, cores, NUMA nodes and memory. It is
// the only importer of klauspost/cpuid.
//
// Everything downstream sees only the effective feature set: the hardware's
// features, less AMX where Linux does not grant its permission, less what the
// user masked with KTUNE_MAX_ISA, KTUNE_DISABLE, the --disable-isa flag
// (SetMask) or, in tests, Disable. The fingerprint covers the effective set,
// so a masked run is a different machine.
package cpu

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Cache sizes in bytes: per core for L1 and L2 (a cluster-shared L2
// divided by its cores), one shared L3 instance; -1 is unknown. From says
// where each size came from ("sysfs", "sysctl", "windows", "cpuid", or
// "measured" once roofline took it from its bandwidth plateaus), by key
// "l1d", "l1i", "l2", "l3".
type Cache struct {
	L1D int64 `json:"l1d"`
	L1I int64 `json:"l1i"`
	L2  int64 `json:"l2"`
	L3  int64 `json:"l3"`
	// L3Total sums the L3 instances the usable CPUs reach (0 unknown).
	L3Total int64             `json:"l3_total,omitempty"`
	From    map[string]string `json:"from,omitempty"`
}

// CacheInfo is one cache instance as the OS lists it.
type CacheInfo struct {
	Level int    `json:"level"`
	Type  string `json:"type"` // "data", "instruction", "unified"
	Size  int64  `json:"size"`
	// CPUs are the logical CPUs sharing it (all of them, usable or not).
	CPUs []int  `json:"cpus"`
	From string `json:"from"`
}

// Node is one NUMA node.
type Node struct {
	ID       int   `json:"id"`
	CPUs     []int `json:"cpus"`
	MemBytes int64 `json:"mem_bytes"`
}

// Info describes the machine.
type Info struct {
	Arch       string `json:"arch"`
	OS         string `json:"os"`
	Vendor     string `json:"vendor"`
	Brand      string `json:"brand"`
	Family     int    `json:"family"`
	Model      int    `json:"model"`
	Stepping   int    `json:"stepping"`
	Hypervisor string `json:"hypervisor,omitempty"`
	// PhysicalCores and LogicalCores count the cores and logical CPUs this
	// process may use, from the OS (affinity ∩ online); Usable is how many
	// threads may run at once (also limited by a cgroup CPU quota and a
	// user-set GOMAXPROCS): the worker pool's size and the largest thread
	// count anything runs on. ThreadsPerCore is the most usable siblings of
	// one core. CPUID's own claims are only hints (Topology.CPUIDLogical).
	PhysicalCores  int         `json:"physical_cores"`
	LogicalCores   int         `json:"logical_cores"`
	Usable         int         `json:"usable_cpus"`
	ThreadsPerCore int         `json:"threads_per_core"`
	Topology       Topology    `json:"topology"`
	CacheLine      int         `json:"cache_line"`
	Cache          Cache       `json:"cache"`
	Caches         []CacheInfo `json:"caches,omitempty"`
	NUMA           []Node      `json:"numa"`
	MemBytes       int64       `json:"mem_bytes"`
	// NominalHz is the frequency the CPU or OS reports (0 if unknown); on VMs
	// it can be far from the real clock, which roofline measures.
	NominalHz int64 `json:"nominal_hz"`
	// Hardware is what cpuid reports, before the OS permission and masks.
	Hardware Set `json:"hardware"`
	// AMXPermission reports whether Linux granted this process the AMX tile
	// data state (arch_prctl ARCH_REQ_XCOMP_PERM); without it AMX is not effective.
	AMXPermission bool `json:"amx_permission"`
	// SVEBits is the SVE vector length in bits (0 without SVE).
	SVEBits int `json:"sve_bits,omitempty"`
	// Effective is the feature set kernels may use.
	Effective Set `json:"effective"`
	// Masked lists the hardware features removed by the user's masks.
	Masked Set `json:"masked"`
	// Mask describes the masks in force, e.g. "KTUNE_MAX_ISA=avx2".
	Mask     string   `json:"mask,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Has reports whether f is effective.
func (i *Info) Has(f Feature) bool { return i.Effective.Has(f) }

// Fingerprint identifies a machine for tuning profiles: vendor, family,
// model, stepping, usable CPUs and the effective feature set. It reads
// like "intel-6.167.1-2c-avx512_vnni-1a2b3c4d": a short human part and a
// CRC of the whole.
func (i *Info) Fingerprint() string {
	full := fmt.Sprintf("%s|%s|%s|%d.%d.%d|%d|%s", i.Arch, i.Vendor, i.Brand, i.Family, i.Model, i.Stepping, i.Usable, i.Effective)
	vendor := strings.ToLower(i.Vendor)
	switch {
	case strings.Contains(vendor, "intel"):
		vendor = "intel"
	case strings.Contains(vendor, "amd"):
		vendor = "amd"
	case vendor == "":
		vendor = i.Arch
	}
	vendor = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, vendor)
	return fmt.Sprintf("%s-%d.%d.%d-%dc-%s-%08x", vendor, i.Family, i.Model, i.Stepping, i.Usable, i.TopLevel(), crc32.ChecksumIEEE([]byte(full)))
}

// TopLevel names the highest ISA level whose features are all effective.
func (i *Info) TopLevel() string {
	best, bestLen := "generic", 0
	for _, l := range levels {
		if l.set != 0 && i.Effective.HasAll(l.set) && l.set.Len() > bestLen {
			best, bestLen = l.name, l.set.Len()
		}
	}
	return best
}

// JSON returns the info as indented JSON.
func (i *Info) JSON() ([]byte, error) { return json.MarshalIndent(i, "", "  ") }

// ---- global state -------------------------------------------------------

var (
	mu        sync.Mutex
	once      sync.Once
	base      Info    // as detected, unmasked
	live      *Source // what detection read (for WriteCapture)
	userMask  Set     // removed by KTUNE_MAX_ISA / KTUNE_DISABLE / SetMask
	maskDesc  []string
	warnings  []string
	testMasks []Set // removed by Disable, a stack
	effective atomic.Uint64
	gen       atomic.Uint64
)

func initState() {
	once.Do(func() {
		live = LiveSource()
		base = DetectFrom(live)
		if v := os.Getenv("KTUNE_MAX_ISA"); v != "" {
			if err := applyMaxISA(v); err != nil {
				warnings = append(warnings, "KTUNE_MAX_ISA: "+err.Error()+"; ignored")
			}
		}
		if v := os.Getenv("KTUNE_DISABLE"); v != "" {
			if err := applyDisable("KTUNE_DISABLE", v); err != nil {
				warnings = append(warnings, "KTUNE_DISABLE: "+err.Error()+"; ignored")
			}
		}
		recompute()
	})
}

func applyMaxISA(level string) error {
	set, err := Level(level)
	if err != nil {
		return err
	}
	arch := X86
	if base.Arch == "arm64" {
		arch = ARM64
	}
	if set != 0 && set.Intersect(arch) == 0 {
		return fmt.Errorf("ISA level %q is not a level of %s (known here: %s)", level, base.Arch, strings.Join(levelsOf(arch), ", "))
	}
	userMask |= base.Hardware.Minus(set)
	maskDesc = append(maskDesc, "max-isa="+level)
	return nil
}

func applyDisable(source, list string) error {
	set, err := ParseSet(list)
	if err != nil {
		return err
	}
	userMask |= set
	maskDesc = append(maskDesc, source+"="+set.String())
	return nil
}

// recompute must be called with mu held (or from once).
func recompute() {
	eff := base.Hardware
	if !base.AMXPermission {
		eff = eff.Minus(AMX)
	}
	eff = eff.Minus(userMask)
	for _, m := range testMasks {
		eff = eff.Minus(m)
	}
	effective.Store(uint64(eff))
	gen.Add(1)
}

// Effective returns the effective feature set (fast; safe for hot paths).
func Effective() Set {
	initState()
	return Set(effective.Load())
}

// Has reports whether f is effective.
func Has(f Feature) bool { return Effective().Has(f) }

// HasAll reports whether every feature of s is effective.
func HasAll(s Set) bool { return Effective().HasAll(s) }

// Generation changes whenever the effective set changes, so dispatchers can
// cache their choice and re-select only when it moves.
func Generation() uint64 {
	initState()
	return gen.Load()
}

// Get returns a snapshot of the machine description with the current masks.
func Get() *Info {
	initState()
	mu.Lock()
	defer mu.Unlock()
	i := base
	i.NUMA = append([]Node(nil), base.NUMA...)
	i.Cache.From = maps.Clone(base.Cache.From)
	i.Effective = Set(effective.Load())
	i.Masked = base.Hardware.Minus(i.Effective)
	if !base.AMXPermission {
		i.Masked = i.Masked.Minus(AMX)
	}
	desc := append([]string(nil), maskDesc...)
	if len(testMasks) > 0 {
		desc = append(desc, "test-disable")
	}
	i.Mask = strings.Join(desc, " ")
	i.Warnings = append(append([]string(nil), base.Warnings...), warnings...)
	return &i
}

// Describe returns the description of a captured (or any) Source with no
// masks: the effective set is the hardware's, less AMX without the OS
// permission.
func Describe(src *Source) *Info {
	i := DetectFrom(src)
	i.Effective = i.Hardware
	if !i.AMXPermission {
		i.Effective = i.Effective.Minus(AMX)
	}
	return &i
}

// levelsOf lists the level names for an architecture's features.
func levelsOf(arch Set) []string {
	var out []string
	for _, l := range levels {
		if l.set == 0 || l.set.Intersect(arch) != 0 {
			out = append(out, l.name)
		}
	}
	return out
}

// MaskErrors returns the problems with the masking environment variables
// (KTUNE_MAX_ISA, KTUNE_DISABLE), which detection ignored; the programs
// refuse to run on them, since the user believes the mask applies.
func MaskErrors() []string {
	initState()
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), warnings...)
}

// Fingerprint is Get().Fingerprint().
func Fingerprint() string { return Get().Fingerprint() }

// SetMask applies a user mask for the rest of the process: maxISA caps the
// features at a level (see LevelNames; "" for none) and disable removes a
// comma-separated list of features. The CLIs' --max-isa and --disable-isa
// flags call it.
func SetMask(maxISA, disable string) error {
	initState()
	mu.Lock()
	defer mu.Unlock()
	if maxISA != "" {
		if err := applyMaxISA(maxISA); err != nil {
			return err
		}
	}
	if disable != "" {
		if err := applyDisable("disable-isa", disable); err != nil {
			return err
		}
	}
	recompute()
	return nil
}

// Disable removes fs from the effective set until restore is called; for
// tests (defer cpu.Disable(cpu.AVX512F)()). Calls nest.
func Disable(fs ...Feature) (restore func()) {
	initState()
	mu.Lock()
	defer mu.Unlock()
	testMasks = append(testMasks, NewSet(fs...))
	idx := len(testMasks) - 1
	recompute()
	var done sync.Once
	return func() {
		done.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			testMasks[idx] = 0
			for len(testMasks) > 0 && testMasks[len(testMasks)-1] == 0 {
				testMasks = testMasks[:len(testMasks)-1]
			}
			recompute()
		})
	}
}

// Only restricts the effective set to s until restore is called; for tests
// and the tuner's masked comparisons.
func Only(s Set) (restore func()) {
	return Disable(Effective().Minus(s).Features()...)
}

// goarch is the architecture detection ran for.
var goarch = runtime.GOARCH

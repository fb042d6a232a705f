package cpu

import (
	"runtime"

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

func detect() Info {
	c := &cpuid.CPU
	i := Info{
		Arch:           runtime.GOARCH,
		OS:             runtime.GOOS,
		Vendor:         c.VendorString,
		Brand:          c.BrandName,
		Family:         c.Family,
		Model:          c.Model,
		Stepping:       c.Stepping,
		PhysicalCores:  c.PhysicalCores,
		LogicalCores:   c.LogicalCores,
		ThreadsPerCore: c.ThreadsPerCore,
		CacheLine:      c.CacheLine,
		Cache:          Cache{L1D: int64(c.Cache.L1D), L1I: int64(c.Cache.L1I), L2: int64(c.Cache.L2), L3: int64(c.Cache.L3)},
		NominalHz:      c.Hz,
	}
	if c.HypervisorVendorString != "" {
		i.Hypervisor = c.HypervisorVendorString
	} else if c.Supports(cpuid.HYPERVISOR) {
		i.Hypervisor = "unknown"
	}
	for f, id := range cpuidMap {
		if (X86.Has(f) && goarch != "amd64") || (ARM64.Has(f) && goarch != "arm64") {
			continue // cpuid's arm and x86 IDs never mix, but be explicit
		}
		if c.Supports(id) {
			i.Hardware |= NewSet(f)
		}
	}
	// Arch-specific additions (SME bit, SVE length, AMX permission, /proc
	// fallbacks) and OS facts (NUMA, memory).
	detectArch(&i)
	detectOS(&i)
	if i.LogicalCores <= 0 {
		i.LogicalCores = runtime.NumCPU()
	}
	if i.PhysicalCores <= 0 {
		i.PhysicalCores = i.LogicalCores
	}
	if i.ThreadsPerCore <= 0 {
		i.ThreadsPerCore = 1
	}
	for _, p := range []*int64{&i.Cache.L1D, &i.Cache.L1I, &i.Cache.L2, &i.Cache.L3} {
		if *p <= 0 {
			*p = -1
		}
	}
	if i.CacheLine <= 0 {
		i.CacheLine = 64
	}
	return i
}

//go:build !linux && !darwin && !windows

package cpu

// osProbe: no OS topology is read here; detection falls back to CPUID.
func osProbe(src *Source) {}

// AvailableMemory is unknown (0) here.
func AvailableMemory() int64 { return 0 }

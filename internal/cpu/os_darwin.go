package cpu

// osProbe: TODO(darwin) sysctl values.
func osProbe(src *Source) {}

// AvailableMemory is unknown (0) on macOS.
func AvailableMemory() int64 { return 0 }

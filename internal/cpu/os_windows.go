package cpu

// osProbe: TODO(windows) GetLogicalProcessorInformationEx.
func osProbe(src *Source) {}

// AvailableMemory is unknown (0) on Windows.
func AvailableMemory() int64 { return 0 }

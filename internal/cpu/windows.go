package cpu

// windowsDetect: TODO(helper) topology from GetLogicalProcessorInformationEx.
func windowsDetect(src *Source, i *Info) {}

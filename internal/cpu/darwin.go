package cpu

// darwinDetect: TODO(helper) topology from sysctl values.
func darwinDetect(src *Source, i *Info) {}

//go:build !amd64 && !arm64

package cpu

func archProbe(f *CPUIDFacts, hw *Set) {}

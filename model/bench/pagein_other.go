//go:build !unix

package bench

// majorFaults is unknown here.
func majorFaults() int64 { return -1 }

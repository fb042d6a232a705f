//go:build !unix

package kda

// cpuTime is −1: no getrusage here (BenchmarkLayer then reports no
// cpu-ns/op).
func cpuTime() float64 { return -1 }

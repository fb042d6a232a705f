//go:build !linux

package pool

// canPin: no per-thread affinity call is used outside Linux (macOS has
// none; Windows pinning is not implemented), so every placement runs
// unpinned there.
const canPin = false

func pinThread(c int) error { return nil }

func restrictProcess(cpus []int) error { return nil }

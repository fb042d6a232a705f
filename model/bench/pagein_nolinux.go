//go:build !linux

package bench

// sampleIO reads the page-in counters (no read_bytes outside Linux).
func sampleIO() ioSample { return ioSample{MajFlt: majorFaults(), ReadBytes: -1} }

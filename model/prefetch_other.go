//go:build !linux && !darwin

package model

const prefetchSupported = false

// willNeed does nothing here (no madvise).
func willNeed([]byte, *[]byte) {}

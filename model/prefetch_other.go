//go:build !linux && !darwin

package model

import "unsafe"

const prefetchSupported = false

// willNeed does nothing here (no madvise).
func willNeed([]byte, *[]byte) {}

var pageSize = 4096

// residency is not known here.
func residency(unsafe.Pointer, int, []byte) bool { return false }

// populate is not known here.
func populate([]byte) bool { return false }

//go:build !linux

package cpu

import "errors"

// SampleLoad is Linux-only for now.
func SampleLoad() (Load, error) {
	return Load{}, errors.New("cpu: load sampling is implemented on Linux only")
}

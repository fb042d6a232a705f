//go:build !linux

package bench

import "errors"

// diskCeiling is not measured here (no O_DIRECT).
func diskCeiling(string, int, int) (float64, error) {
	return 0, errors.New("the disk read ceiling is measured on Linux only")
}

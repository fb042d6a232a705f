//go:build arm64 && !linux

package cpu

func sveBitsOS() int { return 0 }
func hasSMEOS() bool { return false }

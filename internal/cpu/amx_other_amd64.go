//go:build amd64 && !linux

package cpu

// requestAMX: only Linux's permission model is supported; elsewhere AMX stays off.
func requestAMX() bool { return false }

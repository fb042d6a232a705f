//go:build !amd64 && !arm64

package cpu

func detectArch(i *Info) {}

//go:build !(amd64 && gc && !purego)

package roofline

func streamAsm() *streamKernels { return nil }

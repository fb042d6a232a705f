//go:build amd64 && gc && !purego

package roofline

import "github.com/ktune/ktune/internal/cpu"

var (
	streamAVX512 = &streamKernels{writeAVX512, copyAVX512, triadAVX512}
	streamAVX2   = &streamKernels{writeAVX2, copyAVX2, triadAVX2}
)

// streamAsm picks the widest kernels the effective features allow.
func streamAsm() *streamKernels {
	switch {
	case cpu.Has(cpu.AVX512F):
		return streamAVX512
	case cpu.HasAll(cpu.NewSet(cpu.AVX2, cpu.FMA)):
		return streamAVX2
	}
	return nil
}

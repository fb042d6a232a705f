//go:build amd64 && gc && !purego

// amd64 activation quantization: the generated quantScaled kernels
// (gemm_act_amd64.s, from _asm/gemm/act) do the whole groups, Go the last
// partial one, so the result equals quantizeRowGeneric bit for bit.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/quant"
)

func init() { quantizeRowFn = quantizeRowAMD64 }

var avx512Act = cpu.NewSet(cpu.AVX512F, cpu.AVX2) // the AVX-512 code also uses VEX AVX2 reductions

// quantizeRowAMD64 picks the widest ISA per call, from the effective
// features (an atomic load), so masks set by tests or the user apply.
func quantizeRowAMD64(q []int8, s []float32, sums []int32, x []float32) {
	switch {
	case cpu.HasAll(avx512Act):
		quantizeRowVec(q, s, sums, x, quantScaledAVX512)
	case cpu.Has(cpu.AVX2):
		quantizeRowVec(q, s, sums, x, quantScaledAVX2)
	default:
		quantizeRowGeneric(q, s, sums, x)
	}
}

// quantizeRowVec runs the asm on the whole groups of x and quantizeGroup on
// the last partial one and the padding.
func quantizeRowVec(q []int8, s []float32, sums []int32, x []float32, groups func([]int8, []float32, []int32, []float32)) {
	const gk = quant.GroupK
	full := len(x) / gk
	q, s, sums = q[:len(sums)*gk], s[:len(sums)], sums[:len(sums)] // bounds for the asm
	groups(q[:full*gk], s[:full], sums[:full], x[:full*gk])
	for g := full; g < len(sums); g++ {
		lo := min(g*gk, len(x))
		hi := min(lo+gk, len(x))
		quantizeGroup(q[g*gk:(g+1)*gk], &s[g], &sums[g], x[lo:hi])
	}
}

//go:build amd64 && gc && !purego

// amd64 activation quantization: the generated absMax/quantGroups kernels
// (gemm_act_amd64.s, from _asm/gemm/act) do the whole vectors and groups,
// Go the tails, so the result equals quantizeRowGeneric bit for bit.
package gemm

import (
	"math"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/quant"
)

func init() { quantizeRowFn = quantizeRowAMD64 }

var avx512Act = cpu.NewSet(cpu.AVX512F, cpu.AVX2) // the AVX-512 code also uses VEX AVX2 reductions

// quantizeRowAMD64 picks the widest ISA per call, from the effective
// features (an atomic load), so masks set by tests or the user apply.
func quantizeRowAMD64(q []int8, s *float32, sums []int32, x []float32) {
	switch {
	case cpu.HasAll(avx512Act):
		quantizeRowVec(q, s, sums, x, 16, absMaxAVX512, quantGroupsAVX512)
	case cpu.Has(cpu.AVX2):
		quantizeRowVec(q, s, sums, x, 8, absMaxAVX2, quantGroupsAVX2)
	default:
		quantizeRowGeneric(q, s, sums, x)
	}
}

func quantizeRowVec(q []int8, s *float32, sums []int32, x []float32, lanes int,
	absMax func([]float32) float32, groups func([]int8, []int32, []float32, float32)) {
	amax := absMax(x)
	for _, v := range x[len(x)&^(lanes-1):] {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	*s = amax / 127
	inv := float32(0)
	if amax > 0 {
		inv = 127 / amax
	}
	const gk = quant.GroupK
	full := len(x) / gk
	q, sums = q[:len(sums)*gk], sums[:len(sums)] // bounds for the asm
	groups(q[:full*gk], sums[:full], x[:full*gk], inv)
	for i := full * gk; i < len(x); i++ {
		q[i] = int8(math.RoundToEven(float64(x[i] * inv)))
	}
	clear(q[len(x):])
	for g := full; g < len(sums); g++ {
		var t int32
		for _, v := range q[g*gk : (g+1)*gk] {
			t += int32(v)
		}
		sums[g] = t
	}
}

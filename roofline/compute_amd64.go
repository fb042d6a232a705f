//go:build amd64 && gc && !purego

package roofline

// amd64 registration of the generated compute microkernels
// (peak_amd64.s, from _asm/roofline/peak) and the clock chain.

import "github.com/ktune/ktune/internal/cpu"

func init() {
	clockTrip, clockFn = 128, clockAdd
	for _, k := range []*ComputeKernel{
		{Name: "scalar_fma_f32", DType: "f32", Requires: cpu.NewSet(cpu.FMA), Chains: 12, OpsPerTrip: 12 * 2, Fn: fmaScalarF32},
		{Name: "avx2_fma_f32", DType: "f32", Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Chains: 12, OpsPerTrip: 12 * 8 * 2, Fn: fmaF32Y},
		{Name: "avx512_fma_f32", DType: "f32", Requires: cpu.NewSet(cpu.AVX512F), Chains: 24, OpsPerTrip: 24 * 16 * 2, Fn: fmaF32Z},
		{Name: "avx_vnni_int8", DType: "int8", Requires: cpu.NewSet(cpu.AVX2, cpu.AVXVNNI), Chains: 12, OpsPerTrip: 12 * 32 * 2, Fn: vnniY},
		// avx2_int8: the int8 ceiling of AVX2 CPUs without VNNI (the
		// avx2_int8 gemm variant's instructions); where VNNI exists its
		// ceilings are higher and PeakFLOPs takes the best.
		{Name: "avx2_int8", DType: "int8", Requires: cpu.NewSet(cpu.AVX2), Chains: 12, OpsPerTrip: 12 * 32 * 2, Fn: maddY},
		{Name: "avx512_vnni_int8", DType: "int8", Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512VNNI), Chains: 24, OpsPerTrip: 24 * 64 * 2, Fn: vnniZ},
		{Name: "avx512_bf16_dot", DType: "bf16", Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512BF16), Chains: 24, OpsPerTrip: 24 * 32 * 2, Fn: bf16Z},
		{Name: "amx_int8", DType: "int8", Requires: cpu.NewSet(cpu.AMXTile, cpu.AMXInt8), Chains: 4, OpsPerTrip: 4 * 16 * 16 * 64 * 2, Fn: amxInt8},
	} {
		registerCompute(k)
	}
}

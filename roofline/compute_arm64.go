//go:build arm64 && gc && !purego

package roofline

// arm64 registration of the NEON and SVE FMA, the NEON BF16 (BFDOT,
// BFMMLA; FEAT_BF16, the bf16act kernels' instructions) and the SVE BFDOT
// ceiling kernels (peak_arm64.s). There is no arm64 clock chain yet: the clock is reported
// as unknown there.

import "github.com/ktune/ktune/internal/cpu"

func init() {
	registerCompute(&ComputeKernel{Name: "neon_fma_f32", DType: "f32", Requires: cpu.NewSet(cpu.ASIMD), Chains: 24,
		OpsPerTrip: 24 * 4 * 2, Fn: func(n int64) { fmaNEON(int(n)) }})
	if bits := cpu.Get().SVEBits; bits > 0 {
		registerCompute(&ComputeKernel{Name: "sve_fma_f32", DType: "f32", Requires: cpu.NewSet(cpu.SVE), Chains: 24,
			OpsPerTrip: 24 * float64(bits/32) * 2, Fn: func(n int64) { fmaSVE(int(n)) }})
	}
	bf16 := cpu.NewSet(cpu.ASIMD, cpu.BF16)
	registerCompute(&ComputeKernel{Name: "neon_bfdot_bf16", DType: "bf16", Requires: bf16, Chains: 24,
		OpsPerTrip: 24 * 4 * 2 * 2, Fn: func(n int64) { bf16DotNEON(int(n)) }})
	registerCompute(&ComputeKernel{Name: "neon_bfmmla_bf16", DType: "bf16", Requires: bf16, Chains: 24,
		OpsPerTrip: 24 * 4 * 4 * 2, Fn: func(n int64) { bf16MMLANEON(int(n)) }})
	if bits := cpu.Get().SVEBits; bits > 0 {
		registerCompute(&ComputeKernel{Name: "sve_bfdot_bf16", DType: "bf16", Requires: cpu.NewSet(cpu.SVE, cpu.BF16), Chains: 24,
			OpsPerTrip: 24 * float64(bits/32) * 2 * 2, Fn: func(n int64) { bf16DotSVE(int(n)) }})
	}
}

//go:build amd64 && gc && !purego

// amd64 registration of the generated AVX2+FMA f32-class variant.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

var f32AVX2 = &f32Kernels{
	lanes: 8,
	dense: [2][]gemvFn{
		{gemvF32AVX2_1x8, gemvF32AVX2_2x8, gemvF32AVX2_3x8, gemvF32AVX2_4x8,
			gemvF32AVX2_5x8, gemvF32AVX2_6x8, gemvF32AVX2_7x8, gemvF32AVX2_8x8},
		{gemvBF16AVX2_1x8, gemvBF16AVX2_2x8, gemvBF16AVX2_3x8, gemvBF16AVX2_4x8,
			gemvBF16AVX2_5x8, gemvBF16AVX2_6x8, gemvBF16AVX2_7x8, gemvBF16AVX2_8x8},
	},
	quant: [5][]gemvQFn{
		{gemvQ8AVX2_1x8, gemvQ8AVX2_2x8, gemvQ8AVX2_3x8, gemvQ8AVX2_4x8},
		{gemvQ4AVX2_1x8, gemvQ4AVX2_2x8, gemvQ4AVX2_3x8, gemvQ4AVX2_4x8},
		{gemvQ4MinAVX2_1x8, gemvQ4MinAVX2_2x8, gemvQ4MinAVX2_3x8, gemvQ4MinAVX2_4x8},
		{gemvQ3AVX2_1x8, gemvQ3AVX2_2x8, gemvQ3AVX2_3x8, gemvQ3AVX2_4x8},
		{gemvQ6AVX2_1x8, gemvQ6AVX2_2x8, gemvQ6AVX2_3x8, gemvQ6AVX2_4x8},
	},
	one16: [2]gemvQFn{gemvQ3AVX2_1x16, gemvQ6AVX2_1x16},
	micro: [2][]microFn{
		{gemmAVX2_1x16, gemmAVX2_2x16, gemmAVX2_3x16, gemmAVX2_4x16, gemmAVX2_5x16, gemmAVX2_6x16},
	},
	widen: [6]widenFn{widenBF16AVX2, widenQ8AVX2, widenQ4AVX2, widenQ4MinAVX2, widenQ3AVX2, widenQ6AVX2},
}

func init() {
	mr := kernel.Param{Name: "mr", Doc: "rows of the 16-column register tile (M > 8)", Values: []int{4, 6}, Default: 6}
	register(allOps, kernel.Variant{Name: "avx2", Priority: 20,
		Doc:    "generated AVX2+FMA: streamed gemv (M ≤ 8), mr×16 register tiles (M > 8); f32 activations, weights widened in registers",
		DTypes: f32DTypes, Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Threaded: true,
		Params: []kernel.Param{grainParam, mr, kcParam}},
		&impl{act: actF32, panels: f32AVX2.panels, grain: 4})
}

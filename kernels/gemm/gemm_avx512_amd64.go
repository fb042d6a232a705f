//go:build amd64 && gc && !purego

// amd64 registration of the generated AVX-512 f32-class variant.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

var f32AVX512 = &f32Kernels{
	lanes: 16,
	dense: [2][]gemvFn{
		{gemvF32AVX512_1x16, gemvF32AVX512_2x16, gemvF32AVX512_3x16, gemvF32AVX512_4x16,
			gemvF32AVX512_5x16, gemvF32AVX512_6x16, gemvF32AVX512_7x16, gemvF32AVX512_8x16},
		{gemvBF16AVX512_1x16, gemvBF16AVX512_2x16, gemvBF16AVX512_3x16, gemvBF16AVX512_4x16,
			gemvBF16AVX512_5x16, gemvBF16AVX512_6x16, gemvBF16AVX512_7x16, gemvBF16AVX512_8x16},
	},
	quant: [5][]gemvQFn{
		{gemvQ8AVX512_1x16, gemvQ8AVX512_2x16, gemvQ8AVX512_3x16, gemvQ8AVX512_4x16,
			gemvQ8AVX512_5x16, gemvQ8AVX512_6x16, gemvQ8AVX512_7x16, gemvQ8AVX512_8x16},
		{gemvQ4AVX512_1x16, gemvQ4AVX512_2x16, gemvQ4AVX512_3x16, gemvQ4AVX512_4x16,
			gemvQ4AVX512_5x16, gemvQ4AVX512_6x16, gemvQ4AVX512_7x16, gemvQ4AVX512_8x16},
		{gemvQ4MinAVX512_1x16, gemvQ4MinAVX512_2x16, gemvQ4MinAVX512_3x16, gemvQ4MinAVX512_4x16,
			gemvQ4MinAVX512_5x16, gemvQ4MinAVX512_6x16, gemvQ4MinAVX512_7x16, gemvQ4MinAVX512_8x16},
		{gemvQ3AVX512_1x16, gemvQ3AVX512_2x16, gemvQ3AVX512_3x16, gemvQ3AVX512_4x16,
			gemvQ3AVX512_5x16, gemvQ3AVX512_6x16, gemvQ3AVX512_7x16, gemvQ3AVX512_8x16},
		{gemvQ6AVX512_1x16, gemvQ6AVX512_2x16, gemvQ6AVX512_3x16, gemvQ6AVX512_4x16,
			gemvQ6AVX512_5x16, gemvQ6AVX512_6x16, gemvQ6AVX512_7x16, gemvQ6AVX512_8x16},
	},
	micro: [2][]microFn{
		{gemmAVX512_1x16, gemmAVX512_2x16, gemmAVX512_3x16, gemmAVX512_4x16, gemmAVX512_5x16,
			gemmAVX512_6x16, gemmAVX512_7x16, gemmAVX512_8x16, gemmAVX512_9x16, gemmAVX512_10x16,
			gemmAVX512_11x16, gemmAVX512_12x16, gemmAVX512_13x16, gemmAVX512_14x16},
		{gemmAVX512_1x32, gemmAVX512_2x32, gemmAVX512_3x32, gemmAVX512_4x32, gemmAVX512_5x32,
			gemmAVX512_6x32, gemmAVX512_7x32, gemmAVX512_8x32, gemmAVX512_9x32, gemmAVX512_10x32,
			gemmAVX512_11x32, gemmAVX512_12x32, gemmAVX512_13x32, gemmAVX512_14x32},
	},
	widen: [6]widenFn{widenBF16AVX512, widenQ8AVX512, widenQ4AVX512, widenQ4MinAVX512, widenQ3AVX512, widenQ6AVX512},
}

func init() {
	mr := kernel.Param{Name: "mr", Doc: "rows of the 32-column register tile (M > 8)", Values: []int{8, 12, 14}, Default: 14}
	register(allOps, kernel.Variant{Name: "avx512", Priority: 30,
		Doc:    "generated AVX-512: streamed gemv (M ≤ 8), mr×32 register tiles (M > 8); f32 activations, weights widened in registers",
		DTypes: f32DTypes, Requires: cpu.NewSet(cpu.AVX512F), Threaded: true,
		Params: []kernel.Param{grainParam, mr, kcParam}},
		&impl{act: actF32, panels: f32AVX512.panels, grain: 4})
}

//go:build amd64 && gc && !purego

// amd64 registration and driver of the generated AVX512_BF16 kernels
// (gemm_bf16_amd64.s, from _asm/gemm/bf16): activations rounded to BF16
// (class bf16act), VDPBF16PS over the BF16 panel lines. Same regimes as the
// int8 kernels (gemm_vnni_amd64.go): one tile of ≤ mr rows streams the
// worker's panels once (GEMV); larger M runs blocks of nb panels × row tiles.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

type bf16Kernel func(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc bool)

// bf16Z[M] is the kernel for M rows.
var bf16Z = []bf16Kernel{nil, bf16_1x16, bf16_2x16, bf16_3x16, bf16_4x16, bf16_5x16, bf16_6x16,
	bf16_7x16, bf16_8x16, bf16_9x16, bf16_10x16, bf16_11x16, bf16_12x16}

func init() {
	register(allOps, kernel.Variant{Name: "avx512_bf16", Doc: "generated AVX512_BF16: BF16 activations, VDPBF16PS zmm (BYTE-encoded) over the panel lines",
		Priority: 25, DTypes: []kernel.DType{kernel.BF16}, Class: kernel.ClassBF16Act,
		Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512BW, cpu.AVX512BF16), Threaded: true,
		Params: []kernel.Param{grainParam,
			{Name: "mr", Doc: "activation rows per register tile", Values: []int{4, 6, 8, 10, 12}, Default: 12},
			nbParam}},
		&impl{act: actBF16, panels: bf16Panels, grain: 4})
}

func bf16Panels(a *args, p0, p1, worker int, prm kernel.Values) {
	npairs := a.kp / 2
	mr := prm["mr"]
	if mr < 1 || mr >= len(bf16Z) {
		mr = len(bf16Z) - 1
	}
	tiles := (a.m + mr - 1) / mr
	nb := prm["nb"]
	if tiles == 1 || nb < 1 {
		nb = p1 - p0
	}
	pb := a.w.PanelBytes()
	for b0 := p0; b0 < p1; b0 += nb {
		b1 := min(b0+nb, p1)
		for t := 0; t < tiles; t++ {
			r0, r1 := t*a.m/tiles, (t+1)*a.m/tiles
			bf16Z[r1-r0](&a.w.Data[b0*pb], b1-b0, npairs, &a.xb[r0*a.kp], 2*a.kp,
				&a.y[r0*a.ldy+b0*pr-a.ycol], a.ldy, a.acc)
		}
	}
}

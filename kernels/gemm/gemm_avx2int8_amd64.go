//go:build amd64 && gc && !purego

// amd64 registration of the generated AVX2 int8-activation kernels
// (avx2i8*, gemm_avx2int8_amd64.s), for CPUs with AVX2 but no VNNI (AMD Zen
// 2/3, Intel before Ice Lake/Alder Lake). They are the avx_vnni kernels
// (gemm_avxvnni_amd64.go: same contract, driver and tiling, the same weight
// decoding) with vpmaddubsw for vpdpbusd: its u8·s8 pair sums are exact in
// int16 for weights below 64; those of 2-, 3- and 4-bit weights add up in
// int16 over a whole group of 32 (|Σ| ≤ 30720) and widen once by vpmaddwd,
// Q5's over half a group (4 k-quads: |Σ| ≤ 4·2·31·128 = 31744) and widen
// twice, Q6's widen per k-quad (vpmaddwd with ones, vpaddd), and Q8's bytes
// are split into nibbles (u = 16·hi + lo), each summed in int16 over the
// group: exact for every s8 activation, −128 included. The kernels also
// prefetch the next panel into L2 (PREFETCHT1), half of each group record
// per half-panel pass, so that DRAM keeps streaming while the second pass
// reads from cache.
// The kernels also need F16C, which every AVX2+FMA CPU has.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// avx2i8Y[kind][M] is the AVX2 int8 kernel for M rows.
var avx2i8Y = [numKinds][]vnniKernel{
	{nil, avx2i8Q8_1x16, avx2i8Q8_2x16, avx2i8Q8_3x16, avx2i8Q8_4x16},
	{nil, avx2i8Q4_1x16, avx2i8Q4_2x16, avx2i8Q4_3x16, avx2i8Q4_4x16},
	{nil, avx2i8Q4M_1x16, avx2i8Q4M_2x16, avx2i8Q4M_3x16, avx2i8Q4M_4x16},
	{nil, avx2i8Q3_1x16, avx2i8Q3_2x16, avx2i8Q3_3x16, avx2i8Q3_4x16},
	{nil, avx2i8Q6_1x16, avx2i8Q6_2x16, avx2i8Q6_3x16, avx2i8Q6_4x16},
	{nil, avx2i8Q2_1x16, avx2i8Q2_2x16, avx2i8Q2_3x16, avx2i8Q2_4x16},
	{nil, avx2i8Q5_1x16, avx2i8Q5_2x16, avx2i8Q5_3x16, avx2i8Q5_4x16},
	{nil, avx2i8Q3K_1x16, avx2i8Q3K_2x16, avx2i8Q3K_3x16, avx2i8Q3K_4x16},
	{nil, avx2i8Q4K_1x16, avx2i8Q4K_2x16, avx2i8Q4K_3x16, avx2i8Q4K_4x16},
	{nil, avx2i8Q5K_1x16, avx2i8Q5K_2x16, avx2i8Q5K_3x16, avx2i8Q5K_4x16},
	{nil, avx2i8Q6K_1x16, avx2i8Q6K_2x16, avx2i8Q6K_3x16, avx2i8Q6K_4x16},
}

func init() {
	// Priority: above avx2 (the f32 class, the default without a profile
	// when both classes are allowed), below avx512 and every VNNI variant.
	register(allOps, kernel.Variant{Name: "avx2_int8", Doc: "generated AVX2: int8 activations, vpmaddubsw+vpmaddwd per dot product (Q8 by nibbles), two half-panel passes",
		Priority: 22, DTypes: []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2,
			kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}, Class: kernel.ClassInt8Act,
		Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Threaded: true,
		Params: []kernel.Param{grainParam,
			{Name: "mr", Doc: "activation rows per register tile", Values: []int{1, 2, 3, 4}, Default: 4},
			nbParam}},
		&impl{act: actInt8, panels: vnniPanels(&avx2i8Y), grain: 4, prep: vnniPrep})
}

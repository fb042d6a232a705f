//go:build amd64 && gc && !purego

// amd64 registration of the generated AVX-VNNI (VEX, ymm) int8-activation
// kernels, for CPUs with AVX-VNNI but no AVX-512 (Alder Lake and later
// client cores). Same contract and driver as avx512_vnni
// (gemm_vnni_amd64.go); a 64-byte panel line is two ymm of 8 rows, so each
// call makes two passes over a panel (the second from cache) and row tiles
// hold at most 4 rows (16 ymm registers). The kernels also need F16C,
// which every AVX-VNNI CPU has.
//
// No machine this is tested on may have AVX-VNNI: the generator also emits
// test twins (avxvnniTwin*, every kind but Q8, in gemm_avx2int8_amd64.s)
// that differ only in doing each vpdpbusd as vpmaddubsw+vpmaddwd+vpaddd,
// which AVX2 runs; gemm_avxvnni_amd64_test.go checks them exactly and
// against these kernels line by line.
package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// avxvnniY[kind][M] is the AVX-VNNI kernel for M rows.
var avxvnniY = [numKinds][]vnniKernel{
	{nil, avxvnniQ8_1x16, avxvnniQ8_2x16, avxvnniQ8_3x16, avxvnniQ8_4x16},
	{nil, avxvnniQ4_1x16, avxvnniQ4_2x16, avxvnniQ4_3x16, avxvnniQ4_4x16},
	{nil, avxvnniQ4M_1x16, avxvnniQ4M_2x16, avxvnniQ4M_3x16, avxvnniQ4M_4x16},
	{nil, avxvnniQ3_1x16, avxvnniQ3_2x16, avxvnniQ3_3x16, avxvnniQ3_4x16},
	{nil, avxvnniQ6_1x16, avxvnniQ6_2x16, avxvnniQ6_3x16, avxvnniQ6_4x16},
	{nil, avxvnniQ2_1x16, avxvnniQ2_2x16, avxvnniQ2_3x16, avxvnniQ2_4x16},
	{nil, avxvnniQ5_1x16, avxvnniQ5_2x16, avxvnniQ5_3x16, avxvnniQ5_4x16},
	{nil, avxvnniQ3K_1x16, avxvnniQ3K_2x16, avxvnniQ3K_3x16, avxvnniQ3K_4x16},
	{nil, avxvnniQ4K_1x16, avxvnniQ4K_2x16, avxvnniQ4K_3x16, avxvnniQ4K_4x16},
	{nil, avxvnniQ5K_1x16, avxvnniQ5K_2x16, avxvnniQ5K_3x16, avxvnniQ5K_4x16},
	{nil, avxvnniQ6K_1x16, avxvnniQ6K_2x16, avxvnniQ6K_3x16, avxvnniQ6K_4x16},
}

func init() {
	register(allOps, kernel.Variant{Name: "avx_vnni", Doc: "generated AVX-VNNI: int8 activations, {vex} vpdpbusd ymm (BYTE-encoded), two half-panel passes",
		Priority: 35, DTypes: []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2,
			kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}, Class: kernel.ClassInt8Act,
		Requires: cpu.NewSet(cpu.AVX2, cpu.FMA, cpu.AVXVNNI), Threaded: true,
		Params: []kernel.Param{grainParam,
			{Name: "mr", Doc: "activation rows per register tile", Values: []int{1, 2, 3, 4}, Default: 4},
			nbParam}},
		&impl{act: actInt8, panels: vnniPanels(&avxvnniY), grain: 4, prep: vnniPrep})
}

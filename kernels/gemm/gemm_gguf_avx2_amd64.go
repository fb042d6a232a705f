//go:build amd64 && gc && !purego

// amd64 registration and driver of the generated AVX2 kernels of the GGUF
// formats (gemm_gguf_avx2_amd64.s, _asm/gemm/gguf/avx2.go): a matrix's
// ggml blocks read in place, row by row, against the activations
// ggufPrepY lays out per unit of 256 values.

package gemm

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
)

// ggufMaxMY is the most activation rows one AVX2 kernel call computes.
const ggufMaxMY = 4

// ggufY[type][M] is the AVX2 kernel for M activation rows.
var ggufY = map[gguf.Type][ggufMaxMY + 1]ggufKernel{
	gguf.TypeQ8_0:   {nil, ggufYQ8_0_1, ggufYQ8_0_2, ggufYQ8_0_3, ggufYQ8_0_4},
	gguf.TypeQ4_0:   {nil, ggufYQ4_0_1, ggufYQ4_0_2, ggufYQ4_0_3, ggufYQ4_0_4},
	gguf.TypeQ4_1:   {nil, ggufYQ4_1_1, ggufYQ4_1_2, ggufYQ4_1_3, ggufYQ4_1_4},
	gguf.TypeQ5_0:   {nil, ggufYQ5_0_1, ggufYQ5_0_2, ggufYQ5_0_3, ggufYQ5_0_4},
	gguf.TypeQ5_1:   {nil, ggufYQ5_1_1, ggufYQ5_1_2, ggufYQ5_1_3, ggufYQ5_1_4},
	gguf.TypeIQ4_NL: {nil, ggufYIQ4NL_1, ggufYIQ4NL_2, ggufYIQ4NL_3, ggufYIQ4NL_4},
	gguf.TypeMXFP4:  {nil, ggufYMXFP4_1, ggufYMXFP4_2, ggufYMXFP4_3, ggufYMXFP4_4},
	gguf.TypeQ2_K:   {nil, ggufYQ2K_1, ggufYQ2K_2, ggufYQ2K_3, ggufYQ2K_4},
	gguf.TypeQ3_K:   {nil, ggufYQ3K_1, ggufYQ3K_2, ggufYQ3K_3, ggufYQ3K_4},
	gguf.TypeQ4_K:   {nil, ggufYQ4K_1, ggufYQ4K_2, ggufYQ4K_3, ggufYQ4K_4},
	gguf.TypeQ5_K:   {nil, ggufYQ5K_1, ggufYQ5K_2, ggufYQ5K_3, ggufYQ5K_4},
	gguf.TypeQ6_K:   {nil, ggufYQ6K_1, ggufYQ6K_2, ggufYQ6K_3, ggufYQ6K_4},
	gguf.TypeIQ4_XS: {nil, ggufYIQ4XS_1, ggufYIQ4XS_2, ggufYIQ4XS_3, ggufYIQ4XS_4},
}

// ggufPanelsY is the panelFn of gguf_avx2: the rows of panels [p0, p1)
// in one call per tile of at most ggufMaxMY activation rows.
func ggufPanelsY(a *args, p0, p1, worker int, prm kernel.Values) {
	t, units, tail, r0, r1, ok := ggufPanelRows(a, p0, p1, worker, prm)
	if !ok {
		return
	}
	ks := ggufY[t]
	ggufRowCalls(a, ks[:], ggufUnitBytesY, units, tail, r0, r1)
}

func init() {
	register(allOps, kernel.Variant{Name: "gguf_avx2", Doc: "generated AVX2 on the file's blocks: weights unpacked per group of 32, VPMADDUBSW against int8 activations",
		Priority: 20, DTypes: ggufIntDTypes, Class: kernel.ClassInt8Act,
		Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actInt8, panels: ggufPanelsY, grain: 4, prep: ggufPrepY})
}

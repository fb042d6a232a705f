//go:build amd64 && gc && !purego

// amd64 registration of the generated MLA decode kernels.
package mla

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

func init() {
	kb := kernel.Param{Name: "kb", Doc: "keys per block", Values: []int{16, 32, 64, 128}, Default: 64}
	register(OpDecode, kernel.Variant{Name: "avx512", Doc: "generated AVX-512 4×4 score tiles and 4-head latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 30, Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512VL), Threaded: true, Params: []kernel.Param{kb, splitParam}}, decodeFn(decodeAVX512))
}

// decodeAVX512 is decodeGeneric with the two inner products in the
// generated AVX-512 kernels (decodeAsm).
func decodeAVX512(d *Decode, threads int, prm kernel.Values) {
	decodeAsm(d, threads, prm, mlaScoresAVX512_576, mlaAccumAVX512_576)
}

//go:build amd64 && gc && !purego

// amd64 registration of the generated MLA decode kernels (AVX-512,
// AVX512_BF16 and AVX2+FMA; all run the shared driver of mla_asm.go), of
// the int8act prefill, and the AVX-512 softmax row maximum (rowMaxAsm).
package mla

import (
	"math"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

func init() {
	kb := kernel.Param{Name: "kb", Doc: "keys per block", Values: []int{16, 32, 64, 128}, Default: 64}
	register(OpDecode, kernel.Variant{Name: "avx512", Doc: "generated AVX-512 4×4 score tiles and 4-head latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 30, Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512VL), Threaded: true, Params: []kernel.Param{kb, splitParam}}, decodeFn(decodeAVX512))
	// Class bf16act (opt-in): never a default, a tuning candidate only when
	// the user allows bf16act; priority below avx512 all the same.
	// AVX512VL for the EVEX ymm/xmm score reduction (X16–X31).
	register(OpDecode, kernel.Variant{Name: "avx512_bf16", Doc: "generated AVX512_BF16: BF16 queries and rows (a BF16 cache in place, others rounded per key block), VDPBF16PS 4×4 score tiles (BYTE-encoded), BF16 rows widened by VPUNPCK for the f32-FMA latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 25, Class: kernel.ClassBF16Act, Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512BW, cpu.AVX512VL, cpu.AVX512BF16),
		Threaded: true, Params: []kernel.Param{kb, splitParam}}, decodeFn(decodeAVX512BF16))
	register(OpDecode, kernel.Variant{Name: "avx2", Doc: "generated AVX2+FMA 4×2 score tiles and 4-head latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 20, Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Threaded: true, Params: []kernel.Param{kb, splitParam}}, decodeFn(decodeAVX2))
	// where gemm's avx512_vnni runs: measured faster than gemm there
	// (Zen 4); with AVX2's int8 GEMM alone it is slower (the Q8 key
	// packing costs more than the int8 scores save), and AVX-VNNI is
	// unmeasured
	v := gemmInt8
	v.Requires = cpu.NewSet(cpu.AVX512F, cpu.AVX512BW, cpu.AVX512VL, cpu.AVX512VNNI)
	register(OpPrefill, v, prefillFn(prefillBlockedInt8))
	a := absorbedInt8
	a.Requires = v.Requires
	register(OpPrefill, a, prefillFn(prefillAbsorbedInt8))
	rowMaxAsm = func(x []float32) (float32, int) {
		if n := len(x) &^ 15; n > 0 && cpu.Has(cpu.AVX512F) {
			return mlaRowMaxAVX512(&x[0], n), n
		}
		return float32(math.Inf(-1)), 0
	}
}

// decodeAVX512 is decodeGeneric with the two inner products in the
// generated AVX-512 kernels (decodeAsm).
func decodeAVX512(d *Decode, threads int, prm kernel.Values) {
	decodeAsm(d, threads, prm, mlaScoresAVX512_576, mlaAccumAVX512_576)
}

// decodeAVX2 is decodeGeneric with the two inner products in the
// generated AVX2+FMA kernels (decodeAsm; their 4×2 score tile needs nk
// a multiple of 2, which the driver's padding to 4 satisfies).
func decodeAVX2(d *Decode, threads int, prm kernel.Values) {
	decodeAsm(d, threads, prm, mlaScoresAVX2_576, mlaAccumAVX2_576)
}

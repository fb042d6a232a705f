//go:build arm64 && gc && !purego

// arm64 stubs and registration of the hand-written NEON and SVE MLA
// decode kernels (the driver is shared with amd64: mla_asm.go).
package mla

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// mlaScoresNEON_576 computes scaled dot products of nh query rows with nk
// key rows, both of stride 576 (nh and nk multiples of 4):
//
//	for h < nh, j < nk: s[h*lds+j] = scale * Σ_{d<576} q[h*576+d]*k[j*576+d]
//
//go:noescape
func mlaScoresNEON_576(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)

// mlaAccumNEON_576 rescales and accumulates nh latent outputs z (stride
// 512, nh a multiple of 4) from nk value rows v (stride 576), with the
// probabilities transposed, pt[j*ldpt+h]:
//
//	for h < nh, d < 512: z[h*512+d] = corr[h]*z[h*512+d] + Σ_{j<nk} pt[j*ldpt+h]*v[j*576+d]
//
//go:noescape
func mlaAccumNEON_576(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)

// mlaScoresSVE_576 and mlaAccumSVE_576 are mlaScoresNEON_576 and
// mlaAccumNEON_576 in SVE, vector-length agnostic (WHILELO-predicated).
//
//go:noescape
func mlaScoresSVE_576(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)

//go:noescape
func mlaAccumSVE_576(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)

func init() {
	kb := kernel.Param{Name: "kb", Doc: "keys per block", Values: []int{16, 32, 64, 128}, Default: 64}
	register(OpDecode, kernel.Variant{Name: "neon", Doc: "hand-written NEON 4×4 score tiles and 4-head latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 20, Requires: cpu.NewSet(cpu.ASIMD), Threaded: true, Params: []kernel.Param{kb, splitParam}},
		decodeFn(func(d *Decode, threads int, prm kernel.Values) {
			decodeAsm(d, threads, prm, mlaScoresNEON_576, mlaAccumNEON_576)
		}))
	register(OpDecode, kernel.Variant{Name: "sve", Doc: "hand-written SVE (vector-length agnostic): 4×4 score tiles over the 576 dimensions reduced by FADDV, 4-head × 4-vector latent accumulation (R=512, DR=64; other widths run the generic code)",
		Priority: 25, Requires: cpu.NewSet(cpu.SVE), Threaded: true, Params: []kernel.Param{kb, splitParam}},
		decodeFn(func(d *Decode, threads int, prm kernel.Values) {
			decodeAsm(d, threads, prm, mlaScoresSVE_576, mlaAccumSVE_576)
		}))
}

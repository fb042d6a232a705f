package mla

import (
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
)

// absorbedRows bounds a query block's score rows (queries × heads × keys
// floats) so that the scores of a long context stay a few tens of MiB.
const absorbedRows = 8 << 20

// prefillAbsorbed is causal prefill in the absorbed form, the cheaper one
// when a long prefix is cached (P ≥ T): the keys are the latent rows
// themselves, so nothing is decompressed per key,
//
//	q̃_h = [W_UKᵀ q_nope_h | q_pe_h]·scale        per query and head, [R+DR]
//	S = Q̃·[Ĉ | k_pe]ᵀ                            all heads of a query block in one GEMM
//	P = causal softmax by rows;  Z = P·Ĉ          one GEMM, [rows][R]
//	o_h = W_UV_h z_h / rowsum
//
// against 2·(P+T)·NH·R·(DN+DV) FLOPs of decompression for the gemm form.
// The latent rows are packed once as GEMM weights both ways ([N][R+DR]
// keys, [R][N] values); every query block runs over all N keys with the
// invisible ones' probabilities zero.
func prefillAbsorbed(p *Prefill, threads int, prm kernel.Values) {
	T := p.T()
	N := p.P + T
	NH, DN, DR, DV, R := p.NH, p.DN, p.DR, p.DV, p.R
	W, QW := R+DR, DN+DR
	rows, release := p.cachedRows(N)
	defer release()
	const L = quant.PanelRows
	keys, kbuf := newF32(N, W) // panel j/16: [W][16], lane j%16
	kd := f32Data(keys)
	lat, lbuf := newF32(R, N) // Ĉᵀ: panel d/16: [N][16], lane d%16
	ld := f32Data(lat)
	defer scratch.Put(kbuf, lbuf)
	forRanges(threads, (N+L-1)/L, func(_, lo, hi int) {
		for pn := lo; pn < hi; pn++ {
			for l := 0; l < L && pn*L+l < N; l++ {
				src := rows[(pn*L+l)*W : (pn*L+l+1)*W]
				for e, x := range src {
					kd[(pn*W+e)*L+l] = x
				}
			}
		}
	})
	forRanges(threads, (R+L-1)/L, func(_, lo, hi int) {
		for pn := lo; pn < hi; pn++ {
			w := min(L, R-pn*L)
			for k := 0; k < N; k++ {
				copy(ld[(pn*N+k)*L:(pn*N+k)*L+w], rows[k*W+pn*L:k*W+pn*L+w])
			}
		}
	})
	qb := max(1, min(max(prm["qb"], 1), absorbedRows/(NH*N)))
	f32 := []kernel.Class{kernel.ClassF32}
	qa, s, z, sums := scratch.Get(qb*NH*W), scratch.Get(qb*NH*N), scratch.Get(qb*NH*R), scratch.Get(qb*NH)
	defer scratch.Put(qa, s, z, sums)
	for t0 := 0; t0 < T; t0 += qb {
		M := min(qb, T-t0) * NH // rows: query t0+i/NH, head i%NH
		forRanges(threads, M, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				h := i % NH
				src := p.Q[(t0*NH+i)*QW : (t0*NH+i+1)*QW]
				dst := qa[i*W : (i+1)*W]
				clear(dst[:R])
				wuk := p.WUK[h*DN*R : (h+1)*DN*R]
				for e := 0; e < DN; e++ {
					vmath.Axpy(src[e]*p.Scale, wuk[e*R:(e+1)*R], dst[:R])
				}
				for e := 0; e < DR; e++ {
					dst[R+e] = src[DN+e] * p.Scale
				}
			}
		})
		gemm.LinearClasses(f32, s[:M*N], qa[:M*W], keys, M, false, threads)
		forRanges(threads, M, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				row := s[i*N : (i+1)*N]
				vis := p.P + t0 + i/NH + 1
				mx := rowMax(row[:vis])
				for j := range row[:vis] {
					row[j] -= mx
				}
				vmath.Exp(row[:vis], row[:vis])
				sums[i] = rowSum(row[:vis])
				clear(row[vis:])
			}
		})
		gemm.LinearClasses(f32, z[:M*R], s[:M*N], lat, M, false, threads)
		forRanges(threads, M, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				h := i % NH
				zi := z[i*R : (i+1)*R]
				dst := p.O[(t0*NH+i)*DV : (t0*NH+i+1)*DV]
				inv := 1 / sums[i]
				for e := range dst {
					dst[e] = vmath.Dot(p.WUV[(h*DV+e)*R:(h*DV+e+1)*R], zi) * inv
				}
			}
		})
	}
}

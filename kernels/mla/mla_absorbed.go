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
	prefillAbsorbedIn(p, threads, prm, false)
}

// prefillAbsorbedInt8 is prefillAbsorbed with the scores in class int8act:
// the latent rows [Ĉ | k_pe] packed as Q8 keys (packKeysQ8, per row and
// group of 32 as quant.Quantize), the absorbed queries quantized per group
// of 32 by the int8act GEMM. The scores are 576 of the 1088 products per
// query, head and key at Kimi's widths; the latent sums P·Ĉ, the softmax
// and W_UV stay f32.
func prefillAbsorbedInt8(p *Prefill, threads int, prm kernel.Values) {
	prefillAbsorbedIn(p, threads, prm, true)
}

// prefillAbsorbedIn is the absorbed prefill, its scores on Q8 keys in
// class int8act if q8, else f32.
func prefillAbsorbedIn(p *Prefill, threads int, prm kernel.Values, q8 bool) {
	T := p.T()
	N := p.P + T
	NH, DN, DR, DV, R := p.NH, p.DN, p.DR, p.DV, p.R
	W, QW := R+DR, DN+DR
	rows, release := p.cachedRows(N)
	defer release()
	const L = quant.PanelRows
	var keys *quant.Matrix // panel j/16: [W][16], lane j%16 (F32), or Q8's group records
	var kbuf []float32
	scoreCls := []kernel.Class{kernel.ClassF32}
	if q8 {
		keys, kbuf = newQ8(N, W)
		scoreCls = []kernel.Class{kernel.ClassInt8Act}
	} else {
		keys, kbuf = newF32(N, W)
	}
	kd, kpb := f32Data(keys), keys.PanelBytes()
	lat, lbuf := newF32(R, N) // Ĉᵀ: panel d/16: [N][16], lane d%16
	ld := f32Data(lat)
	defer scratch.Put(kbuf, lbuf)
	forRanges(threads, (N+L-1)/L, func(_, lo, hi int) {
		if q8 {
			zero, krow := scratch.Zeroed(max(R, DR)), scratch.Get(keys.Kp)
			defer scratch.Put(zero, krow)
			var kr, pr [L][]float32
			for pn := lo; pn < hi; pn++ {
				for l := range L {
					kr[l], pr[l] = zero[:R], zero[:DR]
					if j := pn*L + l; j < N {
						kr[l], pr[l] = rows[j*W:j*W+R], rows[j*W+R:(j+1)*W]
					}
				}
				packKeysQ8(keys.Data[pn*kpb:(pn+1)*kpb], &kr, &pr, krow)
			}
			return
		}
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
		gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: scoreCls}, s[:M*N], qa[:M*W], keys, M, false, threads)
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
		gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: f32}, z[:M*R], s[:M*N], lat, M, false, threads)
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

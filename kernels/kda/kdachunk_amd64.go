//go:build amd64 && gc && !purego

// amd64 registration and driver of the generated AVX-512 chunked prefill.
package kda

import (
	"unsafe"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// chunkParamAVX512 is chunkParam with a default of 16: the three state
// GEMMs (3·K·V MACs per token) cost the same at every chunk size while the
// intra-chunk work (the solve, the off-diagonal blocks, A·Ṽ) grows with it,
// and 16-token chunks measured ~25% faster than 64 at K = V = 128 here.
var chunkParamAVX512 = kernel.Param{Name: "chunk", Doc: chunkParam.Doc, Values: chunkParam.Values, Default: 16}

func init() {
	register(OpPrefill, kernel.Variant{Name: "avx512_chunk", Doc: "generated AVX-512 chunked WY/UT form (8×32 GEMM tiles, 16-token sub-chunks)",
		Priority: 35, Requires: cpu.NewSet(cpu.AVX512F), Threaded: true, Params: []kernel.Param{chunkParamAVX512}}, chunkAVX512)
}

// laStride is the row stride of the la buffer: row s holds Lᵀ[s, 0:64]
// (L[r,s] for the chunk's rows r) and then Aᵀ[s, 0:64].
const laStride = 128

// diagAVX512 are the diagonal-block kernels by K/16.
var diagAVX512 = [...]func(k *float32, ldk int, qs, alp, beta, la *float32, ldla int, tmp *float32){
	kdacDiagAVX512_1, kdacDiagAVX512_2, kdacDiagAVX512_3, kdacDiagAVX512_4,
	kdacDiagAVX512_5, kdacDiagAVX512_6, kdacDiagAVX512_7, kdacDiagAVX512_8,
}

// chunkAVX512 is chunkGeneric (spec §4) over generated kernels. Per chunk
// of n ≤ C tokens (padded with zero rows to np, a multiple of 16; K padded
// to Kp, a multiple of 16, and V to Vp, a multiple of 32; the padding is
// exact: zero keys, queries, values and β, zero log-gates):
//
//	per 16-token block j:  λ = cumulative g from the block start; α = exp(g)
//	                       QG = s·q ⊙ exp(Γ), KG = k ⊙ exp(Γ)       (exp(Γ) = exp(λ)·E_j)
//	                       KS rows of j = k ⊙ exp(λ_end − λ)         (rebased on the block end)
//	                       diagonal L/A blocks by running products of α
//	                       off-diagonal: [β·k⊙e^λ | s·q⊙e^λ]ᵀ against KS rebased on the block start
//	W = (I+L)⁻¹·diag(β)·KG, U = (I+L)⁻¹·diag(β)·V   (forward substitution)
//	Ṽ = U − W·S;  O = QG·S + A·Ṽ;  S = diag(exp Γ_n)·S + KDᵀ·Ṽ  (KD = k ⊙ exp(Γ_n − Γ))
//
// The state is kept packed by 32-column tiles for the call, and the GEMMs
// prefetch the next chunk's rows (one per 4-KiB page, which the hardware
// prefetchers do not follow). The kernels run with flush-to-zero and
// denormals-are-zero (MXCSR set and restored inside each): products of
// decays underflow routinely with large gates, and every subnormal costs
// a microcode assist; results differ only below 1.2e-38.
//
// K > 128 falls back to chunkGeneric.
func chunkAVX512(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
	C := prm["chunk"]
	if C != 16 && C != 32 && C != 64 {
		C = 16
	}
	if K > 128 {
		chunkGeneric(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, prm, scratch)
		return
	}
	Kp, Vp := (K+15)&^15, (V+31)&^31
	nz := Kp / 16
	padK, padV := Kp != K, Vp != V
	cm := min(C, (T+15)&^15) // rows of the chunk buffers

	// scratch: every buffer 64-byte aligned, and the buffers one cache line
	// apart modulo 4 KiB (most sizes are multiples of 4 KiB; rows at equal
	// offsets would share L1 sets and 4K-alias)
	var size int
	alloc := func(n int) int { off := size; size += (n+15)&^15 + 16; return off }
	oALP, oQS, oQRB, oKRB := alloc(16*Kp), alloc(16*Kp), alloc(16*Kp), alloc(16*Kp)
	oQG, oKG, oKS := alloc(cm*Kp), alloc(cm*Kp), alloc(cm*Kp)
	oU, oLA, oBT := alloc(cm*Vp), alloc(cm*laStride), alloc(Kp*32)
	oE, oCE, oTMP, oBET, oPF := alloc(Kp), alloc(4*Kp), alloc(512), alloc(64), alloc(2*2*5*64)
	oQI, oKI, oGI, oVI, oOB, oS := -1, -1, -1, -1, -1, -1
	if padK || T%16 != 0 {
		oQI, oKI, oGI = alloc(cm*Kp), alloc(cm*Kp), alloc(cm*Kp)
	}
	if padV || T%16 != 0 {
		oVI, oOB = alloc(cm*Vp), alloc(cm*Vp)
	}
	if padK || padV {
		oS = alloc(Kp * Vp)
	}
	oSP := alloc(Kp * Vp)
	raw := grow(scratch, size+16)
	al := int(uintptr(unsafe.Pointer(&raw[0]))&63) / 4
	if al != 0 {
		al = 16 - al
	}
	buf := raw[al : al+size]
	at := func(off, n int) []float32 { return buf[off : off+n] }
	ALP, QS, QRB, KRB := at(oALP, 16*Kp), at(oQS, 16*Kp), at(oQRB, 16*Kp), at(oKRB, 16*Kp)
	QG, KG, KS := at(oQG, cm*Kp), at(oKG, cm*Kp), at(oKS, cm*Kp)
	U, LA, BT := at(oU, cm*Vp), at(oLA, cm*laStride), at(oBT, Kp*32)
	E, CE, TMP, BET := at(oE, Kp), at(oCE, 4*Kp), at(oTMP, 512), at(oBET, 64)
	// the prefetch list: row addresses (integers, never dereferenced in Go)
	PF := (*[2 * 5 * 64]uintptr)(unsafe.Pointer(&buf[oPF]))
	qa, ka, ga := uintptr(unsafe.Pointer(&q[0])), uintptr(unsafe.Pointer(&k[0])), uintptr(unsafe.Pointer(&g[0]))
	va, oa := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&o[0]))

	// the state, packed by 32-column tiles (each tile's rows contiguous, so
	// that it streams into L1 without set conflicts); from a zero-padded
	// copy if K or V is not a whole number of vectors
	S0, ld0 := state[:K*V], V
	if oS >= 0 {
		S0, ld0 = at(oS, Kp*Vp), Vp
		clear(S0)
		for i := 0; i < K; i++ {
			copy(S0[i*Vp:i*Vp+V], state[i*V:(i+1)*V])
		}
	}
	S := at(oSP, Kp*Vp)
	kdacPackAVX512(&S[0], &S0[0], ld0, Kp, Vp/32)
	diag := diagAVX512[nz-1]

	for t0 := 0; t0 < T; t0 += C {
		n := min(C, T-t0)
		np := (n + 15) &^ 15
		nb := np / 16
		for r := range np {
			if r < n {
				BET[r] = beta[(t0+r)*sb]
			} else {
				BET[r] = 0
			}
		}
		// inputs: in place (rows of stride sq, sv) or padded copies
		qi, ki, gi, ldi := q[t0*sq:], k[t0*sq:], g[t0*sq:], sq
		if padK || np != n {
			qi, ki, gi, ldi = at(oQI, np*Kp), at(oKI, np*Kp), at(oGI, np*Kp), Kp
			padRows(qi, q[t0*sq:], n, np, K, Kp, sq)
			padRows(ki, k[t0*sq:], n, np, K, Kp, sq)
			padRows(gi, g[t0*sq:], n, np, K, Kp, sq)
		}
		_ = qi[(np-1)*ldi+Kp-1]
		_ = ki[(np-1)*ldi+Kp-1]
		_ = gi[(np-1)*ldi+Kp-1]
		vi, ldv := v[t0*sv:], sv
		oo, ldo := o[t0*sv:], sv
		if padV || np != n {
			vi, ldv = at(oVI, np*Vp), Vp
			padRows(vi, v[t0*sv:], n, np, V, Vp, sv)
			oo, ldo = at(oOB, np*Vp), Vp
		}
		_ = vi[(np-1)*ldv+Vp-1]
		_ = oo[(np-1)*ldo+Vp-1]

		// rows of the next chunk (or of the next head, which this thread
		// likely runs next) to prefetch during this chunk's GEMMs
		npf := 0
		{
			t1, n1, dk, dv := t0+C, min(C, T-t0-C), uintptr(0), uintptr(0)
			if n1 <= 0 {
				t1, n1, dk, dv = 0, min(C, T), uintptr(4*K), uintptr(4*V)
			}
			for _, s := range [...]struct {
				a, off uintptr
				ld     int
			}{{qa, dk, sq}, {ka, dk, sq}, {ga, dk, sq}, {va, dv, sv}, {oa, dv, sv}} {
				for r := range n1 {
					a := s.a + s.off + uintptr(4*(t1+r)*s.ld)
					PF[npf], PF[npf+1] = a, a+256
					npf += 2
				}
			}
		}
		pfc := 0
		pf := func(pops int) (*uintptr, int) {
			n := min(npf-pfc, pops)
			if n == 0 {
				return &PF[0], 0
			}
			p := &PF[pfc]
			pfc += n
			return p, n
		}
		for i := range E {
			E[i] = 1
		}
		for j := range nb {
			b0 := 16 * j
			kdacPrepAVX512(&qi[b0*ldi], &ki[b0*ldi], &gi[b0*ldi], ldi, &BET[b0], scale, &E[0], nz, j,
				&ALP[0], &QS[0], &QRB[0], &KRB[0], &QG[b0*Kp], &KG[b0*Kp], &KS[b0*Kp], &CE[j*Kp])
			diag(&ki[b0*ldi], ldi, &QS[0], &ALP[0], &BET[b0], &LA[b0*laStride+b0], laStride, &TMP[0])
			if j == 0 {
				continue
			}
			// off-diagonal: rows s < b0 of KS, rebased on this block's start
			kdacTransposeAVX512(&KRB[0], Kp, &BT[0], 32, nz)
			kdacTransposeAVX512(&QRB[0], Kp, &BT[16], 32, nz)
			if j > 1 {
				kdacRowScaleAVX512(&KS[0], Kp, &CE[(j-1)*Kp], b0-16, nz)
			}
			kdacGemmSplitAVX512(&KS[0], Kp, &BT[0], 32, &LA[b0], laStride, b0, 32, Kp, 0, nil, &PF[0], 0)
		}
		if nb > 1 { // KD = k ⊙ exp(Γ_n − Γ)
			kdacRowScaleAVX512(&KS[0], Kp, &CE[(nb-1)*Kp], np-16, nz)
		}
		// W (in place of KG) and U
		trsmAVX512(LA, BET, KG, Kp, KG, Kp, np, Kp)
		trsmAVX512(LA, BET, vi, ldv, U, Vp, np, Vp)
		// Ṽ = U − W·S (in place of U); O = QG·S + A·Ṽ; S = diag(exp Γ_n)·S + KDᵀ·Ṽ
		p, c := pf(npf)
		kdacOutAVX512(&KG[0], &QG[0], Kp, &S[0], 32, Kp*32, &U[0], Vp, &LA[64], laStride, &oo[0], ldo, &KS[0], &E[0], np, Vp, Kp, p, c)
		if padV || np != n {
			for r := range n {
				copy(o[(t0+r)*sv:(t0+r)*sv+V], oo[r*Vp:r*Vp+V])
			}
		}
	}
	kdacUnpackAVX512(&S0[0], &S[0], ld0, Kp, Vp/32)
	if oS >= 0 {
		for i := 0; i < K; i++ {
			copy(state[i*V:(i+1)*V], S0[i*Vp:i*Vp+V])
		}
	}
}

// padRows copies n rows of width w (stride ld) into dst (np rows of stride
// wp), zero-filling the padding.
func padRows(dst, src []float32, n, np, w, wp, ld int) {
	clear(dst[:np*wp])
	for r := range n {
		copy(dst[r*wp:r*wp+w], src[r*ld:r*ld+w])
	}
}

// trsmAVX512 runs the forward substitution over width columns (a multiple
// of 16) in strips of 128, 64, 32 and 16.
func trsmAVX512(la, bet, src []float32, lds int, dst []float32, ldd, np, width int) {
	c := 0
	for _, w := range []int{8, 4, 2, 1} {
		ns := (width - c) / (16 * w)
		if ns == 0 {
			continue
		}
		fn := kdacTrsmAVX512_1
		switch w {
		case 8:
			fn = kdacTrsmAVX512_8
		case 4:
			fn = kdacTrsmAVX512_4
		case 2:
			fn = kdacTrsmAVX512_2
		}
		fn(&la[0], laStride, &bet[0], &src[c], lds, &dst[c], ldd, np, ns)
		c += 16 * w * ns
	}
}

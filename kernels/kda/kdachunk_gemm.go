package kda

import (
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/vmath"
)

// gemmFn is the one primitive the GEMM-driven chunked form needs from an
// ISA: row-major C[m×n] += alpha·A[m×k]·B[k×n] with leading dimensions,
// every size ≥ 0 (see gemmGo).
type gemmFn func(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, alpha float32)

// gemmGo is gemmFn in plain Go: the semantics of the asm tiles.
//
//	for i < m { for j < n { var acc float32; for p < k { acc += a[i*lda+p]·b[p*ldb+j] }; c[i*ldc+j] += alpha·acc } }
func gemmGo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, alpha float32) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc float32
			for p := 0; p < k; p++ {
				acc += a[i*lda+p] * b[p*ldb+j]
			}
			c[i*ldc+j] += alpha * acc
		}
	}
}

// chunkGEMM returns chunkGeneric's chunked WY/UT form (spec §4) with every
// product of the chunk (the off-diagonal L/A blocks, the forward
// substitution, Ṽ = U − W·S, O = QG·S + A·Ṽ and the state update) done by
// gemm; the gates, the diagonal L/A blocks (running products of the decays)
// and the state's decay stay in Go. Operands that gemm needs transposed
// (the rebased keys KS and KD) are written transposed, [K][n], when they
// are formed. The exponentials go through vmath.Exp a row at a time.
func chunkGEMM(gemm gemmFn) headFn {
	return func(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
		C := prm["chunk"]
		if C < 1 {
			C = 64
		}
		n := min(C, T)
		// Γ, α, qs, qg, kg, kr, qr, W [n][K]; ksT, kdT [K][n]; L, A [n][n]; U, Vt [n][V]; f, e [K]
		buf := grow(scratch, 10*n*K+2*n*n+2*n*V+2*K)
		off := 0
		take := func(m int) []float32 { s := buf[off : off+m]; off += m; return s }
		gam, alp, qs, qg, kg := take(n*K), take(n*K), take(n*K), take(n*K), take(n*K)
		kr, qr, W, ksT, kdT := take(n*K), take(n*K), take(n*K), take(n*K), take(n*K)
		L, A := take(n*n), take(n*n)
		U, Vt := take(n*V), take(n*V)
		f, e := take(K), take(K)
		ld := n // row stride of ksT, kdT, L, A (the first chunk's size)
		for t0 := 0; t0 < T; t0 += C {
			n := min(C, T-t0)
			// 1. cumulative log gates (float64), decays, scaled queries.
			for d := 0; d < K; d++ {
				var c float64
				for r := 0; r < n; r++ {
					c += float64(g[(t0+r)*sq+d])
					gam[r*K+d] = float32(c)
				}
			}
			last := gam[(n-1)*K : n*K]
			for r := 0; r < n; r++ {
				vmath.Exp(alp[r*K:(r+1)*K], g[(t0+r)*sq:(t0+r)*sq+K])
				kt := k[(t0+r)*sq : (t0+r)*sq+K]
				vmath.Exp(e, gam[r*K:(r+1)*K])
				for d := 0; d < K; d++ {
					qs[r*K+d] = scale * q[(t0+r)*sq+d]
					qg[r*K+d] = qs[r*K+d] * e[d]
					kg[r*K+d] = kt[d] * e[d]
					e[d] = last[d] - gam[r*K+d]
				}
				vmath.Exp(e, e)
				for d := 0; d < K; d++ {
					kdT[d*ld+r] = kt[d] * e[d]
				}
			}
			// 2. L (strictly lower, ×β_r) and A (lower with diagonal).
			clear(L[:n*ld])
			clear(A[:n*ld])
			for b0 := 0; b0 < n; b0 += subChunk {
				e0 := min(b0+subChunk, n)
				if b0 > 0 {
					// off-diagonal: [β·kr; qr] (rows b0..e0) · ksTᵀ (tokens 0..b0)
					ref := gam[(b0-1)*K : b0*K]
					for s := 0; s < b0; s++ {
						for d := 0; d < K; d++ {
							e[d] = ref[d] - gam[s*K+d]
						}
						vmath.Exp(e, e)
						for d := 0; d < K; d++ {
							ksT[d*ld+s] = k[(t0+s)*sq+d] * e[d]
						}
					}
					for r := b0; r < e0; r++ {
						br := beta[(t0+r)*sb]
						for d := 0; d < K; d++ {
							e[d] = gam[r*K+d] - ref[d]
						}
						vmath.Exp(e, e)
						for d := 0; d < K; d++ {
							kr[r*K+d] = br * (k[(t0+r)*sq+d] * e[d])
							qr[r*K+d] = qs[r*K+d] * e[d]
						}
					}
					gemm(L[b0*ld:], ld, kr[b0*K:], K, ksT, ld, e0-b0, b0, K, 1)
					gemm(A[b0*ld:], ld, qr[b0*K:], K, ksT, ld, e0-b0, b0, K, 1)
				}
				for r := b0; r < e0; r++ {
					for d := range f {
						f[d] = 1
					}
					br := beta[(t0+r)*sb]
					kr := k[(t0+r)*sq : (t0+r)*sq+K]
					qr := qs[r*K : (r+1)*K]
					for s := r; s >= b0; s-- {
						kss := k[(t0+s)*sq : (t0+s)*sq+K]
						var lk, aq float32
						for d, fd := range f {
							kf := kss[d] * fd
							lk += kr[d] * kf
							aq += qr[d] * kf
						}
						if s < r {
							L[r*ld+s] = br * lk
						}
						A[r*ld+s] = aq
						as := alp[s*K : (s+1)*K]
						for d := range f {
							f[d] *= as[d]
						}
					}
				}
			}
			// 3–4. forward substitution: (I + L)·[W U] = diag(β)·[kg V],
			// row r: [W U]_r = β_r·[kg V]_r − L[r, 0:r]·[W U]_{0:r}.
			for r := 0; r < n; r++ {
				br := beta[(t0+r)*sb]
				wr, ur := W[r*K:(r+1)*K], U[r*V:(r+1)*V]
				for d := range wr {
					wr[d] = br * kg[r*K+d]
				}
				vr := v[(t0+r)*sv : (t0+r)*sv+V]
				for j := range ur {
					ur[j] = br * vr[j]
				}
				gemm(wr, K, L[r*ld:], ld, W, K, 1, K, r, -1)
				gemm(ur, V, L[r*ld:], ld, U, V, 1, V, r, -1)
			}
			// 5. Ṽ = U − W·S.
			copy(Vt[:n*V], U[:n*V])
			gemm(Vt, V, W, K, state, V, n, V, K, -1)
			// 6. O = (Q ⊙ exp Γ)·S + A·Ṽ.
			ot := o[t0*sv:]
			for r := 0; r < n; r++ {
				clear(ot[r*sv : r*sv+V])
			}
			gemm(ot, sv, qg, K, state, V, n, V, K, 1)
			gemm(ot, sv, A, ld, Vt, V, n, V, n, 1)
			// 7. S = diag(exp Γ_n)·S + KDᵀ·Ṽ  (KD = exp(Γ_n − Γ) ⊙ K).
			vmath.Exp(e, last)
			for i := 0; i < K; i++ {
				row := state[i*V : (i+1)*V]
				for j := range row {
					row[j] *= e[i]
				}
			}
			gemm(state, V, kdT, ld, Vt, V, K, V, n, 1)
		}
	}
}

package kda

import (
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/vmath"
)

func grow(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}

// recurrentGeneric is the token recurrence in f32. For each token it runs
// the two phases over strips of value columns so that a strip of the
// state (K rows × strip columns) stays in L1 between them:
//
//	phase 1, per row i:  S[i,strip] *= α_i;   p[strip] += k_i·S[i,strip]
//	                     u = β(v − p)
//	phase 2, per row i:  S[i,strip] += k_i·u;  o[strip] += (s·q_i)·S[i,strip]
func recurrentGeneric(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
	if prm["layout"] == LayoutVK {
		recurrentVKGeneric(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch)
		return
	}
	strip := prm["strip"]
	if strip < 1 {
		strip = 32
	}
	buf := grow(scratch, 2*K+3*strip)
	alpha, qs := buf[:K], buf[K:2*K]
	p, u, oo := buf[2*K:2*K+strip], buf[2*K+strip:2*K+2*strip], buf[2*K+2*strip:]
	for t := 0; t < T; t++ {
		qt, kt, gt := q[t*sq:t*sq+K], k[t*sq:t*sq+K], g[t*sq:t*sq+K]
		vt, ot, b := v[t*sv:t*sv+V], o[t*sv:t*sv+V], beta[t*sb]
		for i := range alpha {
			alpha[i] = float32(math.Exp(float64(gt[i])))
			qs[i] = scale * qt[i]
		}
		for j0 := 0; j0 < V; j0 += strip {
			w := min(strip, V-j0)
			pp, uu, op := p[:w], u[:w], oo[:w]
			clear(pp)
			for i := 0; i < K; i++ {
				row := state[i*V+j0 : i*V+j0+w]
				a, ki := alpha[i], kt[i]
				for j := range row {
					row[j] *= a
					pp[j] += ki * row[j]
				}
			}
			for j := range uu {
				uu[j] = b * (vt[j0+j] - pp[j])
			}
			clear(op)
			for i := 0; i < K; i++ {
				row := state[i*V+j0 : i*V+j0+w]
				ki, qi := kt[i], qs[i]
				for j := range row {
					row[j] += ki * uu[j]
					op[j] += qi * row[j]
				}
			}
			copy(ot[j0:j0+w], op)
		}
	}
}

// recurrentVKGeneric is the token recurrence on a value-major state
// (row j = value channel j over the K key channels): one pass per token,
//
//	t = α ⊙ S[j];  p = k·t;  u = β(v_j − p);  S[j] = t + u·k;  o_j = (s·q)·S[j]
func recurrentVKGeneric(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, scratch *[]float32) {
	buf := grow(scratch, 2*K)
	alpha, qs := buf[:K], buf[K:]
	for t := 0; t < T; t++ {
		qt, kt, gt := q[t*sq:t*sq+K], k[t*sq:t*sq+K], g[t*sq:t*sq+K]
		vt, ot, b := v[t*sv:t*sv+V], o[t*sv:t*sv+V], beta[t*sb]
		vmath.Exp(alpha, gt)
		for i := range qs {
			qs[i] = scale * qt[i]
		}
		for j := 0; j < V; j++ {
			row := state[j*K : (j+1)*K]
			var p float32
			for i := range row {
				row[i] *= alpha[i]
				p += kt[i] * row[i]
			}
			u := b * (vt[j] - p)
			var out float32
			for i := range row {
				row[i] += u * kt[i]
				out += qs[i] * row[i]
			}
			ot[j] = out
		}
	}
}

// subChunk is the sub-block size inside a chunk: pairs in different
// sub-blocks are rebased on the later one's start (a plain dot product of
// gate-scaled rows); pairs inside one use running products of the
// per-token decays, so no exponential ever has a positive argument.
const subChunk = 16

// chunkGeneric is the chunked WY/UT form (spec §4) in f32, chunk size from
// the "chunk" parameter; the last chunk may be ragged.
func chunkGeneric(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
	C := prm["chunk"]
	if C < 1 {
		C = 64
	}
	n := min(C, T)
	// buffers: Γ, α, qs, qg, kg, kd, kr, qr, ks [n][K]; L, A [n][n]; W [n][K]; U, Vt [n][V]
	buf := grow(scratch, 10*n*K+2*n*n+2*n*V+K)
	off := 0
	take := func(m int) []float32 { s := buf[off : off+m]; off += m; return s }
	gam, alp, qs, qg, kg, kd := take(n*K), take(n*K), take(n*K), take(n*K), take(n*K), take(n*K)
	kr, qr, ks, W := take(n*K), take(n*K), take(n*K), take(n*K)
	L, A := take(n*n), take(n*n)
	U, Vt := take(n*V), take(n*V)
	f := take(K)
	for t0 := 0; t0 < T; t0 += C {
		n := min(C, T-t0)
		// 1. cumulative log gates (accumulated in float64), per-token decays,
		// scaled queries.
		for d := 0; d < K; d++ {
			var c float64
			for r := 0; r < n; r++ {
				gv := float64(g[(t0+r)*sq+d])
				c += gv
				gam[r*K+d] = float32(c)
				alp[r*K+d] = float32(math.Exp(gv))
			}
		}
		for r := 0; r < n; r++ {
			for d := 0; d < K; d++ {
				qs[r*K+d] = scale * q[(t0+r)*sq+d]
				e := float32(math.Exp(float64(gam[r*K+d])))
				qg[r*K+d] = qs[r*K+d] * e
				kg[r*K+d] = k[(t0+r)*sq+d] * e
				kd[r*K+d] = k[(t0+r)*sq+d] * float32(math.Exp(float64(gam[(n-1)*K+d]-gam[r*K+d])))
			}
		}
		// 2. L (strictly lower, ×β_r) and A (lower with diagonal).
		clear(L[:n*n])
		clear(A[:n*n])
		for b0 := 0; b0 < n; b0 += subChunk {
			e0 := min(b0+subChunk, n)
			if b0 > 0 {
				ref := gam[(b0-1)*K : b0*K]
				for s := 0; s < b0; s++ {
					for d := 0; d < K; d++ {
						ks[s*K+d] = k[(t0+s)*sq+d] * float32(math.Exp(float64(ref[d]-gam[s*K+d])))
					}
				}
				for r := b0; r < e0; r++ {
					for d := 0; d < K; d++ {
						e := float32(math.Exp(float64(gam[r*K+d] - ref[d])))
						kr[r*K+d] = k[(t0+r)*sq+d] * e
						qr[r*K+d] = qs[r*K+d] * e
					}
					br := beta[(t0+r)*sb]
					for s := 0; s < b0; s++ {
						L[r*n+s] = br * vmath.Dot(kr[r*K:(r+1)*K], ks[s*K:(s+1)*K])
						A[r*n+s] = vmath.Dot(qr[r*K:(r+1)*K], ks[s*K:(s+1)*K])
					}
				}
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
						L[r*n+s] = br * lk
					}
					A[r*n+s] = aq
					as := alp[s*K : (s+1)*K]
					for d := range f {
						f[d] *= as[d]
					}
				}
			}
		}
		// 3–4. forward substitution: (I + L)·[W U] = diag(β)·[kg V].
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
			for s := 0; s < r; s++ {
				l := L[r*n+s]
				if l == 0 {
					continue
				}
				vmath.Axpy(-l, W[s*K:(s+1)*K], wr)
				vmath.Axpy(-l, U[s*V:(s+1)*V], ur)
			}
		}
		// 5. Ṽ = U − W·S.
		for r := 0; r < n; r++ {
			vt := Vt[r*V : (r+1)*V]
			copy(vt, U[r*V:(r+1)*V])
			wr := W[r*K : (r+1)*K]
			for i := 0; i < K; i++ {
				vmath.Axpy(-wr[i], state[i*V:(i+1)*V], vt)
			}
		}
		// 6. O = (Q ⊙ exp Γ)·S + A·Ṽ.
		for r := 0; r < n; r++ {
			or := o[(t0+r)*sv : (t0+r)*sv+V]
			clear(or)
			qgr := qg[r*K : (r+1)*K]
			for i := 0; i < K; i++ {
				vmath.Axpy(qgr[i], state[i*V:(i+1)*V], or)
			}
			for s := 0; s <= r; s++ {
				vmath.Axpy(A[r*n+s], Vt[s*V:(s+1)*V], or)
			}
		}
		// 7. S = diag(exp Γ_n)·S + (exp(Γ_n − Γ) ⊙ K)ᵀ·Ṽ.
		last := gam[(n-1)*K : n*K]
		for i := 0; i < K; i++ {
			row := state[i*V : (i+1)*V]
			e := float32(math.Exp(float64(last[i])))
			for j := range row {
				row[j] *= e
			}
			for s := 0; s < n; s++ {
				vmath.Axpy(kd[s*K+i], Vt[s*V:(s+1)*V], row)
			}
		}
	}
}

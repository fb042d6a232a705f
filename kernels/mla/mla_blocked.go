package mla

import (
	"math"
	"unsafe"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
)

// prefillBlocked is causal prefill in the decompressed ("naive") form on
// the tuned GEMM kernels, which is the cheaper form when the queries are as
// many as the cached tokens or more (no long prefix):
//
//	Kn = Ĉ·W_UKᵀ, V = Ĉ·W_UVᵀ                   all heads at once, [N][NH·DN] and [N][NH·DV]
//	per head h and block of qb queries (N_vis = P + end of the block):
//	  S = Q_h·[Kn_h | k_pe]ᵀ · scale            [qb][N_vis], causal mask, softmax by rows
//	  O_h = S·V_h / rowsum                       [qb][DV]
//
// The keys of a head are packed once as GEMM weights [N][DN+DR] (a prefix
// of their panels is the visible keys of a block); V_hᵀ is packed per block
// for its visible prefix. Heads are spread over the threads, each head's
// GEMMs on one thread; the decompression GEMMs use all of them.
func prefillBlocked(p *Prefill, threads int, prm kernel.Values) {
	qb := max(prm["qb"], 1)
	T := p.T()
	N := p.P + T
	NH, DN, DR, DV, R := p.NH, p.DN, p.DR, p.DV, p.R
	W, QW := R+DR, DN+DR
	// ---- latent rows: Ĉ [N][R] and k_pe [N][DR]
	rows, release := p.cachedRows(N)
	defer release()
	lat := scratch.Get(N * R)
	defer scratch.Put(lat)
	for j := 0; j < N; j++ {
		copy(lat[j*R:(j+1)*R], rows[j*W:j*W+R])
	}
	// ---- decompress: Kn [N][NH·DN], V [N][NH·DV]
	f32 := []kernel.Class{kernel.ClassF32}
	kn, vv := scratch.Get(N*NH*DN), scratch.Get(N*NH*DV)
	defer scratch.Put(kn, vv)
	gemm.LinearClasses(f32, kn, lat, packedF32(p.WUKp, p.WUK, NH*DN, R), N, false, threads)
	gemm.LinearClasses(f32, vv, lat, packedF32(p.WUVp, p.WUV, NH*DV, R), N, false, threads)
	forRanges(threads, NH, func(_, lo, hi int) {
		kmat, kbuf := newF32(N, QW)
		kd := f32Data(kmat)
		s, q, o, sums := scratch.Get(qb*N), scratch.Get(qb*QW), scratch.Get(qb*DV), scratch.Get(qb)
		vt, vbuf := newF32(DV, N)
		defer scratch.Put(kbuf, s, q, o, sums, vbuf)
		for h := lo; h < hi; h++ {
			// keys of head h as weights: panel j/16 holds [QW][16] (lane j%16);
			// written sequentially, read from 16 token rows at a time
			const L = quant.PanelRows
			for j0 := 0; j0 < N; j0 += L {
				dst := kd[(j0/L)*QW*L : (j0/L+1)*QW*L]
				for l := 0; l < L; l++ {
					if j0+l >= N {
						for e := 0; e < QW; e++ {
							dst[e*L+l] = 0
						}
						continue
					}
					src := kn[(j0+l)*NH*DN+h*DN : (j0+l)*NH*DN+(h+1)*DN]
					pe := rows[(j0+l)*W+R : (j0+l+1)*W]
					for e, x := range src {
						dst[e*L+l] = x
					}
					for e, x := range pe {
						dst[(DN+e)*L+l] = x
					}
				}
			}
			for i0 := 0; i0 < T; i0 += qb {
				m := min(qb, T-i0)
				nv := p.P + i0 + m       // keys visible to the block's last query
				for t := 0; t < m; t++ { // the scale folded into the queries
					src := p.Q[((i0+t)*NH+h)*QW : ((i0+t)*NH+h+1)*QW]
					for e, x := range src {
						q[t*QW+e] = x * p.Scale
					}
				}
				km := viewF32(kmat, nv)
				gemm.LinearClasses(f32, s[:m*nv], q[:m*QW], km, m, false, 1)
				// causal softmax by rows: query i0+t sees keys < P+i0+t+1
				for t := 0; t < m; t++ {
					row := s[t*nv : (t+1)*nv]
					vis := p.P + i0 + t + 1
					mx := rowMax(row[:vis])
					for j := range row[:vis] {
						row[j] -= mx
					}
					vmath.Exp(row[:vis], row[:vis])
					sums[t] = rowSum(row[:vis])
					clear(row[vis:])
				}
				// V_hᵀ over the visible keys as weights [DV][nv]: panel d/16 holds
				// V[k][h·DV + 16·panel + lane] at [k][lane]
				vm := packVT(vt, vv, h, NH, DV, nv)
				gemm.LinearClasses(f32, o[:m*DV], s[:m*nv], vm, m, false, 1)
				for t := 0; t < m; t++ {
					dst := p.O[((i0+t)*NH+h)*DV : ((i0+t)*NH+h+1)*DV]
					inv := 1 / sums[t]
					for e, x := range o[t*DV : (t+1)*DV] {
						dst[e] = x * inv
					}
				}
			}
		}
	})
}

// cachedRows is the first n rows of the cache as f32 [n][R+DR]: a view of
// an f32 cache, else converted into scratch memory that release returns.
func (p *Prefill) cachedRows(n int) (rows []float32, release func()) {
	if rows, ok := p.Cache.View(0, n); ok {
		return rows, func() {}
	}
	rows = scratch.Get(n * (p.R + p.DR))
	p.Cache.Block(0, n, rows)
	return rows, func() { scratch.Put(rows) }
}

// newF32 is a zeroed F32 packed matrix of n×k on scratch memory; give
// its buffer back with scratch.Put when done.
func newF32(n, k int) (*quant.Matrix, []float32) {
	buf := scratch.Zeroed(int(quant.Size(kernel.F32, n, k, false) / 4))
	m, err := quant.View(kernel.F32, n, k, false, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*len(buf)))
	if err != nil {
		panic(err) // shapes come from a validated problem
	}
	return m, buf
}

// f32Data views an F32 matrix's bytes as floats.
func f32Data(m *quant.Matrix) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(m.Data))), len(m.Data)/4)
}

// viewF32 is the matrix of the first n rows of m (whole panels are
// contiguous, so this is a prefix of its bytes).
func viewF32(m *quant.Matrix, n int) *quant.Matrix {
	v, err := quant.View(kernel.F32, n, m.K, false, m.Data[:quant.Size(kernel.F32, n, m.K, false)])
	if err != nil {
		panic(err)
	}
	return v
}

// packVT writes V_hᵀ restricted to the first nv keys into buf's storage as
// an F32 matrix of DV rows and nv columns.
func packVT(buf *quant.Matrix, v []float32, h, NH, DV, nv int) *quant.Matrix {
	m := &quant.Matrix{DType: kernel.F32, N: DV, K: nv, Np: quant.PaddedN(DV), Kp: nv,
		Data: buf.Data[:quant.Size(kernel.F32, DV, nv, false)]}
	d := f32Data(m)
	const P = quant.PanelRows
	for pn := 0; pn < m.Np/P; pn++ {
		c0 := h*DV + pn*P
		w := min(P, DV-pn*P)
		for k := 0; k < nv; k++ {
			dst := d[(pn*nv+k)*P : (pn*nv+k)*P+P]
			copy(dst[:w], v[k*NH*DV+c0:k*NH*DV+c0+w])
			clear(dst[w:])
		}
	}
	return m
}

// packedF32 returns m, or w packed as an F32 matrix [n][k] when m is nil.
func packedF32(m *quant.Matrix, w []float32, n, k int) *quant.Matrix {
	if m != nil {
		return m
	}
	m, err := quant.Quantize(kernel.F32, w, n, k, false)
	if err != nil {
		panic(err) // shapes come from a validated problem
	}
	return m
}

// rowMax is the largest value of x (four independent chains).
func rowMax(x []float32) float32 {
	m0, m1, m2, m3 := float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))
	i := 0
	for ; i+4 <= len(x); i += 4 {
		m0, m1, m2, m3 = max(m0, x[i]), max(m1, x[i+1]), max(m2, x[i+2]), max(m3, x[i+3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// rowSum is the sum of x (four independent chains).
func rowSum(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0, s1, s2, s3 = s0+x[i], s1+x[i+1], s2+x[i+2], s3+x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

package mla

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"github.com/ktune/ktune/internal/half"
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
// The queries are gathered head-major once (the scale folded in), so a
// block's queries are contiguous GEMM activations; the keys of a head are
// packed once as GEMM weights [N][DN+DR] (a prefix of their panels is the
// visible keys of a block); V_hᵀ is packed per block for its visible
// prefix; each head's outputs are written head-major and scattered into
// O [T][NH][DV] at the end, divided by the row sums on the way. Heads are
// spread over the threads, each head's GEMMs on one thread; the
// decompression GEMMs and the gather and scatter use all of them.
func prefillBlocked(p *Prefill, threads int, prm kernel.Values) {
	f32 := []kernel.Class{kernel.ClassF32}
	prefillDecompressed(p, threads, prm, f32, packedF32(p.WUKp, p.WUK, p.NH*p.DN, p.R), packedF32(p.WUVp, p.WUV, p.NH*p.DV, p.R))
}

// prefillBlockedInt8 is prefillBlocked in class int8act: the decompression
// on Q8 W_UK and W_UV (p.WUKq, p.WUVq, or quantized per call), the latent
// rows quantized to int8 per group of 32 by the GEMM; and the scores on
// each head's keys packed as Q8 (packKeysQ8), the scaled queries quantized
// by the GEMM. Softmax and the product with V stay f32.
func prefillBlockedInt8(p *Prefill, threads int, prm kernel.Values) {
	i8 := []kernel.Class{kernel.ClassInt8Act}
	prefillDecompressed(p, threads, prm, i8, packedQ8(p.WUKq, p.WUK, p.NH*p.DN, p.R), packedQ8(p.WUVq, p.WUV, p.NH*p.DV, p.R))
}

// prefillDecompressed is prefillBlocked with the decompression GEMMs
// Ĉ·W_UKᵀ and Ĉ·W_UVᵀ run in the accuracy classes cls on wk [NH·DN, R]
// and wv [NH·DV, R]; with cls int8act the scores too, on Q8 keys; the
// rest of the attention is f32.
func prefillDecompressed(p *Prefill, threads int, prm kernel.Values, cls []kernel.Class, wk, wv *quant.Matrix) {
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
	gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: cls}, kn, lat, wk, N, false, threads)
	gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: cls}, vv, lat, wv, N, false, threads)
	// ---- queries head by head, the scale folded in: qh [NH][T][QW]
	qh, oh, inv := scratch.Get(NH*T*QW), scratch.Get(NH*T*DV), scratch.Get(NH*T)
	defer scratch.Put(qh, oh, inv)
	forRanges(threads, T, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			for h := 0; h < NH; h++ {
				scaleTo(qh[(h*T+t)*QW:(h*T+t+1)*QW], p.Q[(t*NH+h)*QW:(t*NH+h+1)*QW], p.Scale)
			}
		}
	})
	q8 := slices.Contains(cls, kernel.ClassInt8Act)
	forRanges(threads, NH, func(_, lo, hi int) {
		var kmat *quant.Matrix
		var kbuf, krow []float32
		if q8 {
			kmat, kbuf = newQ8(N, QW)
			krow = scratch.Get(kmat.Kp)
			defer scratch.Put(krow)
		} else {
			kmat, kbuf = newF32(N, QW)
		}
		kd, kpb := f32Data(kmat), kmat.PanelBytes()
		s := scratch.Get(qb * N)
		vt, vbuf := newF32(DV, N)
		zero, ones := scratch.Zeroed(max(DN, DR)), scratch.Get(N)
		defer scratch.Put(kbuf, s, vbuf, zero, ones)
		for j := range ones {
			ones[j] = 1
		}
		const L = quant.PanelRows
		var kr, pr [L][]float32
		for h := lo; h < hi; h++ {
			// keys of head h as weights: panel j/16 holds [QW][16] (lane
			// j%16), the transpose of 16 token rows [Kn_h | k_pe]
			for j0 := 0; j0 < N; j0 += L {
				for l := range L {
					kr[l], pr[l] = zero[:DN], zero[:DR]
					if j := j0 + l; j < N {
						kr[l], pr[l] = kn[(j*NH+h)*DN:(j*NH+h+1)*DN], rows[j*W+R:(j+1)*W]
					}
				}
				if q8 {
					packKeysQ8(kmat.Data[(j0/L)*kpb:(j0/L+1)*kpb], &kr, &pr, krow)
					continue
				}
				dst := kd[(j0/L)*QW*L : (j0/L+1)*QW*L]
				transpose16(dst[:DN*L], &kr, DN)
				transpose16(dst[DN*L:], &pr, DR)
			}
			for i0 := 0; i0 < T; i0 += qb {
				m := min(qb, T-i0)
				nv := p.P + i0 + m // keys visible to the block's last query
				gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: cls}, s[:m*nv], qh[(h*T+i0)*QW:(h*T+i0+m)*QW], viewRows(kmat, nv), m, false, 1)
				// causal softmax by rows: query i0+t sees keys < P+i0+t+1; the
				// shift and exp run on whole vectors up to vp (the scores past
				// vis are finite products with later keys, cleared after)
				for t := 0; t < m; t++ {
					row := s[t*nv : (t+1)*nv]
					vis := p.P + i0 + t + 1
					vp := min((vis+15)&^15, nv)
					mx := rowMax(row[:vis])
					vmath.Axpy(-mx, ones, row[:vp])
					vmath.Exp(row[:vp], row[:vp])
					clear(row[vis:])
					inv[h*T+i0+t] = 1 / vmath.Dot(row[:vis], ones)
				}
				// V_hᵀ over the visible keys as weights [DV][nv]: panel d/16 holds
				// V[k][h·DV + 16·panel + lane] at [k][lane]
				vm := packVT(vt, vv, h, NH, DV, nv)
				o := oh[(h*T+i0)*DV : (h*T+i0+m)*DV]
				gemm.LinearWith(kernel.Rules{Chooser: p.Chooser, Classes: f32}, o, s[:m*nv], vm, m, false, 1)
			}
		}
	})
	// ---- O [T][NH][DV] from the heads' outputs oh [NH][T][DV]
	forRanges(threads, T, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			for h := 0; h < NH; h++ {
				scaleTo(p.O[(t*NH+h)*DV:(t*NH+h+1)*DV], oh[(h*T+t)*DV:(h*T+t+1)*DV], inv[h*T+t])
			}
		}
	})
}

// transpose16 writes dst[e·16 + l] = src[l][e] for e < w and l < 16:
// 16 rows of w values into the [w][16] layout of an F32 panel.
func transpose16(dst []float32, src *[16][]float32, w int) {
	s0, s1, s2, s3 := src[0][:w], src[1][:w], src[2][:w], src[3][:w]
	s4, s5, s6, s7 := src[4][:w], src[5][:w], src[6][:w], src[7][:w]
	s8, s9, s10, s11 := src[8][:w], src[9][:w], src[10][:w], src[11][:w]
	s12, s13, s14, s15 := src[12][:w], src[13][:w], src[14][:w], src[15][:w]
	dst = dst[:16*w]
	for e := 0; e < w; e++ {
		d := dst[16*e : 16*e+16 : 16*e+16]
		d[0], d[1], d[2], d[3] = s0[e], s1[e], s2[e], s3[e]
		d[4], d[5], d[6], d[7] = s4[e], s5[e], s6[e], s7[e]
		d[8], d[9], d[10], d[11] = s8[e], s9[e], s10[e], s11[e]
		d[12], d[13], d[14], d[15] = s12[e], s13[e], s14[e], s15[e]
	}
}

// packKeysQ8 writes the 16 rows [kr[l] | pr[l]] (all kr[l] of one length,
// all pr[l] of another) as one panel of a Q8 matrix (quant's layout: per
// group of 32 columns, [8][16][4] bytes u = q+128, then [16] f16 scales)
// into dst, with quant.Quantize's scale: d = f16(max|w|/127) per row and
// group. The values are rounded as rne(w·(1/d)) where Quantize divides,
// w/d: the two agree but for rare ties (TestPackKeysQ8). row is scratch
// of the padded width. A NaN makes its group's scale NaN.
func packKeysQ8(dst []byte, kr, pr *[16][]float32, row []float32) {
	const G, L = quant.GroupK, quant.PanelRows
	for l := range L {
		if len(kr[l])%G == 0 && len(pr[l])%G == 0 { // whole groups in place (Kimi: 128 + 64)
			g := 0
			for _, part := range [2][]float32{kr[l], pr[l]} {
				for i := 0; i+G <= len(part); i += G {
					q8Group(dst[g*quant.Q8GroupBytes:(g+1)*quant.Q8GroupBytes], l, (*[G]float32)(part[i:]))
					g++
				}
			}
			continue
		}
		n := copy(row, kr[l])
		n += copy(row[n:], pr[l])
		clear(row[n:])
		for g := 0; g < len(row)/G; g++ {
			q8Group(dst[g*quant.Q8GroupBytes:(g+1)*quant.Q8GroupBytes], l, (*[G]float32)(row[g*G:]))
		}
	}
}

// q8Group writes row l of one Q8 group record rec (packKeysQ8) from x.
func q8Group(rec []byte, l int, x *[quant.GroupK]float32) {
	rec = rec[:quant.Q8GroupBytes]
	// max |w| on the magnitude bits, which order as the values (a NaN's
	// above +Inf's)
	var m0, m1, m2, m3 uint32
	for j := 0; j < quant.GroupK; j += 4 {
		m0 = max(m0, math.Float32bits(x[j])&^(1<<31))
		m1 = max(m1, math.Float32bits(x[j+1])&^(1<<31))
		m2 = max(m2, math.Float32bits(x[j+2])&^(1<<31))
		m3 = max(m3, math.Float32bits(x[j+3])&^(1<<31))
	}
	amax := math.Float32frombits(max(max(m0, m1), max(m2, m3)))
	dh := half.F32ToF16(amax / 127)
	binary.LittleEndian.PutUint16(rec[8*quant.LineBytes+2*l:], dh)
	d := half.F16ToF32(dh)
	if d == 0 {
		for c := range 8 {
			binary.LittleEndian.PutUint32(rec[c*quant.LineBytes+4*l:], 0x80808080)
		}
		return
	}
	id := 1 / d
	if dh&0x7c00 == 0 { // a subnormal scale, up to 3% below max|w|/127: clamp
		for c := range 8 {
			u := q8Code(x[4*c]*id) | q8Code(x[4*c+1]*id)<<8 | q8Code(x[4*c+2]*id)<<16 | q8Code(x[4*c+3]*id)<<24
			binary.LittleEndian.PutUint32(rec[c*quant.LineBytes+4*l:], u)
		}
		return
	}
	// a normal scale is within 2⁻¹¹ of max|w|/127, so |w·(1/d)| < 127.5
	// and q needs no clamp: its code is the low byte of w·(1/d) + magic
	// with the sign bit flipped
	const magic = 12582912 // 1.5·2²³: adding it rounds to an integer, ties to even
	for c := range 8 {
		u := math.Float32bits(x[4*c]*id+magic)&0xff | (math.Float32bits(x[4*c+1]*id+magic)&0xff)<<8 |
			(math.Float32bits(x[4*c+2]*id+magic)&0xff)<<16 | (math.Float32bits(x[4*c+3]*id+magic)&0xff)<<24
		binary.LittleEndian.PutUint32(rec[c*quant.LineBytes+4*l:], u^0x80808080)
	}
}

// q8Code is the offset-binary code u = q+128 of v rounded to the nearest
// integer q (ties to even), q clamped to [−127, 127] (|v| < 2²²).
func q8Code(v float32) uint32 {
	const magic = 12582912 // 1.5·2²³: adding it rounds to an integer, ties to even
	q := int32(math.Float32bits(v+magic)&0x7fffff) - 0x400000
	return uint32(min(max(q, -127), 127) + 128)
}

// scaleTo writes dst[i] = src[i]·a.
func scaleTo(dst, src []float32, a float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = x * a
	}
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

// newQ8 is a zeroed Q8 packed matrix of n×k on scratch memory, as newF32.
func newQ8(n, k int) (*quant.Matrix, []float32) {
	size := int(quant.Size(kernel.Q8, n, k, false))
	buf := scratch.Zeroed((size + 3) / 4)
	m, err := quant.View(kernel.Q8, n, k, false, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*len(buf))[:size])
	if err != nil {
		panic(err) // shapes come from a validated problem
	}
	return m, buf
}

// viewRows is the matrix of the first n rows of m (whole panels are
// contiguous, so this is a prefix of its bytes).
func viewRows(m *quant.Matrix, n int) *quant.Matrix {
	v, err := quant.View(m.DType, n, m.K, false, m.Data[:quant.Size(m.DType, n, m.K, false)])
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
		if w < P {
			for k := 0; k < nv; k++ {
				dst := d[(pn*nv+k)*P : (pn*nv+k)*P+P]
				copy(dst[:w], v[k*NH*DV+c0:k*NH*DV+c0+w])
				clear(dst[w:])
			}
			continue
		}
		for k := 0; k < nv; k++ { // whole panels: 64-byte moves, no memmove call
			*(*[P]float32)(d[(pn*nv+k)*P:]) = *(*[P]float32)(v[k*NH*DV+c0:])
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

// packedQ8 returns m, or w quantized to a Q8 matrix [n][k] when m is nil.
func packedQ8(m *quant.Matrix, w []float32, n, k int) *quant.Matrix {
	if m != nil {
		return m
	}
	m, err := quant.Quantize(kernel.Q8, w, n, k, false)
	if err != nil {
		panic(err) // shapes come from a validated problem
	}
	return m
}

// rowMaxAsm returns the largest value of the bulk of x on vectors and how
// many elements that was (none here; mla_amd64.go sets the AVX-512 kernel
// where the CPU has it).
var rowMaxAsm = func(x []float32) (float32, int) { return float32(math.Inf(-1)), 0 }

// rowMax is the largest value of x: rowMaxAsm's bulk, the rest in four
// independent chains (NaN: see mlaRowMaxAVX512).
func rowMax(x []float32) float32 {
	m, i := rowMaxAsm(x)
	m0, m1, m2, m3 := m, float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))
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

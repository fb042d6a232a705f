package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// GGMLRepack selects how FromGGML packs a ggml type that has no exact
// repack into our formats.
type GGMLRepack int

const (
	// RepackExact keeps the values DequantizeGGML gives: an exact repack
	// into Q8, Q5, Q4, Q4 with min, BF16 or F32 where one exists, else F32.
	RepackExact GGMLRepack = iota
	// RepackFast packs into the nearest of our quantized formats, which may
	// round (e.g. Q4_K → Q4 with min, group scales rounded to f16; Q5_K →
	// Q8 and Q6_K → Q6 (or Q8, see FastQ6) requantized): what runs at our
	// speed on a 48B model.
	RepackFast
)

func (r GGMLRepack) String() string {
	switch r {
	case RepackExact:
		return "exact"
	case RepackFast:
		return "fast"
	}
	return fmt.Sprintf("GGMLRepack(%d)", int(r))
}

// How each ggml type is packed (see ggmlPlanFor):
//
//	type   exact mode              fast mode
//	f32    F32                     F32
//	f16    F32 (widened)           BF16 (rounded; exact when every value fits)
//	bf16   BF16                    BF16
//	q8_0   Q8  (same d, same q)    Q8
//	q4_0   Q4  (same d, same q)    Q4
//	q4_1   Q4+min (same d, m, q)   Q4+min
//	q5_0   Q5  (same d, same q) where FastQ5 says so, else
//	       Q8  (same d, q−16)      the same as exact mode
//	q5_1   F32                     Q8 requantized
//	q2_K   F32                     Q4+min requantized
//	q3_K   Q8  (d' = −d, u = −(sc−32)·q ∈ [−128, 124]; d·sc·q is exact in
//	            float32, so the value is the same)
//	                               Q4 requantized
//	q4_K   Q4K (same d, dmin, codes and q) where FastK(Q4K) says so;
//	       else Q4+min when every d·sc and dmin·mn is an f16, else F32
//	                               Q4K where FastK(Q4K), else Q4+min,
//	                               d·sc and −dmin·mn rounded to f16
//	q5_K   Q5K (same d, dmin, codes and q) where FastK(Q5K) says so,
//	       else F32                Q5K where FastK(Q5K), else Q8
//	                               requantized
//	iq4_nl Q8  (same d, the codebook's int8 values)
//	                               Q8
//	iq4_xs Q8  (d·(ls−32) when an f16, else F32)
//	                               Q8, d·(ls−32) rounded to f16
//	mxfp4  Q8  (2^(e−128) when an f16, else F32)
//	                               Q8, 2^(e−128) flushed to f16
//	q6_K   F32                     Q6 requantized, each group's larger
//	                               sub-block scale d·sc a candidate, where
//	                               FastQ6 says so; else Q8 requantized
//
// "Requantized" is Quantize applied to DequantizeGGML's values. Q6_K → Q6
// adds about 0.8× the file's own weight error in quadrature (Gaussian
// rows: 0.0177 → 0.0206 relative RMS against the f32 weights; Q6_K → Q8
// gave 0.0186) for 0.8125 bytes per weight instead of Q8's 1.0625.

// FastQ5 reports whether this process serves Q5 weights with a SIMD
// kernel (kernels/gemm sets it: AVX2 int8, AVX-VNNI and AVX-512 VNNI;
// on arm64 the NEON and SVE dot-product kernels). Both modes pack Q5_0
// as Q5 only then (exact: ggml's rule and the same d and q), and as Q8
// otherwise (also while FastQ5 is nil; exact too, at 8.5 bits per
// weight instead of 5.5): the pure-Go kernels that serve Q5 elsewhere are
// many times slower than the SIMD Q8 ones.
var FastQ5 func() bool

// FastK reports whether this process serves the K format dt with a SIMD
// kernel (kernels/gemm sets it). Both modes pack Q4_K as Q4K and Q5_K as
// Q5K only then — exactly: ggml's rule w = (d·sc)·q − dmin·mn with the
// same f16 d and dmin, 6-bit codes and q — and as before otherwise (also
// while FastK is nil), where the pure-Go K kernels would be many times
// slower than the SIMD Q4-with-min and Q8 ones.
var FastK func(dt kernel.DType) bool

func fastK(dt kernel.DType) bool { return FastK != nil && FastK(dt) }

// FastQ6 reports whether this process serves Q6 weights with a SIMD
// kernel (kernels/gemm sets it: amd64 with AVX2, arm64 with the NEON dot
// product or SVE). Fast mode packs Q6_K as Q6 only then, and as Q8
// otherwise (also while FastQ6 is nil): where only the pure-Go kernels
// serve Q6 a decode GEMV on it is ~25× slower than the SIMD Q8 one (5.5 ms
// against 0.2 ms for 1024×2304, measured before the AVX2 Q6 kernels).
var FastQ6 func() bool

// ggmlRowFunc packs row r of m from its raw ggml blocks. It reports
// whether the packed values equal DequantizeGGML's (only where the plan
// says they may not) and whether a value or scale was too large for the
// format's f16 scales (the caller then falls back to F32).
type ggmlRowFunc func(m *Matrix, r int, raw []byte, s *ggmlScratch) (exact, overflow bool)

type ggmlPlan struct {
	dt     kernel.DType
	hasMin bool
	row    ggmlRowFunc
}

// ggmlScratch is one worker's row buffers.
type ggmlScratch struct {
	t        gguf.Type
	row, got []float32
	inexact  bool // a row of this worker already lost a value: skip the checks
}

// requantLimit bounds the weights Quantize may be given: Q4's scale is up
// to max|w|/8 (with a min, the min itself is stored), which must stay an
// f16 (≤ 65504) with margin.
const requantLimit = 32768

func ggmlPlanFor(t gguf.Type, raw []byte, mode GGMLRepack) ggmlPlan {
	f32 := ggmlPlan{kernel.F32, false, rowPlainToF32}
	requant := func(dt kernel.DType, hasMin bool) ggmlPlan {
		if mode == RepackExact {
			return f32
		}
		return ggmlPlan{dt, hasMin, rowRequantize}
	}
	switch t {
	case gguf.TypeF32:
		return f32
	case gguf.TypeF16:
		if mode == RepackFast {
			return ggmlPlan{kernel.BF16, false, rowF16ToBF16}
		}
		return f32
	case gguf.TypeBF16:
		return ggmlPlan{kernel.BF16, false, rowBF16ToBF16}
	case gguf.TypeQ8_0:
		return ggmlPlan{kernel.Q8, false, rowQ8_0}
	case gguf.TypeQ4_0:
		return ggmlPlan{kernel.Q4, false, rowQ4_0}
	case gguf.TypeQ4_1:
		return ggmlPlan{kernel.Q4, true, rowQ4_1}
	case gguf.TypeQ5_0:
		if FastQ5 != nil && FastQ5() {
			return ggmlPlan{kernel.Q5, false, rowQ5_0ToQ5}
		}
		return ggmlPlan{kernel.Q8, false, rowQ5_0}
	case gguf.TypeQ3_K:
		if mode == RepackExact {
			return ggmlPlan{kernel.Q8, false, rowQ3_KToQ8}
		}
		return requant(kernel.Q4, false)
	case gguf.TypeQ4_K:
		if fastK(kernel.Q4K) {
			return ggmlPlan{kernel.Q4K, false, rowQ45_KToK}
		}
		if mode == RepackFast || q4KScalesExact(raw) {
			return ggmlPlan{kernel.Q4, true, rowQ4_K}
		}
		return f32
	case gguf.TypeQ5_K:
		if fastK(kernel.Q5K) {
			return ggmlPlan{kernel.Q5K, false, rowQ45_KToK}
		}
	case gguf.TypeQ2_K:
		return requant(kernel.Q4, true)
	case gguf.TypeQ6_K:
		if mode == RepackFast && FastQ6 != nil && FastQ6() {
			return ggmlPlan{kernel.Q6, false, rowQ6_K}
		}
	case gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeMXFP4:
		return ggmlPlan{kernel.Q8, false, rowCodebookToQ8}
	}
	return requant(kernel.Q8, false) // q5_1, q5_K, q6_K without FastQ6
}

// FromGGML packs an n×k matrix stored as ggml type t (k = row length =
// ggml ne[0], raw = n rows of k/BlockSize blocks) into one of our formats
// (see the table above), and reports whether the packed values equal
// DequantizeGGML's exactly (as float32 values: a stored zero has no sign,
// so +0 and −0 count as equal). In RepackExact mode exact is always true.
// Errors: a type DequantizeGGML refuses, a size mismatch, and a non-finite
// scale or value, naming the row and column.
func FromGGML(t gguf.Type, raw []byte, n, k int, mode GGMLRepack) (m *Matrix, exact bool, err error) {
	info, err := ggmlType(t)
	if err != nil {
		return nil, false, err
	}
	if mode != RepackExact && mode != RepackFast {
		return nil, false, fmt.Errorf("quant: ggml %s: unknown repack mode %v", t, mode)
	}
	bs := t.BlockSize()
	if err := ggmlShape(len(raw), n, k, bs, t.BlockBytes(), t.String()); err != nil {
		return nil, false, err
	}
	if blk, msg := ggmlNonFinite(t, info, raw); blk >= 0 {
		return nil, false, fmt.Errorf("quant: ggml %s %d×%d: row %d, columns %d..%d: %s", t, n, k, blk*bs/k, blk*bs%k, blk*bs%k+bs-1, msg)
	}
	plan := ggmlPlanFor(t, raw, mode)
	m, exact, overflow := runGGMLPlan(t, plan, raw, n, k)
	if overflow || (mode == RepackExact && !exact) {
		// A weight beyond our f16 scales (or, as a guard, a repack that
		// did not keep the values in exact mode): keep every value in F32.
		m, exact, _ = runGGMLPlan(t, ggmlPlan{kernel.F32, false, rowPlainToF32}, raw, n, k)
	}
	return m, exact, nil
}

// runGGMLPlan packs every row with plan.row, in parallel over panels.
func runGGMLPlan(t gguf.Type, plan ggmlPlan, raw []byte, n, k int) (*Matrix, bool, bool) {
	m, err := New(plan.dt, n, k, plan.hasMin)
	if err != nil {
		panic(err) // the shape was checked
	}
	rowBytes := len(raw) / n
	panels := m.Panels()
	workers := min(runtime.GOMAXPROCS(0), panels, max(1, len(raw)>>18)) // one per 256 KiB at most
	var (
		mu       sync.Mutex
		exact    = true
		overflow bool
		wg       sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(p0, p1 int) {
			defer wg.Done()
			s := &ggmlScratch{t: t, row: make([]float32, m.Kp), got: make([]float32, k)}
			ex, ov := true, false
			for r := p0 * PanelRows; r < min(n, p1*PanelRows); r++ {
				e, o := plan.row(m, r, raw[r*rowBytes:(r+1)*rowBytes], s)
				ex, ov = ex && e, ov || o
				if ov {
					break
				}
			}
			mu.Lock()
			exact, overflow = exact && ex, overflow || ov
			mu.Unlock()
		}(w*panels/workers, (w+1)*panels/workers)
	}
	wg.Wait()
	return m, exact, overflow
}

// ---- plain types ----

// rowPlainToF32 widens any supported type to F32 through DequantizeGGML's
// block functions: exact by definition.
func rowPlainToF32(m *Matrix, r int, raw []byte, s *ggmlScratch) (bool, bool) {
	row := s.row[:m.K]
	ggmlRow(s.t, raw, row)
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	for k, v := range row {
		binary.LittleEndian.PutUint32(panel[4*(k*PanelRows+pr):], math.Float32bits(v))
	}
	return true, false
}

// ggmlRow dequantizes one row of raw blocks of type t into y.
func ggmlRow(t gguf.Type, raw []byte, y []float32) {
	f := ggmlTypes[t].block
	bs, bb := t.BlockSize(), t.BlockBytes()
	if bs == 1 {
		f(raw, y)
		return
	}
	for i := 0; i < len(y)/bs; i++ {
		f(raw[i*bb:(i+1)*bb], y[i*bs:(i+1)*bs])
	}
}

// bf16Offset is the byte of row pr, column k inside a BF16 panel.
func bf16Offset(pr, k int) int { return 2 * ((k/2)*2*PanelRows + 2*pr + k%2) }

func rowBF16ToBF16(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	for k := 0; k < m.K; k++ {
		copy(panel[bf16Offset(pr, k):][:2], raw[2*k:2*k+2])
	}
	return true, false
}

// rowF16ToBF16 rounds each f16 to the nearest bf16; exact when every value
// fits (bf16 has 3 fewer significand bits, more exponent range).
func rowF16ToBF16(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	exact := true
	for k := 0; k < m.K; k++ {
		f := half.F16ToF32(binary.LittleEndian.Uint16(raw[2*k:]))
		b := half.F32ToBF16(f)
		exact = exact && half.BF16ToF32(b) == f
		binary.LittleEndian.PutUint16(panel[bf16Offset(pr, k):], b)
	}
	return exact, false
}

// ---- exact integer repacks ----

// putQ8 writes one row's group of 32 offset-binary integers into a Q8
// record: line c holds k = 4c..4c+3 of row pr at bytes 4pr..4pr+3.
func putQ8(rec []byte, pr int, u *[GroupK]byte) {
	for c := 0; c < 8; c++ {
		copy(rec[c*LineBytes+4*pr:][:4], u[4*c:4*c+4])
	}
}

// putQ4 writes one row's group of 32 nibbles into a Q4 record: byte 4pr+j
// of line c holds k = 8c+j (low) and 8c+4+j (high).
func putQ4(rec []byte, pr int, q *[GroupK]byte) {
	for c := 0; c < 4; c++ {
		for j := 0; j < 4; j++ {
			rec[c*LineBytes+4*pr+j] = q[8*c+j] | q[8*c+4+j]<<4
		}
	}
}

// q8Scale and q4Scale/q4Min are the f16 scale (and min) slots of row pr
// inside a group record.
func q8Scale(rec []byte, pr int) []byte { return rec[8*LineBytes+2*pr:][:2] }
func q4Scale(rec []byte, pr int) []byte { return rec[4*LineBytes+2*pr:][:2] }
func q4Min(rec []byte, pr int) []byte   { return rec[4*LineBytes+2*PanelRows+2*pr:][:2] }

// rowQ8_0: the same f16 d and int8 q (stored offset binary).
func rowQ8_0(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var u [GroupK]byte
	for g := 0; g < m.K/32; g++ {
		b, rec := raw[g*GGMLQ8_0Bytes:], panel[g*Q8GroupBytes:]
		copy(q8Scale(rec, pr), b[0:2])
		for j := range u {
			u[j] = b[2+j] ^ 0x80
		}
		putQ8(rec, pr, &u)
	}
	return true, false
}

// rowQ4_0: the same f16 d and nibbles (both offset by 8).
func rowQ4_0(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var q [GroupK]byte
	for g := 0; g < m.K/32; g++ {
		b, rec := raw[g*GGMLQ4_0Bytes:], panel[g*Q4GroupBytes:]
		copy(q4Scale(rec, pr), b[0:2])
		for j := 0; j < 16; j++ {
			q[j], q[j+16] = b[2+j]&15, b[2+j]>>4
		}
		putQ4(rec, pr, &q)
	}
	return true, false
}

// rowQ4_1: w = q·d + m in both formats, with the same f16 d and m.
func rowQ4_1(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	const size = 20
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var q [GroupK]byte
	for g := 0; g < m.K/32; g++ {
		b, rec := raw[g*size:], panel[g*Q4MinGroupBytes:]
		copy(q4Scale(rec, pr), b[0:2])
		copy(q4Min(rec, pr), b[2:4])
		for j := 0; j < 16; j++ {
			q[j], q[j+16] = b[4+j]&15, b[4+j]>>4
		}
		putQ4(rec, pr, &q)
	}
	return true, false
}

// rowQ5_0: w = (q−16)·d; q−16 ∈ [−16, 15] is an int8 under the same d.
func rowQ5_0(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	const size = 22
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var q [32]int
	var u [GroupK]byte
	for g := 0; g < m.K/32; g++ {
		b, rec := raw[g*size:], panel[g*Q8GroupBytes:]
		copy(q8Scale(rec, pr), b[0:2])
		q5Quants(binary.LittleEndian.Uint32(b[2:]), b[6:22], &q)
		for j, v := range q {
			u[j] = byte(v - 16 + 128)
		}
		putQ8(rec, pr, &u)
	}
	return true, false
}

// rowQ5_0ToQ5: the same f16 d and 5-bit q (w = (q−16)·d in both): the
// low four bits as Q4's nibbles, the fifth at bit k/4 of line 4's byte
// 4pr + k%4 (q5.go).
func rowQ5_0ToQ5(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	const size = 22
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var q [32]int
	var lo [GroupK]byte
	for g := 0; g < m.K/32; g++ {
		b, rec := raw[g*size:], panel[g*Q5GroupBytes:]
		copy(rec[Q5Lines*LineBytes+2*pr:][:2], b[0:2])
		q5Quants(binary.LittleEndian.Uint32(b[2:]), b[6:22], &q)
		for j, v := range q {
			lo[j] = byte(v & 15)
		}
		putQ4(rec, pr, &lo)
		for j := 0; j < 4; j++ {
			var hb byte
			for h := 0; h < 8; h++ {
				hb |= byte(q[4*h+j]>>4) << h
			}
			rec[4*LineBytes+4*pr+j] = hb
		}
	}
	return true, false
}

// rowQ3_KToQ8: ggml's (d·s)·q (s = sc−32 ∈ [−32, 31], q ∈ [−4, 3]) is the
// exact product d·s·q (an f16 times at most 9 bits fits float32's 24), so
// Q8 holds it exactly as (−d)·(−s·q): −s·q ∈ [−128, 124] always fits an
// int8, where s·q itself reaches 128.
func rowQ3_KToQ8(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	const size = 110
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	var u [GroupK]byte
	for sb := 0; sb < m.K/256; sb++ {
		b := raw[sb*size : (sb+1)*size]
		hmask, qs, scales := b[0:32], b[32:96], b[96:108]
		negD := binary.LittleEndian.Uint16(b[108:]) ^ 0x8000
		for g := 0; g < 8; g++ { // group g: sub-blocks 2g, 2g+1; column g%4 of half g/4
			rec := panel[(8*sb+g)*Q8GroupBytes:]
			binary.LittleEndian.PutUint16(q8Scale(rec, pr), negD)
			s0, s1 := q3KScale(scales, 2*g), q3KScale(scales, 2*g+1)
			for l := 0; l < 32; l++ {
				s := s0
				if l >= 16 {
					s = s1
				}
				u[l] = byte(-s*q3KQuant(hmask, qs, g/4, g%4, l) + 128)
			}
			putQ8(rec, pr, &u)
		}
	}
	return true, false
}

// ---- the codebook types: int8 values under a group scale, so Q8 ----

// rowCodebookToQ8 packs an iq4_nl, iq4_xs or mxfp4 row into Q8: each
// group's 32 codebook values (int8) as they are, under the group's scale
// rounded to f16 (iq4_nl: its f16 d itself; iq4_xs: d·(ls−32), 17
// significant bits at most; mxfp4: 2^(e−128)). It reports whether every
// scale was an f16 (then the values are DequantizeGGML's: each is the
// same exact product), and an overflow where a scale exceeds the f16
// range.
func rowCodebookToQ8(m *Matrix, r int, raw []byte, s *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	exact := true
	var u [GroupK]byte
	bb := s.t.BlockBytes()
	for g := 0; g < m.K/32; g++ {
		var d float32
		var qs []byte
		book := &IQ4NLValues
		switch s.t {
		case gguf.TypeIQ4_NL:
			b := raw[g*bb:]
			d, qs = f16At(b, 0), b[2:18]
		case gguf.TypeIQ4_XS:
			b := raw[g/8*bb:]
			d, qs = f16At(b, 0)*float32(IQ4XSScale(b, g%8)-32), b[8+16*(g%8):][:16]
		case gguf.TypeMXFP4:
			b := raw[g*bb:]
			d, qs, book = MXFP4Scale(b[0]), b[1:17], &MXFP4Values
		}
		h := half.F32ToF16(d)
		if h&0x7c00 == 0x7c00 {
			return false, true
		}
		exact = exact && half.F16ToF32(h) == d
		rec := panel[g*Q8GroupBytes:]
		binary.LittleEndian.PutUint16(q8Scale(rec, pr), h)
		for j, q := range qs {
			u[j] = byte(book[q&15]) ^ 0x80
			u[j+16] = byte(book[q>>4]) ^ 0x80
		}
		putQ8(rec, pr, &u)
	}
	return exact, false
}

// q4KGroup returns the Q4-with-min scale and min of a q4_K sub-block,
// rounded to f16, and whether the rounding kept them.
func q4KGroup(d, dmin float32, sc, mn int) (dh, mh uint16, exact, overflow bool) {
	ds, ms := d*float32(sc), -(dmin * float32(mn))
	dh, mh = half.F32ToF16(ds), half.F32ToF16(ms)
	exact = half.F16ToF32(dh) == ds && half.F16ToF32(mh) == ms
	overflow = dh&0x7c00 == 0x7c00 || mh&0x7c00 == 0x7c00
	return
}

// q4KScalesExact reports whether every q4_K sub-block's d·sc and dmin·mn
// is an f16, so that rowQ4_K is exact.
func q4KScalesExact(raw []byte) bool {
	for i := 0; i+GGMLQ4_KBytes <= len(raw); i += GGMLQ4_KBytes {
		b := raw[i:]
		d, dmin := f16At(b, 0), f16At(b, 2)
		for s := 0; s < 8; s++ {
			sc, mn := q4KScaleMin(b[4:16], s)
			if _, _, ex, ov := q4KGroup(d, dmin, sc, mn); !ex || ov {
				return false
			}
		}
	}
	return true
}

// rowQ4_K keeps q4_K's nibbles; each sub-block's d·sc and −dmin·mn are
// rounded to f16 (ggml's d1·q − m1 equals our d'·q + m' when they fit:
// both products are exact and a − b = a + (−b)).
func rowQ4_K(m *Matrix, r int, raw []byte, _ *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	exact := true
	var q [GroupK]byte
	for sb := 0; sb < m.K/256; sb++ {
		b := raw[sb*GGMLQ4_KBytes:]
		d, dmin := f16At(b, 0), f16At(b, 2)
		scales, qs := b[4:16], b[16:144]
		for s := 0; s < 8; s++ {
			sc, mn := q4KScaleMin(scales, s)
			dh, mh, ex, ov := q4KGroup(d, dmin, sc, mn)
			if ov {
				return false, true
			}
			exact = exact && ex
			rec := panel[(8*sb+s)*Q4MinGroupBytes:]
			binary.LittleEndian.PutUint16(q4Scale(rec, pr), dh)
			binary.LittleEndian.PutUint16(q4Min(rec, pr), mh)
			shift := 4 * (s % 2)
			for l, v := range qs[32*(s/2) : 32*(s/2)+32] {
				q[l] = v >> shift & 15
			}
			putQ4(rec, pr, &q)
		}
	}
	return exact, false
}

// rowQ45_KToK packs a q4_K (into Q4K) or q5_K (into Q5K) row bit for bit:
// each super-block's f16 d and dmin bytes, each sub-block's 6-bit scale
// and min codes, and its 4- or 5-bit q (q5_K's fifth bit of sub-block s
// at bit s of qh[l]). The K formats' rule (d·sc)·u − dm·mc is ggml's, so
// the values are DequantizeGGML's.
func rowQ45_KToK(m *Matrix, r int, raw []byte, s *ggmlScratch) (bool, bool) {
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	five := s.t == gguf.TypeQ5_K
	bb, qsOff := GGMLQ4_KBytes, 16
	if five {
		bb, qsOff = ggmlQ5_KBytes, 48
	}
	base := KBase(m.DType)
	for i := 0; i < m.K/SuperK; i++ {
		b := raw[i*bb:]
		sb := panel[i*KSuperBytes(m.DType):]
		copy(sb[kDOff+2*pr:][:2], b[0:2])
		copy(sb[kDMOff+2*pr:][:2], b[2:4])
		for j := range KGroups {
			sc, mn := q4KScaleMin(b[4:16], j)
			setKCodes(sb, pr, j, sc, mn)
			rec := sb[KHeaderBytes+j*KLines(m.DType)*LineBytes:]
			q := b[qsOff+32*(j/2):][:32]
			for l, v := range q {
				u := int(v >> uint(4*(j%2)) & 15)
				if five {
					u |= int(b[16+l]>>uint(j)&1) << 4
				}
				setKValue(base, rec, pr, l, u)
			}
		}
	}
	return true, false
}

// ggmlQ5_KBytes: a q5_K super-block: f16 d, f16 dmin, 12 bytes of codes,
// 32 bytes of fifth bits, 128 of nibbles.
const ggmlQ5_KBytes = 176

// ---- requantization ----

// rowRequantize dequantizes the row as ggml does and quantizes it again
// with Quantize's rules, reporting whether that kept every value.
func rowRequantize(m *Matrix, r int, raw []byte, s *ggmlScratch) (bool, bool) {
	row := s.row // Kp = K: every block type here has k a multiple of 32
	ggmlRow(s.t, raw, row)
	for _, v := range row {
		if abs32(v) > requantLimit {
			return false, true
		}
	}
	m.packRow(r, row)
	return requantExact(m, r, row, s), false
}

// q6KSearch: whether Q6_K → Q6 also runs the scale search (QuantizeWeighted's)
// beside max-abs and the sub-block scale.
const q6KSearch = false

// rowQ6_K packs a Q6_K row (fast mode) into Q6: the dequantized values
// requantized per group of 32 by max-abs, with the larger of the group's
// two sub-block scales d·sc as a second candidate (packQ6Hint), which
// keeps the values of that sub-block (up to the f16 rounding of d·sc).
func rowQ6_K(m *Matrix, r int, raw []byte, s *ggmlScratch) (bool, bool) {
	row := s.row // Kp = K: k is a multiple of 256
	ggmlRow(s.t, raw, row)
	for _, v := range row {
		if abs32(v) > requantLimit {
			return false, true
		}
	}
	panel, pr := m.Panel(r/PanelRows), r%PanelRows
	bb := gguf.TypeQ6_K.BlockBytes()
	for g := 0; g < m.Groups(); g++ {
		blk := raw[(g/8)*bb : (g/8+1)*bb]
		sc1, sc2 := int8(blk[192+2*(g%8)]), int8(blk[192+2*(g%8)+1])
		sc := sc1
		if abs32(float32(sc2)) > abs32(float32(sc1)) {
			sc = sc2
		}
		hint := f16At(blk, 208) * float32(sc)
		packQ6Hint(panel[g*Q6GroupBytes:], pr, (*[GroupK]float32)(row[g*GroupK:]), &ones, q6KSearch, hint)
	}
	return requantExact(m, r, row, s), false
}

// requantExact reports whether row r of m holds exactly the values row
// (until a row of this worker has lost one).
func requantExact(m *Matrix, r int, row []float32, s *ggmlScratch) bool {
	if s.inexact {
		return false
	}
	m.DequantizeRow(r, s.got)
	for i, v := range s.got {
		if v != row[i] {
			s.inexact = true
			return false
		}
	}
	return true
}

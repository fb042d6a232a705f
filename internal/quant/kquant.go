// The K formats Q3K, Q4K, Q5K and Q6K: 3- to 6-bit weights with a 6-bit
// scale code and a 6-bit min code per row and group of 32 under one f16
// pair per row and super-block of 256 (b + 0.5 bits per weight), in the
// canonical panel layout. ggml's Q4_K and Q5_K are these rules at 4 and 5
// bits, so their blocks repack exactly.

package quant

import (
	"encoding/binary"
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// A K format stores each weight as an unsigned u ∈ [0, 2ᵇ−1] in the value
// lines of its base format (Q3, Q4's nibbles, Q5, Q6: the same bytes a
// base group record holds before its scales) and represents
//
//	w = (d·sc)·u − dm·mc     (each product one f32 multiply)
//
// with, per row and group of 32, a scale code sc and a min code mc
// (0…63), and per row and super-block of 256 k (SuperK), f16 d and dm.
//
// Per panel the super-blocks follow one another (Kp is K rounded up to
// 256); one super-block record is a 256-byte header, then the 8 groups'
// value lines (lines·64 bytes each, no scales):
//
//	[8][16]u8   at   0: byte 16g+r: bits 0–5 sc of row r, group g;
//	                    bits 6–7 the low two bits of mc
//	[4][16]u8   at 128: byte 16(g/2)+r: bits 4(g%2)…4(g%2)+3 the high
//	                    four bits of mc of row r, group g
//	[16]f16     at 192: d of row r
//	[16]f16     at 224: dm of row r
//
// so a kernel gets a group's 16 scale codes by one byte-to-dword widening
// and a mask, and its 16 min codes from the same bytes and one more line.
const (
	SuperK         = 256
	KGroups        = SuperK / GroupK // 8 groups per super-block
	KHeaderBytes   = 256
	kMinCodeOff    = 128
	kDOff          = 192
	kDMOff         = 224
	kCodeMax       = 63
	kSearchCodeWin = 3  // the search moves each group's codes by up to ±3
	kRounds        = 3  // rounds of super-block refit and code moves
	kFitSteps      = 20 // kFit tries ranges (max − min)/(L + δ), δ = i/kFitSteps, |i| ≤ kFitSteps
)

// IsK reports whether dt is one of the K formats.
func IsK(dt kernel.DType) bool {
	switch dt {
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		return true
	}
	return false
}

// KBase is the format whose value lines a K format's groups hold (Q3, Q4,
// Q5, Q6), or "" for any other dtype.
func KBase(dt kernel.DType) kernel.DType {
	switch dt {
	case kernel.Q3K:
		return kernel.Q3
	case kernel.Q4K:
		return kernel.Q4
	case kernel.Q5K:
		return kernel.Q5
	case kernel.Q6K:
		return kernel.Q6
	}
	return ""
}

// KLines is the number of 64-byte value lines per group of a K format.
func KLines(dt kernel.DType) int {
	switch dt {
	case kernel.Q3K:
		return Q3Lines
	case kernel.Q4K:
		return 4
	case kernel.Q5K:
		return Q5Lines
	case kernel.Q6K:
		return Q6Lines
	}
	return 0
}

// kBits is a K format's bits per stored value.
func kBits(dt kernel.DType) int {
	switch dt {
	case kernel.Q3K:
		return 3
	case kernel.Q4K:
		return 4
	case kernel.Q5K:
		return 5
	}
	return 6
}

// KLevels is the largest stored value of a K format (2ᵇ − 1).
func KLevels(dt kernel.DType) int { return 1<<kBits(dt) - 1 }

// KSuperBytes is the size of one super-block record of one panel.
func KSuperBytes(dt kernel.DType) int { return KHeaderBytes + KGroups*KLines(dt)*LineBytes }

// KGroup returns the value lines of group g (of the whole row) in a K
// panel: the record a base-format accessor (nibble, q3At, q5At, q6At)
// reads.
func KGroup(dt kernel.DType, panel []byte, g int) []byte {
	sb := panel[(g/KGroups)*KSuperBytes(dt):]
	return sb[KHeaderBytes+(g%KGroups)*KLines(dt)*LineBytes:]
}

// KCodes are the scale and min codes of row pr, group g of a K panel.
func KCodes(dt kernel.DType, panel []byte, pr, g int) (sc, mc int) {
	sb := panel[(g/KGroups)*KSuperBytes(dt):]
	j := g % KGroups
	b := sb[16*j+pr]
	hi := sb[kMinCodeOff+16*(j/2)+pr] >> uint(4*(j%2)) & 15
	return int(b & 63), int(b>>6) | int(hi)<<2
}

// KSuper are the f16 d and dm of row pr in the super-block holding group
// g of a K panel, widened.
func KSuper(dt kernel.DType, panel []byte, pr, g int) (d, dm float32) {
	sb := panel[(g/KGroups)*KSuperBytes(dt):]
	return half.F16ToF32(binary.LittleEndian.Uint16(sb[kDOff+2*pr:])),
		half.F16ToF32(binary.LittleEndian.Uint16(sb[kDMOff+2*pr:]))
}

// KScaleMin is the scale d·sc and the min dm·mc of row pr, group g of a K
// panel (w = scale·u − min), each one f32 multiply as every kernel does.
func KScaleMin(dt kernel.DType, panel []byte, pr, g int) (scale, min float32) {
	d, dm := KSuper(dt, panel, pr, g)
	sc, mc := KCodes(dt, panel, pr, g)
	return d * float32(sc), dm * float32(mc)
}

// setKCodes stores the codes of row pr, group j (< 8) of a super-block
// record.
func setKCodes(sb []byte, pr, j, sc, mc int) {
	sb[16*j+pr] = byte(sc) | byte(mc&3)<<6
	off, sh := kMinCodeOff+16*(j/2)+pr, uint(4*(j%2))
	sb[off] = sb[off]&^(15<<sh) | byte(mc>>2)<<sh
}

// kValueAt is the stored u of row pr, group element j of a group record
// of base format base.
func kValueAt(base kernel.DType, rec []byte, pr, j int) int {
	switch base {
	case kernel.Q3:
		return q3At(rec, pr, j)
	case kernel.Q4:
		return nibble(rec, pr, j)
	case kernel.Q5:
		return q5At(rec, pr, j)
	}
	return q6At(rec, pr, j)
}

func setKValue(base kernel.DType, rec []byte, pr, j, u int) {
	switch base {
	case kernel.Q3:
		setQ3(rec, pr, j, u)
	case kernel.Q4:
		setNibble(rec, pr, j, u)
	case kernel.Q5:
		setQ5(rec, pr, j, u)
	default:
		setQ6(rec, pr, j, u)
	}
}

// dequantizeKRow writes row pr's K values of a K panel into dst.
func dequantizeKRow(dt kernel.DType, panel []byte, pr int, dst []float32) {
	base := KBase(dt)
	for g := 0; g*GroupK < len(dst); g++ {
		s, m := KScaleMin(dt, panel, pr, g)
		rec := KGroup(dt, panel, g)
		for j := 0; j < GroupK && g*GroupK+j < len(dst); j++ {
			dst[g*GroupK+j] = s*float32(kValueAt(base, rec, pr, j)) - m
		}
	}
}

// kInv is 1/s, or 0 for s = 0 (every weight then stores u = 0).
func kInv(s float32) float32 {
	if s == 0 {
		return 0
	}
	return 1 / s
}

// kQuant is the u for w under scale s (is = kInv(s)) and min m: the
// nearest level, round((w+m)·is) in [0, L].
func kQuant(w, is, m float32, L int) int {
	return int(min(max(rne((w+m)*is), 0), int32(L)))
}

// kGroupError is Σ wt·(w − ŵ)² of one group under scale s and min m.
func kGroupError(x, wt []float32, s, m float32, L int) float32 {
	var e float32
	is := kInv(s)
	for j, v := range x {
		r := s*float32(kQuant(v, is, m, L)) - m - v
		e += wt[j] * r * r
	}
	return e
}

// kFit is a group's float scale and min (w ≈ s·u − m with m ≥ 0: a group
// whose values are all positive gets m = 0, as ggml's K rules do): the
// min-max rule s = (max − min)/L, m = −min (min clamped to ≤ 0), or with
// search a least-squares refit over 41 trial ranges (max − min)/(L + δ),
// δ = −1…1, keeping the best by weighted error.
func kFit(x, wt []float32, L int, search bool) (s, m float32) {
	lo, hi := float32(0), x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi <= lo {
		return 0, -lo
	}
	s, m = (hi-lo)/float32(L), -lo
	if !search {
		return s, m
	}
	best := kGroupError(x, wt, s, m, L)
	for step := -kFitSteps; step <= kFitSteps; step++ {
		is := (float32(L) + float32(step)/float32(kFitSteps)) / (hi - lo)
		var n, sl, sll, sx, sxl float32
		for j, v := range x {
			u := float32(min(max(rne((v-lo)*is), 0), int32(L)))
			w := wt[j]
			n += w
			sl += w * u
			sll += w * u * u
			sx += w * v
			sxl += w * v * u
		}
		det := n*sll - sl*sl
		if !(det > 0) {
			continue
		}
		cs := (n*sxl - sl*sx) / det
		cm := -(sll*sx - sl*sxl) / det
		if cm < 0 {
			cm, cs = 0, sxl/sll
		}
		if !(cs > 0) || math.IsInf(float64(cs), 0) {
			continue
		}
		if e := kGroupError(x, wt, cs, cm, L); better(e, best) {
			best, s, m = e, cs, cm
		}
	}
	return s, m
}

// kSuperScale is the f16 of v/63 rounded up far enough that 63 codes
// reach v (so the largest group keeps its range), 0 for v = 0, or +Inf
// when no f16 does (weights too large for the format: the model's
// loaders refuse the matrix, as they do an overflowing group scale).
func kSuperScale(v float32) uint16 {
	if !(v > 0) {
		return 0
	}
	h := half.F32ToF16(v / kCodeMax)
	for h < 0x7c00 && half.F16ToF32(h)*kCodeMax < v {
		h++
	}
	return h
}

// packKSuper writes row pr of one super-block record from its 256 values
// x (importance wt).
//
// Quantize's rule: each group's min-max scale and min, d = max sc/63 and
// dm = max min/63 (f16, rounded up), the codes rounded to nearest, the
// weights to the nearest level under the stored values. The search
// (QuantizeWeighted) fits each group by weighted least squares (kFit),
// then three rounds of: a least-squares refit of d and dm over the
// super-block given the codes and levels (kept if better), and each
// group's codes moved by up to ±3 to the best; it never keeps a choice
// worse than the one before, and keeps Quantize's choice of the
// super-block unless the searched one is better in the weighted error.
func packKSuper(dt kernel.DType, sb []byte, pr int, x, wt []float32, search bool) {
	L := 1<<kBits(dt) - 1
	c := kChoose(x, wt, L, false)
	if search {
		if cs := kChoose(x, wt, L, true); better(cs.err, c.err) {
			c = cs
		}
	}
	binary.LittleEndian.PutUint16(sb[kDOff+2*pr:], c.dh)
	binary.LittleEndian.PutUint16(sb[kDMOff+2*pr:], c.mh)
	d, dm := half.F16ToF32(c.dh), half.F16ToF32(c.mh)
	for j := range KGroups {
		setKCodes(sb, pr, j, c.sc[j], c.mc[j])
		is, m := kInv(d*float32(c.sc[j])), dm*float32(c.mc[j])
		rec := sb[KHeaderBytes+j*KLines(dt)*LineBytes:]
		for i, v := range x[j*GroupK : (j+1)*GroupK] {
			setKValue(KBase(dt), rec, pr, i, kQuant(v, is, m, L))
		}
	}
}

// kChoice is one row's super-block parameters and their weighted error.
type kChoice struct {
	dh, mh uint16
	sc, mc [KGroups]int
	err    float32
}

// kChoose is packKSuper's min-max choice, or with search the searched one.
func kChoose(x, wt []float32, L int, search bool) kChoice {
	var c kChoice
	var fs, fm [KGroups]float32
	var smax, mmax float32
	for j := range KGroups {
		fs[j], fm[j] = kFit(x[j*GroupK:(j+1)*GroupK], wt[j*GroupK:(j+1)*GroupK], L, search)
		smax, mmax = max(smax, fs[j]), max(mmax, fm[j])
	}
	c.dh, c.mh = kSuperScale(smax), kSuperScale(mmax)
	d, dm := half.F16ToF32(c.dh), half.F16ToF32(c.mh)
	for j := range KGroups {
		if d > 0 {
			c.sc[j] = int(min(max(rne(fs[j]/d), 0), kCodeMax))
		}
		if dm > 0 {
			c.mc[j] = int(min(max(rne(fm[j]/dm), 0), kCodeMax))
		}
	}
	if search {
		c.dh, c.mh = kRefine(x, wt, L, c.dh, c.mh, &c.sc, &c.mc)
		d, dm = half.F16ToF32(c.dh), half.F16ToF32(c.mh)
	}
	for j := range KGroups {
		c.err += kGroupError(x[j*GroupK:(j+1)*GroupK], wt[j*GroupK:(j+1)*GroupK], d*float32(c.sc[j]), dm*float32(c.mc[j]), L)
	}
	return c
}

// kRefine is the search's second stage (see packKSuper).
func kRefine(x, wt []float32, L int, dh, mh uint16, sc, mc *[KGroups]int) (uint16, uint16) {
	total := func(d, dm float32) float32 {
		var e float32
		for j := range KGroups {
			e += kGroupError(x[j*GroupK:(j+1)*GroupK], wt[j*GroupK:(j+1)*GroupK], d*float32(sc[j]), dm*float32(mc[j]), L)
		}
		return e
	}
	d, dm := half.F16ToF32(dh), half.F16ToF32(mh)
	for range kRounds {
		// least squares for (d, dm): w ≈ d·(sc·u) − dm·mc
		var a11, a12, a22, b1, b2 float64
		for j := range KGroups {
			is, m := kInv(d*float32(sc[j])), dm*float32(mc[j])
			for i, v := range x[j*GroupK : (j+1)*GroupK] {
				w := float64(wt[j*GroupK+i])
				p, q := float64(sc[j]*kQuant(v, is, m, L)), -float64(mc[j])
				a11 += w * p * p
				a12 += w * p * q
				a22 += w * q * q
				b1 += w * p * float64(v)
				b2 += w * q * float64(v)
			}
		}
		if det := a11*a22 - a12*a12; det > 0 {
			nd := half.F32ToF16(float32((b1*a22 - b2*a12) / det))
			nm := half.F32ToF16(float32((a11*b2 - a12*b1) / det))
			fd, fm := half.F16ToF32(nd), half.F16ToF32(nm)
			if fd > 0 && fm >= 0 && finiteF16(nd) && finiteF16(nm) && better(total(fd, fm), total(d, dm)) {
				dh, mh, d, dm = nd, nm, fd, fm
			}
		}
		for j := range KGroups {
			xs, ws := x[j*GroupK:(j+1)*GroupK], wt[j*GroupK:(j+1)*GroupK]
			best := kGroupError(xs, ws, d*float32(sc[j]), dm*float32(mc[j]), L)
			bs, bm := sc[j], mc[j]
			for a := -kSearchCodeWin; a <= kSearchCodeWin; a++ {
				for b := -kSearchCodeWin; b <= kSearchCodeWin; b++ {
					s2, m2 := sc[j]+a, mc[j]+b
					if (a == 0 && b == 0) || s2 < 0 || s2 > kCodeMax || m2 < 0 || m2 > kCodeMax {
						continue
					}
					if e := kGroupError(xs, ws, d*float32(s2), dm*float32(m2), L); better(e, best) {
						best, bs, bm = e, s2, m2
					}
				}
			}
			sc[j], mc[j] = bs, bm
		}
	}
	return dh, mh
}

// fillRandomK is Random and FillRandom for the K formats: random value
// bits, and per row and super-block d = std/σᵤ/48·U(0.75, 1.25) (σᵤ the sd
// of a uniform u ∈ [0, L]; every row its own, so a kernel that reads
// another row's d is seen), dm = d·L/2 and, per group, sc = mc ∈ [36, 60]:
// each group's weights d·sc·(u − L/2) are symmetric about zero with sd
// about std·sc/48.
// Padded rows are zero (d = dm = 0); padded columns hold random values
// (the activations there are zero and dequantization stops at K).
func fillRandomK(r interface {
	Uint64() uint64
	IntN(int) int
}, m *Matrix, p0, p1 int, std float64) {
	L := 1<<kBits(m.DType) - 1
	ustd := math.Sqrt(float64((L+1)*(L+1)-1) / 12)
	sbb, vb := KSuperBytes(m.DType), KGroups*KLines(m.DType)*LineBytes
	for p := p0; p < p1; p++ {
		panel := m.Panel(p)
		for s := 0; s < m.Kp/SuperK; s++ {
			sb := panel[s*sbb : (s+1)*sbb]
			for i := 0; i+8 <= vb; i += 8 {
				binary.LittleEndian.PutUint64(sb[KHeaderBytes+i:], r.Uint64())
			}
			for pr := 0; pr < PanelRows; pr++ {
				d := std / ustd / 48 * (0.75 + 0.5*float64(r.IntN(1024))/1024)
				if p*PanelRows+pr >= m.N {
					d = 0
				}
				binary.LittleEndian.PutUint16(sb[kDOff+2*pr:], half.F32ToF16(float32(d)))
				binary.LittleEndian.PutUint16(sb[kDMOff+2*pr:], half.F32ToF16(float32(d*float64(L)/2)))
				for j := range KGroups {
					c := 36 + r.IntN(25)
					setKCodes(sb, pr, j, c, c)
				}
			}
		}
	}
}

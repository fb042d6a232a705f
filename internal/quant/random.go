package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// Random returns an n×k matrix of random weights with standard deviation
// about std, for tests, tuning and benchmarks. Q8 and Q4 are filled
// directly in the packed format — uniform integers under per-group scales
// drawn around std — which is two orders of magnitude faster than drawing
// normal floats and quantizing them (a 256-expert MoE block is 1.8 G
// weights); Q3, Q6, Q5 and Q2 likewise (Q2: offset codes drawn around the centre); F32 and BF16 hold normal draws. Padded rows and columns are
// zero.
func Random(r *rand.Rand, dt kernel.DType, n, k int, hasMin bool, std float64) (*Matrix, error) {
	if dt == kernel.F32 || dt == kernel.BF16 {
		w := make([]float32, n*k)
		for i := range w {
			w[i] = float32(std * r.NormFloat64())
		}
		return Quantize(dt, w, n, k, hasMin)
	}
	m, err := New(dt, n, k, hasMin)
	if err != nil {
		return nil, err
	}
	if IsK(dt) {
		fillRandomK(r, m, 0, m.Panels(), std)
		return m, nil
	}
	// the integer std of a uniform draw: Q8 q ∈ [−128, 127], Q4 q ∈ [0, 15], Q3 u ∈ [0, 7], Q6 u ∈ [0, 63]
	qstd := 73.9
	gb, groups, valBytes := m.GroupBytes(), m.Groups(), 8*LineBytes
	switch dt {
	case kernel.Q4:
		qstd, valBytes = 4.61, 4*LineBytes
	case kernel.Q3: // u ∈ [0, 7]
		qstd, valBytes = 2.29, Q3Lines*LineBytes
	case kernel.Q6: // u ∈ [0, 63]
		qstd, valBytes = 18.47, Q6Lines*LineBytes
	case kernel.Q5: // u ∈ [0, 31]
		qstd, valBytes = 9.23, Q5Lines*LineBytes
	case kernel.Q2: // u ∈ [0, 3] about t ∈ [1.25, 1.75]
		qstd, valBytes = 1.13, Q2Lines*LineBytes
	}
	for p := 0; p < m.Panels(); p++ {
		panel := m.Panel(p)
		for g := 0; g < groups; g++ {
			rec := panel[g*gb : (g+1)*gb]
			for i := 0; i+8 <= valBytes; i += 8 {
				binary.LittleEndian.PutUint64(rec[i:], r.Uint64())
			}
			for pr := 0; pr < PanelRows; pr++ {
				d := std / qstd * (0.75 + 0.5*r.Float64())
				if p*PanelRows+pr >= n {
					d = 0
				}
				h := half.F32ToF16(float32(d))
				if dt == kernel.Q2 {
					// offset t = (c−1)/4 ∈ {1.25, 1.5, 1.75}: c ∈ [6, 8].
					// Not t = 1 or 2, whose weights u = t are exactly zero:
					// a product whose only terms are zero weights comes
					// out of an f32 kernel as a residue of the min term's
					// rounding (~1e-8), which relative checks of all-zero
					// outputs (k = 1 problems) count as infinite.
					h = q2Grid(float32(d), false) | uint16(6+r.IntN(3))
				}
				binary.LittleEndian.PutUint16(rec[valBytes+2*pr:], h)
				if dt == kernel.Q4 && hasMin { // w = d·q + m, centred
					binary.LittleEndian.PutUint16(rec[valBytes+2*PanelRows+2*pr:], half.F32ToF16(float32(-7.5*d)))
				}
			}
			// padded columns of the last group: zero (a mid value with a min;
			// the activations there are zero either way)
			if g == groups-1 {
				for j := k - g*GroupK; j < GroupK; j++ {
					for pr := 0; pr < PanelRows; pr++ {
						switch dt {
						case kernel.Q8:
							rec[q8Offset(pr, j)] = 128
						case kernel.Q3:
							setQ3(rec, pr, j, Q3Zero)
						case kernel.Q6:
							setQ6(rec, pr, j, Q6Zero)
						case kernel.Q5:
							setQ5(rec, pr, j, Q5Zero)
						case kernel.Q2:
							setQ2(rec, pr, j, 2)
						default:
							setNibble(rec, pr, j, 8)
						}
					}
				}
			}
		}
	}
	return m, nil
}

// Centred code spreads: the standard deviation of a stored integer once
// FillRandom has moved its most negative value to zero (q8 −127…127, q4
// −7…7, q3 −3…3, q6 −31…31, q5 −15…15, each value once in 2^bits and 0 twice).
const (
	centredQ8Std = 73.47 // sqrt(2·Σ_{1..127} v² / 256)
	centredQ4Std = 4.183 // sqrt(2·Σ_{1..7} v² / 16)
	centredQ3Std = 1.871 // sqrt(2·Σ_{1..3} v² / 8)
	centredQ6Std = 18.04 // sqrt(2·Σ_{1..31} v² / 64)
	centredQ5Std = 8.803 // sqrt(2·Σ_{1..15} v² / 32)
	// Q2 needs no centring: its scale word's offset 1.5 (code 7) makes
	// u − 1.5 ∈ {±0.5, ±1.5}, symmetric as drawn
	centredQ2Std = 1.118 // sqrt(1.25)
)

// FillRandom fills panels [p0, p1) of m (made by New) with random weights
// of standard deviation about std and mean zero, drawing from r: a
// synthetic model file is written this way, a few panels per draw source,
// so that the bytes depend on the seeds alone and not on the threads.
//
// Quantized formats are written directly in the packed layout, as Random
// does (random bits, each row's group scale std/σ·U(0.75, 1.25)), but
// centred: uniform bits give u = 0 (q8 −128, q4 −8, q3 −4, q6 −32, q5 −16) as
// often as the largest code, so Random's weights have mean −d/2. Through
// y = W·x that bias is a rank-one term of size |μ|·√K ≈ 0.1·√2304 ≈ 5 at q4
// along the all-ones input direction, which a deep stack of random layers
// turns into one shared direction for every token. FillRandom stores u = 0
// as the zero code instead (word-parallel bit tricks per format), so each
// stored q is symmetric about 0 (Q2: uniform codes under the offset 1.5
// already are). F32 and BF16 are uniform in ±√3·std. Padded rows are zero,
// and so are padded columns (Q2's: any code; the activations there are
// zero and dequantization stops at K).
//
//	for p in [p0, p1): for each weight w of panel p: w ~ centred, sd std
func FillRandom(r *rand.Rand, m *Matrix, p0, p1 int, std float64) {
	switch m.DType {
	case kernel.F32, kernel.BF16:
		fillRandomFloat(r, m, p0, p1, std)
		return
	}
	if IsK(m.DType) { // symmetric about zero as drawn
		fillRandomK(r, m, p0, p1, std)
		return
	}
	gb, groups := m.GroupBytes(), m.Groups()
	qstd, valBytes := centredQ8Std, 8*LineBytes
	switch m.DType {
	case kernel.Q4:
		qstd, valBytes = centredQ4Std, 4*LineBytes
	case kernel.Q3:
		qstd, valBytes = centredQ3Std, Q3Lines*LineBytes
	case kernel.Q6:
		qstd, valBytes = centredQ6Std, Q6Lines*LineBytes
	case kernel.Q5:
		qstd, valBytes = centredQ5Std, Q5Lines*LineBytes
	case kernel.Q2:
		qstd, valBytes = centredQ2Std, Q2Lines*LineBytes
	}
	for p := p0; p < p1; p++ {
		panel := m.Panel(p)
		for g := 0; g < groups; g++ {
			rec := panel[g*gb : (g+1)*gb]
			for i := 0; i+8 <= valBytes; i += 8 {
				binary.LittleEndian.PutUint64(rec[i:], r.Uint64())
			}
			centre(m.DType, rec)
			for pr := 0; pr < PanelRows; pr++ {
				d := std / qstd * (0.75 + 0.5*r.Float64())
				if p*PanelRows+pr >= m.N {
					d = 0
				}
				h := half.F32ToF16(float32(d))
				if m.DType == kernel.Q2 { // code 7: offset (7−1)/4 = 1.5
					h = q2Grid(float32(d), false) | 7
				}
				binary.LittleEndian.PutUint16(rec[valBytes+2*pr:], h)
				if m.HasMin { // w = d·u + m, u centred on 8
					binary.LittleEndian.PutUint16(rec[valBytes+2*PanelRows+2*pr:], half.F32ToF16(float32(-8*d)))
				}
			}
			if g == groups-1 && m.DType != kernel.Q2 { // padded columns: the zero code
				for j := m.K - g*GroupK; j < GroupK; j++ {
					for pr := 0; pr < PanelRows; pr++ {
						switch m.DType {
						case kernel.Q8:
							rec[q8Offset(pr, j)] = 128
						case kernel.Q3:
							setQ3(rec, pr, j, Q3Zero)
						case kernel.Q6:
							setQ6(rec, pr, j, Q6Zero)
						case kernel.Q5:
							setQ5(rec, pr, j, Q5Zero)
						default:
							setNibble(rec, pr, j, 8)
						}
					}
				}
			}
		}
	}
}

// fillRandomFloat is FillRandom for F32 ([K][16] per panel) and BF16
// ([Kp/2][16][2]).
func fillRandomFloat(r *rand.Rand, m *Matrix, p0, p1 int, std float64) {
	a := float32(math.Sqrt(3) * std) // uniform(−a, a) has sd std
	for p := p0; p < p1; p++ {
		panel := m.Panel(p)
		for k := 0; k < m.Kp; k++ {
			for pr := 0; pr < PanelRows; pr++ {
				var w float32
				if p*PanelRows+pr < m.N && k < m.K {
					w = a * (2*r.Float32() - 1)
				}
				if m.DType == kernel.F32 {
					binary.LittleEndian.PutUint32(panel[4*(k*PanelRows+pr):], math.Float32bits(w))
				} else {
					binary.LittleEndian.PutUint16(panel[2*((k/2)*2*PanelRows+2*pr+k%2):], half.F32ToBF16(w))
				}
			}
		}
	}
}

const ones8 = 0x0101010101010101 // bit 0 of every byte

// centre rewrites every u = 0 of a group record's value lines as the zero
// code (q8 128, q4 8, q3 4, q6 32, q5 16), eight bytes at a time: a field is zero
// when the OR of its bits, gathered at bit 0 of its byte (or nibble), is
// clear; the zero code is its top bit.
func centre(dt kernel.DType, rec []byte) {
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(rec[i:]) }
	put := func(i int, x uint64) { binary.LittleEndian.PutUint64(rec[i:], x) }
	switch dt {
	case kernel.Q8:
		for i := 0; i < 8*LineBytes; i += 8 {
			x := word(i)
			y := x | x>>4
			y |= y >> 2
			y |= y >> 1 // bit 0 of each byte: the OR of its 8 bits
			put(i, x|(^y&ones8)<<7)
		}
	case kernel.Q4:
		const ones4 = 0x1111111111111111 // bit 0 of every nibble
		for i := 0; i < 4*LineBytes; i += 8 {
			x := word(i)
			y := x | x>>1 | x>>2 | x>>3
			put(i, x|(^y&ones4)<<3)
		}
	case kernel.Q3:
		// bits 0–2 and 3–5 of each byte of the three lines are whole
		// fields; k-quad 6 is bits 6–7 of line 0 and bit 6 of line 2,
		// k-quad 7 bits 6–7 of line 1 and bit 7 of line 2 (q3.go)
		for i := 0; i < LineBytes; i += 8 {
			l0, l1, l2 := word(i), word(LineBytes+i), word(2*LineBytes+i)
			z6 := ^(l0>>6 | l0>>7 | l2>>6) & ones8
			z7 := ^(l1>>6 | l1>>7 | l2>>7) & ones8
			c := func(l uint64) uint64 {
				za := ^(l | l>>1 | l>>2) & ones8
				zb := ^(l>>3 | l>>4 | l>>5) & ones8
				return l | za<<2 | zb<<5
			}
			put(i, c(l0))
			put(LineBytes+i, c(l1))
			put(2*LineBytes+i, c(l2)|z6<<6|z7<<7)
		}
	case kernel.Q6:
		// bits 0–5 of each byte of the six lines are whole fields; k-quad
		// 6 is bits 6–7 of lines 0–2 (u's bits 0–1, 2–3, 4–5), k-quad 7
		// those of lines 3–5 (q6.go)
		for i := 0; i < LineBytes; i += 8 {
			var l [Q6Lines]uint64
			for c := range l {
				l[c] = word(c*LineBytes + i)
			}
			z6 := ^(l[0]>>6 | l[0]>>7 | l[1]>>6 | l[1]>>7 | l[2]>>6 | l[2]>>7) & ones8
			z7 := ^(l[3]>>6 | l[3]>>7 | l[4]>>6 | l[4]>>7 | l[5]>>6 | l[5]>>7) & ones8
			for c := range l {
				x := l[c]
				z := ^(x | x>>1 | x>>2 | x>>3 | x>>4 | x>>5) & ones8
				l[c] = x | z<<5
			}
			l[2] |= z6 << 7
			l[5] |= z7 << 7
			for c := range l {
				put(c*LineBytes+i, l[c])
			}
		}
	case kernel.Q5:
		// lines 0–3: Q4's nibbles, k-quads 2c (low) and 2c+1 (high) of
		// line c; line 4: bit h of each byte the fifth bit of k-quad h
		// (q5.go). u = 0 is a zero nibble under a clear fifth bit; the
		// zero code 16 is that fifth bit set.
		for i := 0; i < LineBytes; i += 8 {
			hb := word(4*LineBytes + i)
			for c := 0; c < 4; c++ {
				x := word(c*LineBytes + i)
				zlo := ^(x | x>>1 | x>>2 | x>>3 | hb>>uint(2*c)) & ones8
				zhi := ^(x>>4 | x>>5 | x>>6 | x>>7 | hb>>uint(2*c+1)) & ones8
				hb |= zlo<<uint(2*c) | zhi<<uint(2*c+1)
			}
			put(4*LineBytes+i, hb)
		}
	}
}

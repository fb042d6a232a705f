// Random GGUF-format weights: ggml blocks drawn directly (tests, tuning,
// benchmarks and krun synth's files).

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// FillRandomGGUF fills the blocks in raw (whole blocks of ggml type t, as
// a GGUF tensor stores them) with random weights of mean zero and
// standard deviation about std, drawing from r: random quant bits under
// scales drawn around std/σ (σ the spread of the type's integers), each
// block's scale negated at random where the type's scale has a sign (q8_0,
// q4_0, q5_0, q3_K, q6_K, iq4_nl, iq4_xs), the min set to cancel the
// mean where the type has one (q4_1, q5_1, q2_K, q4_K, q5_K), and
// mxfp4's codebook symmetric as it is. So every weight is zero-mean and a
// deep stack of random layers keeps its activations of order 1. f32, f16
// and bf16 hold uniform draws in ±√3·std. Every stored scale is finite.
func FillRandomGGUF(r *rand.Rand, t gguf.Type, raw []byte, std float64) {
	bs, bb := t.BlockSize(), t.BlockBytes()
	if bs == 1 {
		fillRandomPlain(r, t, raw, std)
		return
	}
	f := ggufRandomBlocks[t]
	for off := 0; off+bb <= len(raw); off += bb {
		f(r, raw[off:off+bb], std)
	}
}

// RandomGGUF is an n×k matrix of GGUF format dt with FillRandomGGUF's
// weights.
func RandomGGUF(r *rand.Rand, dt kernel.DType, n, k int, std float64) (*Matrix, error) {
	m, err := New(dt, n, k, false)
	if err != nil {
		return nil, err
	}
	FillRandomGGUF(r, ggufTypes[dt], m.Data, std)
	return m, nil
}

func fillRandomPlain(r *rand.Rand, t gguf.Type, raw []byte, std float64) {
	a := math.Sqrt(3) * std
	for i := 0; i+t.BlockBytes() <= len(raw); i += t.BlockBytes() {
		v := float32(a * (2*r.Float64() - 1))
		switch t {
		case gguf.TypeF32:
			binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(v))
		case gguf.TypeF16:
			binary.LittleEndian.PutUint16(raw[i:], half.F32ToF16(v))
		case gguf.TypeBF16:
			binary.LittleEndian.PutUint16(raw[i:], half.F32ToBF16(v))
		}
	}
}

// randomBits fills b with random bytes.
func randomBits(r *rand.Rand, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for ; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
}

// spread draws a scale: s·U(0.75, 1.25), negated half the time if signed.
func spread(r *rand.Rand, s float64, signed bool) float32 {
	v := s * (0.75 + 0.5*r.Float64())
	if signed && r.Uint32()&1 == 1 {
		v = -v
	}
	return float32(v)
}

func putHalf(b []byte, v float32) { binary.LittleEndian.PutUint16(b, half.F32ToF16(v)) }

// Integer spreads (standard deviations) of uniformly drawn codes.
const (
	uniformQ8Std   = 73.9  // int8 −128…127
	uniformQ4Std   = 4.61  // 0…15
	uniformQ5Std   = 9.23  // 0…31
	uniformQ2Std   = 1.118 // 0…3
	uniformQ3Std   = 2.29  // −4…3
	uniformQ6Std   = 18.47 // −32…31
	iq4Std         = 65.2  // IQ4NLValues, uniform codes (root mean square)
	mxfp4Std       = 5.85  // MXFP4Values, uniform codes (root mean square)
	kScaleCodeMean = 47.5  // the 6-bit scale codes drawn in [32, 63]
)

var ggufRandomBlocks = map[gguf.Type]func(r *rand.Rand, b []byte, std float64){
	gguf.TypeQ8_0: func(r *rand.Rand, b []byte, std float64) {
		putHalf(b, spread(r, std/uniformQ8Std, true))
		randomBits(r, b[2:34])
	},
	gguf.TypeQ4_0: func(r *rand.Rand, b []byte, std float64) {
		putHalf(b, spread(r, std/uniformQ4Std, true))
		randomBits(r, b[2:18])
	},
	gguf.TypeQ4_1: func(r *rand.Rand, b []byte, std float64) {
		d := spread(r, std/uniformQ4Std, false)
		putHalf(b, d)
		putHalf(b[2:], -7.5*d)
		randomBits(r, b[4:20])
	},
	gguf.TypeQ5_0: func(r *rand.Rand, b []byte, std float64) {
		putHalf(b, spread(r, std/uniformQ5Std, true))
		randomBits(r, b[2:22])
	},
	gguf.TypeQ5_1: func(r *rand.Rand, b []byte, std float64) {
		d := spread(r, std/uniformQ5Std, false)
		putHalf(b, d)
		putHalf(b[2:], -15.5*d)
		randomBits(r, b[4:24])
	},
	gguf.TypeQ2_K: func(r *rand.Rand, b []byte, std float64) {
		// w = (d·sc)·q − dmin·mn with sc ∈ [8, 15], dmin = 1.5·d, mn = sc:
		// the mean 1.5·d·sc of q ∈ [0, 3] cancelled
		d := spread(r, std/(11.5*uniformQ2Std), false)
		for s := 0; s < 16; s++ {
			sc := 8 + r.IntN(8)
			b[s] = byte(sc | sc<<4)
		}
		randomBits(r, b[16:80])
		putHalf(b[80:], d)
		putHalf(b[82:], 1.5*d)
	},
	gguf.TypeQ3_K: func(r *rand.Rand, b []byte, std float64) {
		// sc − 32 ∈ ±[16, 31] (6-bit codes 0…15 and 48…63)
		randomBits(r, b[0:96]) // hmask, qs
		var codes [16]int
		for s := range codes {
			c := 16 + r.IntN(16)
			if r.Uint32()&1 == 1 {
				c = 63 - c + 16 // 48…63: +16…+31
			} else {
				c -= 16 // 0…15: −32…−17
			}
			codes[s] = c
		}
		putQ3KScales(b[96:108], &codes)
		putHalf(b[108:], spread(r, std/(24*uniformQ3Std), false))
	},
	gguf.TypeQ4_K: func(r *rand.Rand, b []byte, std float64) { randomQ45K(r, b, std, false) },
	gguf.TypeQ5_K: func(r *rand.Rand, b []byte, std float64) { randomQ45K(r, b, std, true) },
	gguf.TypeQ6_K: func(r *rand.Rand, b []byte, std float64) {
		randomBits(r, b[0:192]) // ql, qh
		for s := 0; s < 16; s++ {
			sc := 64 + r.IntN(64)
			if r.Uint32()&1 == 1 {
				sc = -sc
			}
			b[192+s] = byte(int8(sc))
		}
		putHalf(b[208:], spread(r, std/(96*uniformQ6Std), false))
	},
	gguf.TypeIQ4_NL: func(r *rand.Rand, b []byte, std float64) {
		putHalf(b, spread(r, std/iq4Std, true))
		randomBits(r, b[2:18])
	},
	gguf.TypeIQ4_XS: func(r *rand.Rand, b []byte, std float64) {
		// ls − 32 ∈ ±[16, 31]
		var sh uint16
		for s := 0; s < 8; s++ {
			ls := 48 + r.IntN(16)
			if r.Uint32()&1 == 1 {
				ls = 63 - ls // 0…15
			}
			b[4+s/2] = b[4+s/2]&^(15<<(4*(s%2))) | byte(ls&15)<<(4*(s%2))
			sh |= uint16(ls>>4) << (2 * s)
		}
		binary.LittleEndian.PutUint16(b[2:], sh)
		putHalf(b, spread(r, std/(24*iq4Std), false))
		randomBits(r, b[8:136])
	},
	gguf.TypeMXFP4: func(r *rand.Rand, b []byte, std float64) {
		e := 128 + math.Round(math.Log2(std/mxfp4Std)) + float64(r.IntN(3)-1)
		b[0] = byte(min(max(e, 0), 254))
		randomBits(r, b[1:17])
	},
}

// randomQ45K draws a q4_K (q5 false) or q5_K block: scale codes sc in
// [32, 63], dmin = (L−1)·d (L = 16 or 32 levels) and each min code
// mn = ⌈sc/2⌉: the codes' mean (L−1)/2·d·sc cancelled to within half a
// min code.
func randomQ45K(r *rand.Rand, b []byte, std float64, q5 bool) {
	qstd, levels := uniformQ4Std, 16.0
	if q5 {
		qstd, levels = uniformQ5Std, 32.0
	}
	d := spread(r, std/(kScaleCodeMean*qstd), false)
	putHalf(b, d)
	putHalf(b[2:], d*float32(levels-1))
	var sc, mn [8]int
	for j := range sc {
		sc[j] = 32 + r.IntN(32)
		mn[j] = (sc[j] + 1) / 2
	}
	putQ4KScales(b[4:16], &sc, &mn)
	randomBits(r, b[16:])
}

// putQ4KScales packs 8 6-bit scale and min codes as q4_K and q5_K store
// them (the inverse of q4KScaleMin).
func putQ4KScales(s []byte, sc, mn *[8]int) {
	for j := 0; j < 4; j++ {
		s[j] = byte(sc[j]&63) | byte(sc[j+4]>>4)<<6
		s[j+4] = byte(mn[j]&63) | byte(mn[j+4]>>4)<<6
		s[j+8] = byte(sc[j+4]&15) | byte(mn[j+4]&15)<<4
	}
}

// putQ3KScales packs 16 6-bit scale codes as q3_K stores them (the inverse
// of q3KScale, which subtracts 32).
func putQ3KScales(s []byte, codes *[16]int) {
	clear(s[:12])
	for i, c := range codes {
		if i < 8 {
			s[i] |= byte(c & 15)
		} else {
			s[i-8] |= byte(c&15) << 4
		}
		s[8+i%4] |= byte(c>>4&3) << (2 * (i / 4))
	}
}

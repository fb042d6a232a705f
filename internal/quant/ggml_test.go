package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// ---- encoders written from ggml-common.h's block layouts ----
//
// Each builds one block from its scales and integers (q as stored, before
// any bias) and returns the values the block's formula gives, in float64.
// They are the inverse of the decoders in ggml_dequant.go, written
// separately from the layout description so that a shared misreading
// shows up in the golden test against llama.cpp's own quantizer.

type ggmlEnc func(d, dmin float32, i int) (b []byte, want []float64)

func f16Bytes(b []byte, f float32) float64 {
	h := half.F32ToF16(f)
	binary.LittleEndian.PutUint16(b, h)
	return float64(half.F16ToF32(h))
}

// ggmlEncoders: block i of a sequence; across a few blocks every integer
// value and every scale value occurs.
var ggmlEncoders = map[gguf.Type]ggmlEnc{
	gguf.TypeQ4_0: func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 18), make([]float64, 32)
		dd := f16Bytes(b, d)
		for e := range 32 {
			q := (e + i) % 16
			b[2+e%16] |= byte(q) << (4 * (e / 16))
			w[e] = dd * float64(q-8)
		}
		return b, w
	},
	gguf.TypeQ4_1: func(d, dmin float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 20), make([]float64, 32)
		dd, mm := f16Bytes(b, d), f16Bytes(b[2:], -dmin)
		for e := range 32 {
			q := (e + i) % 16
			b[4+e%16] |= byte(q) << (4 * (e / 16))
			w[e] = dd*float64(q) + mm
		}
		return b, w
	},
	gguf.TypeQ5_0: func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 22), make([]float64, 32)
		dd := f16Bytes(b, d)
		var qh uint32
		for e := range 32 {
			q := (e + i) % 32
			qh |= uint32(q>>4) << e
			b[6+e%16] |= byte(q&15) << (4 * (e / 16))
			w[e] = dd * float64(q-16)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
		return b, w
	},
	gguf.TypeQ5_1: func(d, dmin float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 24), make([]float64, 32)
		dd, mm := f16Bytes(b, d), f16Bytes(b[2:], -dmin)
		var qh uint32
		for e := range 32 {
			q := (e + i) % 32
			qh |= uint32(q>>4) << e
			b[8+e%16] |= byte(q&15) << (4 * (e / 16))
			w[e] = dd*float64(q) + mm
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
		return b, w
	},
	gguf.TypeQ8_0: func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 34), make([]float64, 32)
		dd := f16Bytes(b, d)
		for e := range 32 {
			q := int8(32*i + e - 128) // blocks 0..7 hold −128..127
			b[2+e] = byte(q)
			w[e] = dd * float64(q)
		}
		return b, w
	},
	gguf.TypeQ2_K: func(d, dmin float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 84), make([]float64, 256)
		dd, dm := f16Bytes(b[80:], d), f16Bytes(b[82:], dmin)
		for s := range 16 {
			b[s] = byte((s+i)%16 | (15-(s+2*i)%16)<<4)
		}
		for e := range 256 {
			q := (e + e/16 + i) % 4
			h, j, l := e/128, e%128/32, e%32
			b[16+32*h+l] |= byte(q) << (2 * j)
			sc, mn := int(b[e/16]&15), int(b[e/16]>>4)
			w[e] = dd*float64(sc)*float64(q) - dm*float64(mn)
		}
		return b, w
	},
	gguf.TypeQ3_K: func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 110), make([]float64, 256)
		dd := f16Bytes(b[108:], d)
		var sc [16]int
		for s := range 16 {
			sc[s] = (16*i + 5*s) % 64 // blocks 0..3 cover 0..63
			b[96+s%8] |= byte(sc[s]&15) << (4 * (s / 8))
			b[96+8+s%4] |= byte(sc[s]>>4) << (2 * (s / 4))
		}
		for e := range 256 {
			q := (e+e/16+i)%8 - 4
			h, j, l := e/128, e%128/32, e%32
			low, hbit := q, 1
			if q < 0 {
				low, hbit = q+4, 0
			}
			b[32+32*h+l] |= byte(low) << (2 * j)
			b[l] |= byte(hbit) << (4*h + j)
			w[e] = dd * float64(sc[e/16]-32) * float64(q)
		}
		return b, w
	},
	gguf.TypeQ4_K: func(d, dmin float32, i int) ([]byte, []float64) { return encQ45K(d, dmin, i, false) },
	gguf.TypeQ5_K: func(d, dmin float32, i int) ([]byte, []float64) { return encQ45K(d, dmin, i, true) },
	gguf.TypeQ6_K: func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 210), make([]float64, 256)
		dd := f16Bytes(b[208:], d)
		for s := range 16 {
			b[192+s] = byte(16*i + 7*s) // int8 scales; blocks 0..15 cover −128..127
		}
		for e := range 256 {
			q := (e+i)%64 - 32
			u := q + 32
			h, t, l := e/128, e%128/32, e%32
			b[64*h+32*(t&1)+l] |= byte(u&15) << (4 * (t / 2))
			b[128+32*h+l] |= byte(u>>4) << (2 * t)
			w[e] = dd * float64(int8(b[192+e/16])) * float64(q)
		}
		return b, w
	},
}

// The codebooks, as ggml-common.h lists them (kvalues_iq4nl, and
// kvalues_mxfp4: twice the E2M1 values), written out here rather than read
// from the package so that a wrong table entry fails the known blocks.
var (
	testIQ4NL = [16]float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	testMXFP4 = [16]float64{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
)

func init() {
	ggmlEncoders[gguf.TypeIQ4_NL] = func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 18), make([]float64, 32)
		dd := f16Bytes(b, d)
		for e := range 32 {
			q := (e + i) % 16
			b[2+e%16] |= byte(q) << (4 * (e / 16))
			w[e] = dd * testIQ4NL[q]
		}
		return b, w
	}
	ggmlEncoders[gguf.TypeIQ4_XS] = func(d, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 136), make([]float64, 256)
		dd := f16Bytes(b, d)
		var sh uint16
		for s := range 8 {
			ls := (8*i + 5*s) % 64 // blocks 0..7 cover 0..63
			b[4+s/2] |= byte(ls&15) << (4 * (s % 2))
			sh |= uint16(ls>>4) << (2 * s)
			for l := range 32 {
				q := (l + s + i) % 16
				b[8+16*s+l%16] |= byte(q) << (4 * (l / 16))
				w[32*s+l] = dd * float64(ls-32) * testIQ4NL[q]
			}
		}
		binary.LittleEndian.PutUint16(b[2:], sh)
		return b, w
	}
	// mxfp4 has no f16 scale: the exponent byte walks 0..255 over the
	// blocks (d is ignored), covering ggml's subnormal cases e = 0, 1
	ggmlEncoders[gguf.TypeMXFP4] = func(_, _ float32, i int) ([]byte, []float64) {
		b, w := make([]byte, 17), make([]float64, 32)
		e := (37*i + 1) % 256
		if i < 2 {
			e = i
		}
		b[0] = byte(e)
		for l := range 32 {
			q := (l + i) % 16
			b[1+l%16] |= byte(q) << (4 * (l / 16))
			w[l] = math.Ldexp(testMXFP4[q], e-128)
		}
		return b, w
	}
}

// encQ45K builds a q4_K (q5: false) or q5_K block: 8 sub-blocks of 32
// with 6-bit scales and mins; blocks 0..7 cover 0..63.
func encQ45K(d, dmin float32, i int, q5 bool) ([]byte, []float64) {
	size, qsOff := 144, 16
	if q5 {
		size, qsOff = 176, 48
	}
	b, w := make([]byte, size), make([]float64, 256)
	dd, dm := f16Bytes(b, d), f16Bytes(b[2:], dmin)
	var sc, mn [8]int
	for s := range 8 {
		sc[s], mn[s] = (8*i+s)%64, (8*i+3*s+5)%64
	}
	for s := range 4 { // bytes 0..3 scales, 4..7 mins, low 6 bits; top 2 bits carry sub-blocks 4..7's high bits
		b[4+s] = byte(sc[s]) | byte(sc[s+4]>>4)<<6
		b[4+s+4] = byte(mn[s]) | byte(mn[s+4]>>4)<<6
		b[4+s+8] = byte(sc[s+4]&15) | byte(mn[s+4]&15)<<4
	}
	levels := 16
	if q5 {
		levels = 32
	}
	for e := range 256 {
		q := (e + e/32 + i) % levels
		s, l := e/32, e%32
		b[qsOff+32*(s/2)+l] |= byte(q&15) << (4 * (s % 2))
		if q5 {
			b[16+l] |= byte(q>>4) << s
		}
		w[e] = dd*float64(sc[s])*float64(q) - dm*float64(mn[s])
	}
	return b, w
}

// ggmlQuantTypes are the block types FromGGML and DequantizeGGML take.
var ggmlQuantTypes = []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
	gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeMXFP4}

var ggmlAllTypes = append([]gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16}, ggmlQuantTypes...)

// TestDequantizeGGMLKnownBlocks: hand-built blocks (every integer value,
// every scale and min value, across 16 blocks) dequantize to the formula.
// With power-of-two super-scales every product is exact, so the values
// must be equal; with arbitrary f16 scales, within float32 rounding.
func TestDequantizeGGMLKnownBlocks(t *testing.T) {
	for _, ty := range ggmlQuantTypes {
		t.Run(ty.String(), func(t *testing.T) {
			for _, sc := range []struct {
				d, dmin float32
				tol     float64
			}{{1.0 / 16, 1.0 / 64, 0}, {-0.5, 0.25, 0}, {0.01234, 0.00567, 3e-7}, {6.1e-5, 3.0e-6, 3e-7}} {
				var raw []byte
				var want []float64
				for i := range 16 {
					b, w := ggmlEncoders[ty](sc.d, sc.dmin, i)
					if len(b) != ty.BlockBytes() || len(w) != ty.BlockSize() {
						t.Fatalf("encoder gives %d bytes, %d values", len(b), len(w))
					}
					raw, want = append(raw, b...), append(want, w...)
				}
				got := make([]float32, len(want))
				if err := DequantizeGGML(ty, raw, got); err != nil {
					t.Fatal(err)
				}
				for e, w := range want {
					// the tolerance is relative to the block's largest term
					if diff := math.Abs(float64(got[e]) - w); diff > sc.tol*(math.Abs(w)+128*math.Abs(float64(sc.d))) {
						t.Fatalf("d=%v dmin=%v element %d (block %d): %v, formula %v", sc.d, sc.dmin, e, e/ty.BlockSize(), got[e], w)
					}
				}
			}
		})
	}
	t.Run("plain", func(t *testing.T) {
		vals := []float32{0, 1, -2.5, 65504, -6.1035156e-05, 5.9604645e-08, 1.0 / 3}
		f32, f16, bf16 := make([]byte, 4*len(vals)), make([]byte, 2*len(vals)), make([]byte, 2*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(v))
			binary.LittleEndian.PutUint16(f16[2*i:], half.F32ToF16(v))
			binary.LittleEndian.PutUint16(bf16[2*i:], half.F32ToBF16(v))
		}
		for _, c := range []struct {
			ty    gguf.Type
			raw   []byte
			round func(float32) float32
		}{
			{gguf.TypeF32, f32, func(v float32) float32 { return v }},
			{gguf.TypeF16, f16, func(v float32) float32 { return half.F16ToF32(half.F32ToF16(v)) }},
			{gguf.TypeBF16, bf16, func(v float32) float32 { return half.BF16ToF32(half.F32ToBF16(v)) }},
		} {
			got := make([]float32, len(vals))
			if err := DequantizeGGML(c.ty, c.raw, got); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if got[i] != c.round(v) {
					t.Errorf("%s %v: got %v", c.ty, v, got[i])
				}
			}
		}
	})
}

// ---- random blocks ----

// randomGGML returns n rows of k elements of type t: random bytes with the
// f16 scales replaced by draws of realistic size (d ~ 0.01·|N|, mins and
// q4_1/q5_1's m of either sign), the plain types normal draws.
func randomGGML(r *rand.Rand, t gguf.Type, n, k int) []byte {
	nel := n * k
	switch t {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		b := make([]byte, nel*t.BlockBytes())
		for i := range nel {
			v := float32(r.NormFloat64() * 0.02)
			switch t {
			case gguf.TypeF32:
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			case gguf.TypeF16:
				binary.LittleEndian.PutUint16(b[2*i:], half.F32ToF16(v))
			default:
				binary.LittleEndian.PutUint16(b[2*i:], half.F32ToBF16(v))
			}
		}
		return b
	}
	bb := t.BlockBytes()
	b := make([]byte, nel/t.BlockSize()*bb)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for i := 0; i < len(b); i += bb {
		offs := ggmlTypes[t].scales
		for j, off := range offs {
			v := float32(math.Abs(r.NormFloat64()) * 0.01)
			if t.BlockSize() == 256 {
				v /= 32 // a super-scale multiplies 6-bit (q6_K: 8-bit) sub-scales
			}
			if j == 1 && t.BlockSize() == 32 {
				v = float32(r.NormFloat64() * 0.1) // q4_1/q5_1's m
			}
			putF16(b[i+off:], v)
		}
		if t == gguf.TypeMXFP4 {
			b[i] = byte(128 - 9 + r.IntN(4)) // 2^−9…2^−6
		}
	}
	return b
}

// ggmlSame reports whether m holds exactly the values want (as float32
// values: +0 == −0) and the first element that differs.
func ggmlSame(m *Matrix, want []float32) (bool, int) {
	got := m.Dequantize()
	for i := range want {
		if got[i] != want[i] {
			return false, i
		}
	}
	return true, -1
}

func relRMS(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// ggmlPacking is what FromGGML must choose per type and mode.
type ggmlPacking struct {
	exact, fast format
	fastBound   float64 // relative RMS of fast-mode values against DequantizeGGML's, on randomGGML data
}

// ggmlPackings: the fast-mode bounds are about 1.5× the relative RMS
// measured on randomGGML blocks (f16→bf16 0.0017, q5_1 0.0038, q2_K 0.033,
// q3_K 0.051, q4_K 0.00022, q5_K 0.0038, q6_K 0.0045); the golden test
// holds the (larger) bounds for real weights.
var ggmlPackings = map[gguf.Type]ggmlPacking{
	gguf.TypeF32:  {format{kernel.F32, false}, format{kernel.F32, false}, 0},
	gguf.TypeF16:  {format{kernel.F32, false}, format{kernel.BF16, false}, 0.0026},
	gguf.TypeBF16: {format{kernel.BF16, false}, format{kernel.BF16, false}, 0},
	gguf.TypeQ8_0: {format{kernel.Q8, false}, format{kernel.Q8, false}, 0},
	gguf.TypeQ4_0: {format{kernel.Q4, false}, format{kernel.Q4, false}, 0},
	gguf.TypeQ4_1: {format{kernel.Q4, true}, format{kernel.Q4, true}, 0},
	gguf.TypeQ5_0: {format{kernel.Q5, false}, format{kernel.Q5, false}, 0}, // with FastQ5 (else Q8: TestFromGGMLQ5)
	gguf.TypeQ5_1: {format{kernel.F32, false}, format{kernel.Q8, false}, 0.006},
	gguf.TypeQ2_K: {format{kernel.F32, false}, format{kernel.Q4, true}, 0.05},
	gguf.TypeQ3_K: {format{kernel.Q8, false}, format{kernel.Q4, false}, 0.077},
	gguf.TypeQ4_K: {format{kernel.F32, false}, format{kernel.Q4, true}, 0.00035},
	gguf.TypeQ5_K: {format{kernel.F32, false}, format{kernel.Q8, false}, 0.006},
	gguf.TypeQ6_K: {format{kernel.F32, false}, format{kernel.Q6, false}, 0.018},
	// the group scales d·(ls−32) of random f16 d are seldom f16s: exact
	// mode keeps F32, fast rounds them (≤ 2⁻¹¹ of each)
	gguf.TypeIQ4_XS: {format{kernel.F32, false}, format{kernel.Q8, false}, 0.0003},
	gguf.TypeIQ4_NL: {format{kernel.Q8, false}, format{kernel.Q8, false}, 0},
	gguf.TypeMXFP4:  {format{kernel.Q8, false}, format{kernel.Q8, false}, 0},
}

func formatOf(m *Matrix) format { return format{m.DType, m.HasMin} }

// TestFromGGML: on random blocks and awkward shapes, the exact repack
// holds DequantizeGGML's values exactly, the fast one within its bound,
// and exact reports exactly whether the values were kept.
func TestFromGGML(t *testing.T) {
	defer setFastQ6(true)()
	defer setFastQ5(true)()
	r := rand.New(rand.NewPCG(21, 3))
	for _, ty := range ggmlAllTypes {
		bs := ty.BlockSize()
		ks := []int{32, 96}
		if bs == 256 {
			ks = []int{256, 768}
		}
		for _, k := range ks {
			for _, n := range []int{1, 15, 17, 40} {
				t.Run(fmt.Sprintf("%s/n=%d/k=%d", ty, n, k), func(t *testing.T) {
					raw := randomGGML(r, ty, n, k)
					want := make([]float32, n*k)
					if err := DequantizeGGML(ty, raw, want); err != nil {
						t.Fatal(err)
					}
					pk := ggmlPackings[ty]
					m, exact, err := FromGGML(ty, raw, n, k, RepackExact)
					if err != nil {
						t.Fatal(err)
					}
					if m.N != n || m.K != k || formatOf(m) != pk.exact {
						t.Fatalf("exact mode: %s %d×%d, want %s %d×%d", formatOf(m), m.N, m.K, pk.exact, n, k)
					}
					if same, i := ggmlSame(m, want); !same || !exact {
						t.Fatalf("exact mode: exact=%v, element %d differs", exact, i)
					}
					m, exact, err = FromGGML(ty, raw, n, k, RepackFast)
					if err != nil {
						t.Fatal(err)
					}
					if formatOf(m) != pk.fast {
						t.Fatalf("fast mode: %s, want %s", formatOf(m), pk.fast)
					}
					same, _ := ggmlSame(m, want)
					if exact != same {
						t.Fatalf("fast mode: exact=%v but the values are the same: %v", exact, same)
					}
					e := relRMS(m.Dequantize(), want)
					if n == 40 {
						t.Logf("fast mode %s: relative RMS %.3g (bound %.3g)", formatOf(m), e, pk.fastBound)
					}
					if e > pk.fastBound {
						t.Fatalf("fast mode: relative RMS %.4g > %.4g", e, pk.fastBound)
					}
				})
			}
		}
	}
}

// TestFromGGMLCatchesPlantedBugs: the checks above fail for a one-bit
// change of an exact repack and for a fast repack with the halves of each
// group swapped (a sub-block or nibble-order mistake).
func TestFromGGMLCatchesPlantedBugs(t *testing.T) {
	defer setFastQ5(true)()
	r := rand.New(rand.NewPCG(21, 4))
	for _, ty := range ggmlAllTypes {
		t.Run(ty.String(), func(t *testing.T) {
			n, k := 17, 2*ty.BlockSize()
			if ty.BlockSize() == 1 {
				k = 64
			}
			raw := randomGGML(r, ty, n, k)
			want := make([]float32, n*k)
			if err := DequantizeGGML(ty, raw, want); err != nil {
				t.Fatal(err)
			}
			m, _, err := FromGGML(ty, raw, n, k, RepackExact)
			if err != nil {
				t.Fatal(err)
			}
			// Flip one bit of row 16 (the second panel), column 5: the low
			// bit of a quantized integer (or of a value's significand).
			var off int
			pr, col := 16%PanelRows, 5
			switch m.DType {
			case kernel.F32:
				off = 4 * (col*PanelRows + pr)
			case kernel.BF16:
				off = bf16Offset(pr, col)
			case kernel.Q8:
				off = q8Offset(pr, col)
			case kernel.Q4, kernel.Q5:
				off, _ = q4Offset(pr, col)
			}
			for ; ; col++ { // a zero scale hides the flip: move on to a column whose value changes
				mut := &Matrix{DType: m.DType, N: m.N, K: m.K, Np: m.Np, Kp: m.Kp, HasMin: m.HasMin, Data: append([]byte(nil), m.Data...)}
				mut.Panel(1)[off] ^= 1
				if same, _ := ggmlSame(mut, want); !same {
					break
				}
				if col > 30 {
					t.Fatal("a one-bit change of the exact repack was not noticed")
				}
				off++
			}
			pk := ggmlPackings[ty]
			if pk.fastBound == 0 {
				return
			}
			swapped := append([]float32(nil), want...)
			for g := 0; g < len(swapped); g += 32 {
				for j := range 16 {
					swapped[g+j], swapped[g+16+j] = swapped[g+16+j], swapped[g+j]
				}
			}
			wrong, err := Quantize(pk.fast.dt, swapped, n, k, pk.fast.hasMin)
			if err != nil {
				t.Fatal(err)
			}
			if e := relRMS(wrong.Dequantize(), want); e <= pk.fastBound {
				t.Fatalf("a repack with swapped group halves passes the fast bound: %.3g ≤ %.3g", e, pk.fastBound)
			}
		})
	}
}

// TestFromGGMLExactWhenScalesFit: a lossy fast path reports exact (and
// exact mode uses it) when the values happen to fit: q4_K whose d·sc and
// dmin·mn are f16s, f16 values with bf16's precision.
func TestFromGGMLExactWhenScalesFit(t *testing.T) {
	var raw []byte
	for i := range 32 {
		b, _ := ggmlEncoders[gguf.TypeQ4_K](1.0/256, 1.0/512, i)
		raw = append(raw, b...)
	}
	n, k := 16, 512
	want := make([]float32, n*k)
	if err := DequantizeGGML(gguf.TypeQ4_K, raw, want); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []GGMLRepack{RepackExact, RepackFast} {
		m, exact, err := FromGGML(gguf.TypeQ4_K, raw, n, k, mode)
		if err != nil {
			t.Fatal(err)
		}
		if same, _ := ggmlSame(m, want); !exact || !same || formatOf(m) != (format{kernel.Q4, true}) {
			t.Errorf("q4_K %s with f16-exact scales: %s, exact=%v, same=%v", mode, formatOf(m), exact, same)
		}
	}
	f16 := make([]byte, 2*n*32)
	for i := range n * 32 {
		binary.LittleEndian.PutUint16(f16[2*i:], half.F32ToF16(float32(i%97-48)/64))
	}
	m, exact, err := FromGGML(gguf.TypeF16, f16, n, 32, RepackFast)
	if err != nil || !exact || m.DType != kernel.BF16 {
		t.Errorf("f16 holding bf16 values, fast: %v exact=%v %v", m.DType, exact, err)
	}
	binary.LittleEndian.PutUint16(f16[2*40:], half.F32ToF16(1+1.0/1024))
	if _, exact, _ := FromGGML(gguf.TypeF16, f16, n, 32, RepackFast); exact {
		t.Error("f16 1+2⁻¹⁰ in bf16 reported exact")
	}
}

// TestFromGGMLOverflow: weights too large for our f16 scales fall back to
// F32 (exact) in fast mode instead of turning into infinities.
func TestFromGGMLOverflow(t *testing.T) {
	for _, ty := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ2_K, gguf.TypeQ5_1} {
		var raw []byte
		for i := range 2 {
			b, _ := ggmlEncoders[ty](60000, 30000, i+4)
			raw = append(raw, b...)
		}
		want := make([]float32, 2*ty.BlockSize())
		if err := DequantizeGGML(ty, raw, want); err != nil {
			t.Fatal(err)
		}
		m, exact, err := FromGGML(ty, raw, 2, ty.BlockSize(), RepackFast)
		if err != nil {
			t.Fatal(err)
		}
		if same, _ := ggmlSame(m, want); m.DType != kernel.F32 || !exact || !same {
			t.Errorf("%s with huge scales: %s exact=%v same=%v", ty, m.DType, exact, same)
		}
	}
	if _, err := FromGGMLQ4_K(func() []byte { b, _ := ggmlEncoders[gguf.TypeQ4_K](60000, 1, 4); return b }(), 1, 256); err == nil {
		t.Error("FromGGMLQ4_K: a group scale beyond f16 accepted")
	}
}

// TestGGMLErrors: refused types name themselves; sizes must match; a
// non-finite scale or value names its row (FromGGML) or block.
func TestGGMLErrors(t *testing.T) {
	for _, ty := range []gguf.Type{gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ3_XXS, gguf.TypeIQ1_S, gguf.TypeIQ3_S, gguf.TypeIQ2_S, gguf.TypeIQ1_M, gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ8_1, gguf.TypeQ8_K, gguf.TypeI8, gguf.TypeF64, gguf.Type(4), gguf.Type(99)} {
		k := max(ty.BlockSize(), 1) * 2
		raw := make([]byte, 3*k/max(ty.BlockSize(), 1)*ty.BlockBytes())
		_, _, err := FromGGML(ty, raw, 3, k, RepackFast)
		if err == nil || !strings.Contains(err.Error(), ty.String()) {
			t.Errorf("FromGGML %s: %v", ty, err)
		}
		if err := DequantizeGGML(ty, raw, make([]float32, 3*k)); err == nil || !strings.Contains(err.Error(), ty.String()) {
			t.Errorf("DequantizeGGML %s: %v", ty, err)
		}
	}
	r := rand.New(rand.NewPCG(21, 5))
	for _, ty := range ggmlAllTypes {
		bs := ty.BlockSize()
		n, k := 5, 2*max(bs, 32)
		raw := randomGGML(r, ty, n, k)
		for _, c := range []struct {
			raw  []byte
			n, k int
		}{{raw[1:], n, k}, {append(raw, 0), n, k}, {raw, n + 1, k}, {raw, 0, k}, {raw, n, 0}, {raw, n, k + max(bs/2, 1)}} {
			if _, _, err := FromGGML(ty, c.raw, c.n, c.k, RepackExact); err == nil {
				t.Errorf("%s: %d bytes as %d×%d accepted", ty, len(c.raw), c.n, c.k)
			}
		}
		if err := DequantizeGGML(ty, raw, make([]float32, n*k+1)); err == nil {
			t.Errorf("%s: DequantizeGGML with one element too many accepted", ty)
		}
		if _, _, err := FromGGML(ty, raw, n, k, GGMLRepack(7)); err == nil {
			t.Errorf("%s: repack mode 7 accepted", ty)
		}
		// a non-finite scale (or value) in row 3
		row, col := 3, k/2+1
		blk := (row*k + col) / bs
		offs := ggmlTypes[ty].scales
		if bs == 1 {
			offs = []int{0}
		}
		for _, off := range offs {
			for _, bad := range []uint16{0x7c00, 0x7e00, 0xfc00} {
				b := append([]byte(nil), raw...)
				p := blk*ty.BlockBytes() + off
				switch ty {
				case gguf.TypeF32:
					binary.LittleEndian.PutUint32(b[p:], math.Float32bits(half.F16ToF32(bad)))
				case gguf.TypeBF16:
					binary.LittleEndian.PutUint16(b[p:], half.F32ToBF16(half.F16ToF32(bad)))
				default:
					binary.LittleEndian.PutUint16(b[p:], bad)
				}
				for _, mode := range []GGMLRepack{RepackExact, RepackFast} {
					_, _, err := FromGGML(ty, b, n, k, mode)
					if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("row %d,", row)) {
						t.Errorf("%s %s: scale %#04x at byte %d of row %d: %v", ty, mode, bad, off, row, err)
					}
				}
				err := DequantizeGGML(ty, b, make([]float32, n*k))
				what := fmt.Sprintf("block %d ", blk)
				if bs == 1 {
					what = fmt.Sprintf("element %d:", blk)
				}
				if err == nil || !strings.Contains(err.Error(), what) {
					t.Errorf("DequantizeGGML %s: scale %#04x in block %d: %v", ty, bad, blk, err)
				}
			}
		}
	}
}

// TestFromGGMLParallel: a matrix large enough for several workers (one
// per 256 KiB of ggml data, up to GOMAXPROCS) packs as the single-worker path does, and one
// inexact row anywhere makes the whole matrix inexact.
func TestFromGGMLParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 6))
	n, k := 400, 4096 // q4_K: 900 KiB; q8_0: 1.7 MiB; f32: 6.25 MiB
	for _, ty := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeF32} {
		raw := randomGGML(r, ty, n, k)
		if ty == gguf.TypeQ4_K { // f16-exact scales everywhere but in row 390
			raw = raw[:0]
			for i := range n * k / 256 {
				d := float32(1.0 / 256)
				if i == 390*k/256 {
					d = 0.0123
				}
				b, _ := ggmlEncoders[ty](d, 1.0/512, i)
				raw = append(raw, b...)
			}
		}
		want := make([]float32, n*k)
		if err := DequantizeGGML(ty, raw, want); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []GGMLRepack{RepackExact, RepackFast} {
			m, exact, err := FromGGML(ty, raw, n, k, mode)
			if err != nil {
				t.Fatal(err)
			}
			same, i := ggmlSame(m, want)
			if exact != same || (mode == RepackExact && !same) || (ty == gguf.TypeQ4_K && mode == RepackFast && same) {
				t.Errorf("%s %s: %s exact=%v, element %d differs", ty, mode, formatOf(m), exact, i)
			}
		}
	}
}

// setFastQ6 sets FastQ6 to a constant and returns the restore.
func setFastQ6(on bool) func() {
	old := FastQ6
	FastQ6 = func() bool { return on }
	return func() { FastQ6 = old }
}

// setFastQ5 sets FastQ5 to a constant and returns the restore.
func setFastQ5(on bool) func() {
	old := FastQ5
	FastQ5 = func() bool { return on }
	return func() { FastQ5 = old }
}

// TestFromGGMLQ5: with a SIMD Q5 kernel (FastQ5) both modes repack Q5_0
// as Q5 bit for bit — the same f16 scale bytes and 5-bit integers, every
// integer 0…31 at every position, negative and zero scales — without
// one (FastQ5 false or nil) as Q8, exactly too; and a one-bit change of a
// fifth bit (line 4) or of a scale is seen.
func TestFromGGMLQ5(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 6))
	const n, k = 19, 96
	raw := randomGGML(r, gguf.TypeQ5_0, n, k)
	for b := 0; b < n*k/32; b++ { // integers (e+b)%32 at element e: all 32 everywhere
		blk := raw[22*b : 22*(b+1)]
		clear(blk[2:])
		var qh uint32
		for e := range 32 {
			q := (e + b) % 32
			qh |= uint32(q>>4) << e
			blk[6+e%16] |= byte(q&15) << (4 * (e / 16))
		}
		binary.LittleEndian.PutUint32(blk[2:], qh)
		switch b % 7 {
		case 3:
			blk[1] |= 0x80 // a negative scale
		case 5:
			blk[0], blk[1] = 0, 0 // a zero scale
		}
	}
	want := make([]float32, n*k)
	if err := DequantizeGGML(gguf.TypeQ5_0, raw, want); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fast bool
		nil_ bool
		dt   kernel.DType
	}{{true, false, kernel.Q5}, {false, false, kernel.Q8}, {false, true, kernel.Q8}} {
		restore := setFastQ5(c.fast)
		if c.nil_ {
			FastQ5 = nil
		}
		for _, mode := range []GGMLRepack{RepackExact, RepackFast} {
			m, exact, err := FromGGML(gguf.TypeQ5_0, raw, n, k, mode)
			if err != nil {
				t.Fatal(err)
			}
			if m.DType != c.dt || m.HasMin {
				t.Fatalf("FastQ5 %v (nil %v) %s: %s, want %s", c.fast, c.nil_, mode, formatOf(m), c.dt)
			}
			if same, i := ggmlSame(m, want); !same || !exact {
				t.Fatalf("FastQ5 %v %s: exact=%v, element %d differs", c.fast, mode, exact, i)
			}
			if m.DType != kernel.Q5 {
				continue
			}
			for row := 0; row < n; row++ { // the stored bits: ggml's d and q
				rec0 := m.Panel(row / PanelRows)
				for g := 0; g < k/32; g++ {
					blk := raw[(row*k/32+g)*22:]
					var q [32]int
					q5Quants(binary.LittleEndian.Uint32(blk[2:]), blk[6:22], &q)
					rec := rec0[g*Q5GroupBytes:]
					if s := rec[Q5Lines*LineBytes+2*(row%PanelRows):]; s[0] != blk[0] || s[1] != blk[1] {
						t.Fatalf("row %d group %d: scale %x %x, ggml's %x %x", row, g, s[0], s[1], blk[0], blk[1])
					}
					for j, v := range q {
						if u := q5At(rec, row%PanelRows, j); u != v {
							t.Fatalf("row %d group %d k %d: u %d, ggml's q %d", row, g, j, u, v)
						}
					}
				}
			}
			for _, off := range []int{4*LineBytes + 4*3 + 1, Q5Lines*LineBytes + 2*3} { // row 3: a fifth-bit byte, a scale's low byte
				mut := &Matrix{DType: m.DType, N: m.N, K: m.K, Np: m.Np, Kp: m.Kp, Data: append([]byte(nil), m.Data...)}
				mut.Panel(0)[off] ^= 1
				if same, _ := ggmlSame(mut, want); same {
					t.Errorf("a one-bit change at byte %d of the Q5 record was not noticed", off)
				}
			}
		}
		restore()
	}
}

// TestFromGGMLQ6Fallback: without a SIMD Q6 kernel (FastQ6 false or nil)
// fast mode packs Q6_K as Q8, with Q8's error; exact mode is F32 either way.
func TestFromGGMLQ6Fallback(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 5))
	raw := randomGGML(r, gguf.TypeQ6_K, 17, 512)
	want := make([]float32, 17*512)
	if err := DequantizeGGML(gguf.TypeQ6_K, raw, want); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		on       bool
		dt       kernel.DType
		maxError float64
	}{{false, kernel.Q8, 0.007}, {true, kernel.Q6, 0.018}} {
		restore := setFastQ6(c.on)
		m, _, err := FromGGML(gguf.TypeQ6_K, raw, 17, 512, RepackFast)
		x, _, err2 := FromGGML(gguf.TypeQ6_K, raw, 17, 512, RepackExact)
		restore()
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if m.DType != c.dt || x.DType != kernel.F32 {
			t.Fatalf("FastQ6 %v: fast mode %s, exact mode %s; want %s, f32", c.on, m.DType, x.DType, c.dt)
		}
		if e := relRMS(m.Dequantize(), want); e > c.maxError {
			t.Errorf("FastQ6 %v: relative RMS %.4g > %g", c.on, e, c.maxError)
		}
	}
	old := FastQ6
	FastQ6 = nil
	defer func() { FastQ6 = old }()
	if m, _, _ := FromGGML(gguf.TypeQ6_K, raw, 17, 512, RepackFast); m.DType != kernel.Q8 {
		t.Errorf("FastQ6 nil: fast mode %s, want q8", m.DType)
	}
}

// TestFromGGMLK: with a SIMD kernel for the K format (FastK) both modes
// repack Q4_K as Q4K and Q5_K as Q5K bit for bit — ggml's f16 d and dmin
// bytes, every 6-bit scale and min code, every q at every position — so
// the values are DequantizeGGML's; without one (FastK false or nil) the
// packing is as before (Q4_K: Q4 with a min or F32; Q5_K: F32 or Q8);
// and a one-bit change of a code, of a fifth bit or of d is seen.
func TestFromGGMLK(t *testing.T) {
	const n, k = 19, 512
	for _, c := range []struct {
		ty        gguf.Type
		dt        kernel.DType
		slow      [2]kernel.DType // exact, fast mode without FastK
		bb, qsOff int
	}{
		{gguf.TypeQ4_K, kernel.Q4K, [2]kernel.DType{kernel.Q4, kernel.Q4}, 144, 16},
		{gguf.TypeQ5_K, kernel.Q5K, [2]kernel.DType{kernel.F32, kernel.Q8}, 176, 48},
	} {
		var raw []byte
		for i := range n * k / 256 {
			b, _ := ggmlEncoders[c.ty](float32(i%5-2)/256+1.0/1024, float32(i%3)/512, i)
			raw = append(raw, b...)
		}
		want := make([]float32, n*k)
		if err := DequantizeGGML(c.ty, raw, want); err != nil {
			t.Fatal(err)
		}
		for _, fc := range []struct{ fast, nil_ bool }{{true, false}, {false, false}, {false, true}} {
			old := FastK
			FastK = func(kernel.DType) bool { return fc.fast }
			if fc.nil_ {
				FastK = nil
			}
			for mi, mode := range []GGMLRepack{RepackExact, RepackFast} {
				m, exact, err := FromGGML(c.ty, raw, n, k, mode)
				if err != nil {
					t.Fatal(err)
				}
				if !fc.fast {
					if m.DType != c.slow[mi] {
						t.Errorf("%s FastK off (nil %v) %s: %s, want %s", c.ty, fc.nil_, mode, formatOf(m), c.slow[mi])
					}
					continue
				}
				if m.DType != c.dt {
					t.Fatalf("%s FastK %s: %s, want %s", c.ty, mode, formatOf(m), c.dt)
				}
				if same, i := ggmlSame(m, want); !same || !exact {
					t.Fatalf("%s %s: exact=%v, element %d differs", c.ty, mode, exact, i)
				}
				for row := range n { // the stored bits are ggml's
					panel, pr := m.Panel(row/PanelRows), row%PanelRows
					for s := range k / 256 {
						blk := raw[(row*k/256+s)*c.bb:]
						sb := panel[s*KSuperBytes(c.dt):]
						if d := sb[kDOff+2*pr:]; d[0] != blk[0] || d[1] != blk[1] {
							t.Fatalf("%s row %d super-block %d: d %x %x, ggml's %x %x", c.ty, row, s, d[0], d[1], blk[0], blk[1])
						}
						if dm := sb[kDMOff+2*pr:]; dm[0] != blk[2] || dm[1] != blk[3] {
							t.Fatalf("%s row %d super-block %d: dm differs from ggml's dmin", c.ty, row, s)
						}
						for j := range 8 {
							sc, mn := q4KScaleMin(blk[4:16], j)
							if gs, gm := KCodes(c.dt, panel, pr, 8*s+j); gs != sc || gm != mn {
								t.Fatalf("%s row %d group %d: codes (%d, %d), ggml's (%d, %d)", c.ty, row, 8*s+j, gs, gm, sc, mn)
							}
						}
					}
				}
				if mi == 1 {
					continue
				}
				// row 3: a scale-code byte, a min-nibble byte, a value byte, d's low byte
				for _, off := range []int{16*2 + 3, 128 + 16 + 3, KHeaderBytes + LineBytes + 4*3 + 1, kDOff + 2*3} {
					mut := &Matrix{DType: m.DType, N: m.N, K: m.K, Np: m.Np, Kp: m.Kp, Data: append([]byte(nil), m.Data...)}
					mut.Panel(0)[KSuperBytes(c.dt)+off] ^= 1
					if same, _ := ggmlSame(mut, want); same {
						t.Errorf("%s: a one-bit change at byte %d of the second super-block was not noticed", c.dt, off)
					}
				}
			}
			FastK = old
		}
	}
}

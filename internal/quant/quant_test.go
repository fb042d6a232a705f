package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

func gaussian(r *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	return w
}

type format struct {
	dt     kernel.DType
	hasMin bool
}

var formats = []format{{kernel.F32, false}, {kernel.BF16, false}, {kernel.Q8, false}, {kernel.Q4, false}, {kernel.Q4, true}}

func (f format) String() string {
	if f.hasMin {
		return string(f.dt) + "+min"
	}
	return string(f.dt)
}

// TestRoundTrip quantizes awkward shapes and checks every element against
// the format's bound: exact for f32, BF16 rounding for bf16, half a step
// for q8 and q4 with min, one step for q4 (its ggml-style range is
// asymmetric: the extreme opposite the largest value can clamp).
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range formats {
		for _, shape := range [][2]int{{1, 1}, {3, 31}, {16, 32}, {17, 33}, {33, 100}, {5, 257}} {
			n, k := shape[0], shape[1]
			w := gaussian(r, n*k)
			m, err := Quantize(f.dt, w, n, k, f.hasMin)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(m.Data)) != Size(f.dt, n, k, f.hasMin) {
				t.Fatalf("%v: %d bytes, Size says %d", f, len(m.Data), Size(f.dt, n, k, f.hasMin))
			}
			got := m.Dequantize()
			for i := range w {
				row, col := i/k, i%k
				var bound float64
				switch {
				case f.dt == kernel.F32:
					bound = 0
				case f.dt == kernel.BF16:
					bound = math.Abs(float64(w[i])) / 256
				case f.dt == kernel.Q8 || f.hasMin:
					bound = float64(m.Scale(row, col/GroupK))*0.5 + 1e-3*math.Abs(float64(w[i]))
				default:
					bound = math.Abs(float64(m.Scale(row, col/GroupK))) * 1.001
				}
				if e := math.Abs(float64(got[i] - w[i])); e > bound {
					t.Fatalf("%v %d×%d [%d,%d]: %v → %v (error %g > %g)", f, n, k, row, col, w[i], got[i], e, bound)
				}
			}
		}
	}
}

// TestQuantizationError reports the relative RMS error of each format on
// Gaussian weights and holds it under a bound a bug would break.
func TestQuantizationError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, k := 256, 2304
	w := gaussian(r, n*k)
	bounds := map[string]float64{"f32": 0, "bf16": 3e-3, "q8": 1e-2, "q4": 1.2e-1, "q4+min": 1.2e-1}
	for _, f := range formats {
		m, err := Quantize(f.dt, w, n, k, f.hasMin)
		if err != nil {
			t.Fatal(err)
		}
		got := m.Dequantize()
		var num, den float64
		for i := range w {
			e := float64(got[i] - w[i])
			num += e * e
			den += float64(w[i]) * float64(w[i])
		}
		rel := math.Sqrt(num / den)
		t.Logf("%-7s %.4f bytes/weight, relative RMS error %.3e", f, BytesPerWeight(f.dt, f.hasMin), rel)
		if rel > bounds[f.String()] {
			t.Errorf("%v: relative RMS error %.3e > %.3e", f, rel, bounds[f.String()])
		}
	}
}

func TestLayoutPositions(t *testing.T) {
	// Row 5 of a Q8 matrix: element k=13 lives in line 3 (k/4), byte 4·5+1.
	if off := q8Offset(5, 13); off != 3*64+21 {
		t.Errorf("q8Offset(5,13) = %d", off)
	}
	// Q4: k=13 is line 1 (k/8), high nibble (k%8 ≥ 4), byte 4·5+1.
	if off, hi := q4Offset(5, 13); off != 64+21 || !hi {
		t.Errorf("q4Offset(5,13) = %d,%v", off, hi)
	}
	// F32: row 3, k 2 at float 2·16+3 of panel 0.
	w := make([]float32, 4*5)
	w[3*5+2] = 7
	m, _ := Quantize(kernel.F32, w, 4, 5, false)
	if got := math.Float32frombits(binary.LittleEndian.Uint32(m.Data[4*(2*16+3):])); got != 7 {
		t.Errorf("f32 layout: %v", got)
	}
	// BF16: row 3, k 5 at pair 2, slot 2·3+1.
	w2 := make([]float32, 4*6)
	w2[3*6+5] = 1.5
	mb, _ := Quantize(kernel.BF16, w2, 4, 6, false)
	if got := half.BF16ToF32(binary.LittleEndian.Uint16(mb.Data[2*(2*32+2*3+1):])); got != 1.5 {
		t.Errorf("bf16 layout: %v", got)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Quantize(kernel.Q8, []float32{1, float32(math.NaN())}, 1, 2, false); err == nil {
		t.Error("NaN weight accepted")
	}
	if _, err := Quantize(kernel.Q8, []float32{1}, 1, 2, false); err == nil {
		t.Error("short input accepted")
	}
	if _, err := Quantize(kernel.F16, []float32{1}, 1, 1, false); err == nil {
		t.Error("f16 weights accepted")
	}
	if _, err := New(kernel.Q8, 1, 32, true); err == nil {
		t.Error("q8 with a min accepted")
	}
	if _, err := View(kernel.Q4, 16, 64, false, make([]byte, 10)); err == nil {
		t.Error("View of the wrong size accepted")
	}
	if m, err := View(kernel.Q4, 16, 64, false, make([]byte, 2*Q4GroupBytes)); err != nil || m.Panels() != 1 || m.Groups() != 2 {
		t.Errorf("View: %v %v", m, err)
	}
}

// ---- ggml repacking, against decoders written from ggml's format spec ---

func ggmlQ8_0Ref(b []byte) []float32 {
	d := half.F16ToF32(binary.LittleEndian.Uint16(b))
	out := make([]float32, 32)
	for j := range out {
		out[j] = d * float32(int8(b[2+j]))
	}
	return out
}

func ggmlQ4_0Ref(b []byte) []float32 {
	d := half.F16ToF32(binary.LittleEndian.Uint16(b))
	out := make([]float32, 32)
	for j := 0; j < 16; j++ {
		out[j] = d * float32(int(b[2+j]&15)-8)
		out[j+16] = d * float32(int(b[2+j]>>4)-8)
	}
	return out
}

func ggmlQ4_KRef(b []byte) []float32 {
	d := half.F16ToF32(binary.LittleEndian.Uint16(b))
	dmin := half.F16ToF32(binary.LittleEndian.Uint16(b[2:]))
	out := make([]float32, 256)
	for sub := 0; sub < 8; sub++ {
		var sc, mn int
		s := b[4:16]
		if sub < 4 {
			sc, mn = int(s[sub]&63), int(s[sub+4]&63)
		} else {
			sc = int(s[sub+4]&15) | int(s[sub-4]>>6)<<4
			mn = int(s[sub+4]>>4) | int(s[sub]>>6)<<4
		}
		for j := 0; j < 32; j++ {
			q := b[16+32*(sub/2)+j]
			if sub%2 == 0 {
				q &= 15
			} else {
				q >>= 4
			}
			out[32*sub+j] = d*float32(sc)*float32(q) - dmin*float32(mn)
		}
	}
	return out
}

func randomBlocks(r *rand.Rand, count, size int, fix func(b []byte)) []byte {
	b := make([]byte, count*size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for i := 0; i < count; i++ {
		fix(b[i*size : (i+1)*size])
	}
	return b
}

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, half.F32ToF16(f)) }

func TestGGMLRepack(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 19
	for _, tc := range []struct {
		name       string
		k, block   int
		size       int
		repack     func([]byte, int, int) (*Matrix, error)
		ref        func([]byte) []float32
		exact      bool
		fixScales  func(b []byte)
		blockElems int
	}{
		{"q8_0", 96, 32, GGMLQ8_0Bytes, FromGGMLQ8_0, ggmlQ8_0Ref, true, func(b []byte) { putF16(b, float32(r.NormFloat64()*0.01)) }, 32},
		{"q4_0", 96, 32, GGMLQ4_0Bytes, FromGGMLQ4_0, ggmlQ4_0Ref, true, func(b []byte) { putF16(b, float32(r.NormFloat64()*0.01)) }, 32},
		{"q4_K", 512, 256, GGMLQ4_KBytes, FromGGMLQ4_K, ggmlQ4_KRef, false, func(b []byte) {
			putF16(b, float32(math.Abs(r.NormFloat64())*0.001))
			putF16(b[2:], float32(math.Abs(r.NormFloat64())*0.001))
		}, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks := randomBlocks(r, n*tc.k/tc.block, tc.size, tc.fixScales)
			m, err := tc.repack(blocks, n, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Dequantize()
			for row := 0; row < n; row++ {
				for blk := 0; blk < tc.k/tc.block; blk++ {
					b := blocks[(row*(tc.k/tc.block)+blk)*tc.size:]
					want := tc.ref(b)
					for j, w := range want {
						g := got[row*tc.k+blk*tc.block+j]
						tol := 0.0
						if !tc.exact {
							// f16 rounding of the group scale (≤15 steps) and min
							sc := math.Abs(float64(m.Scale(row, (blk*tc.block+j)/GroupK)))
							tol = (15*sc + math.Abs(float64(w)) + 1e-6) * 1.0 / 1024
						}
						if d := math.Abs(float64(g - w)); d > tol {
							t.Fatalf("row %d block %d elem %d: %v, ggml says %v", row, blk, j, g, w)
						}
					}
				}
			}
			if _, err := tc.repack(blocks[1:], n, tc.k); err == nil {
				t.Error("short block data accepted")
			}
			if _, err := tc.repack(blocks, n, tc.k+1); err == nil {
				t.Error("k not a multiple of the block accepted")
			}
		})
	}
}

func ExampleBytesPerWeight() {
	for _, f := range formats {
		fmt.Printf("%s %.4f\n", f, BytesPerWeight(f.dt, f.hasMin))
	}
	// Output:
	// f32 4.0000
	// bf16 2.0000
	// q8 1.0625
	// q4 0.5625
	// q4+min 0.6250
}

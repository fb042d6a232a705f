package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// TestQ6Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few.
func TestQ6Layout(t *testing.T) {
	rec := make([]byte, Q6GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ6(rec, pr, j, (pr*37+j*11)%64)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q6At(rec, pr, j), (pr*37+j*11)%64; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ6(rec, 5, 13, 45) // k 13: line 3, bits 0–5 of byte 4·5+1
	if rec[3*64+21] != 45 {
		t.Errorf("k 13: byte %#x", rec[3*64+21])
	}
	setQ6(rec, 5, 26, 0b100111) // k 26: bits 0–1 in line 0, 2–3 in line 1, 4–5 in line 2 (bits 6–7 of byte 4·5+2)
	if rec[22] != 3<<6 || rec[64+22] != 1<<6 || rec[128+22] != 2<<6 {
		t.Errorf("k 26: bytes %#x %#x %#x", rec[22], rec[64+22], rec[128+22])
	}
	setQ6(rec, 0, 31, 0b011001) // k 31: lines 3, 4, 5 (byte 3)
	if rec[3*64+3] != 1<<6 || rec[4*64+3] != 2<<6 || rec[5*64+3] != 1<<6 {
		t.Errorf("k 31: bytes %#x %#x %#x", rec[3*64+3], rec[4*64+3], rec[5*64+3])
	}
	if q6At(rec, 5, 13) != 45 || q6At(rec, 5, 26) != 0b100111 || q6At(rec, 0, 31) != 0b011001 {
		t.Error("a value overwrote another")
	}
}

// TestQ6RoundTrip: every element within one step (the range [−32, 31] is
// asymmetric, as Q4's), sizes as Size says.
func TestQ6RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for _, shape := range [][2]int{{1, 1}, {3, 31}, {16, 32}, {17, 33}, {33, 100}, {5, 257}} {
		n, k := shape[0], shape[1]
		w := gaussian(r, n*k)
		for _, search := range []bool{false, true} {
			var m *Matrix
			var err error
			if search {
				m, err = QuantizeWeighted(kernel.Q6, w, n, k, false, nil)
			} else {
				m, err = Quantize(kernel.Q6, w, n, k, false)
			}
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(m.Data)) != Size(kernel.Q6, n, k, false) || m.Kp%GroupK != 0 {
				t.Fatalf("%d×%d: %d bytes, Size says %d", n, k, len(m.Data), Size(kernel.Q6, n, k, false))
			}
			got := m.Dequantize()
			for i := range w {
				row, col := i/k, i%k
				bound := math.Abs(float64(m.Scale(row, col/GroupK))) * 1.001
				if e := math.Abs(float64(got[i] - w[i])); e > bound {
					t.Fatalf("search %v %d×%d [%d,%d]: %v → %v (error %g > %g)", search, n, k, row, col, w[i], got[i], e, bound)
				}
			}
		}
	}
}

// TestQ6Error reports Q6's relative RMS error on Gaussian rows beside
// Q8's, max-abs and search, and holds it under a bound a bug would break.
func TestQ6Error(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, k := 256, 2304
	w := gaussian(r, n*k)
	rel := func(m *Matrix, err error) float64 {
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
		return math.Sqrt(num / den)
	}
	q6, q6s := rel(Quantize(kernel.Q6, w, n, k, false)), rel(QuantizeWeighted(kernel.Q6, w, n, k, false, nil))
	q8, q8s := rel(Quantize(kernel.Q8, w, n, k, false)), rel(QuantizeWeighted(kernel.Q8, w, n, k, false, nil))
	t.Logf("q6 %.4f bytes/weight: relative RMS error %.5f (search %.5f); q8 %.4f bytes/weight: %.5f (search %.5f)",
		BytesPerWeight(kernel.Q6, false), q6, q6s, BytesPerWeight(kernel.Q8, false), q8, q8s)
	if q6 > 0.03 || q6s > 0.028 || !(q6s < q6) {
		t.Errorf("q6 relative RMS error %.4f (search %.4f): over 0.03 (0.028), or the search not better", q6, q6s)
	}
}

func TestQ6BadInput(t *testing.T) {
	if _, err := Quantize(kernel.Q6, []float32{1, float32(math.NaN())}, 1, 2, false); err == nil {
		t.Error("NaN weight accepted")
	}
	if _, err := Quantize(kernel.Q6, []float32{1, float32(math.Inf(-1))}, 1, 2, false); err == nil {
		t.Error("Inf weight accepted")
	}
	if _, err := New(kernel.Q6, 1, 32, true); err == nil {
		t.Error("q6 with a min accepted")
	}
	if _, err := View(kernel.Q6, 16, 64, false, make([]byte, 2*Q8GroupBytes)); err == nil {
		t.Error("View of the wrong size accepted")
	}
	if m, err := View(kernel.Q6, 17, 64, false, make([]byte, 4*Q6GroupBytes)); err != nil || m.Panels() != 2 || m.Groups() != 2 {
		t.Errorf("View: %v %v", m, err)
	}
	if b := BytesPerWeight(kernel.Q6, false); b != 6.5/8 {
		t.Errorf("BytesPerWeight(q6) = %v", b)
	}
	// a scale beyond f16 is stored as Inf (callers check finiteness, as for Q4)
	m, err := Quantize(kernel.Q6, []float32{1e7, 1}, 1, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Scale(0, 0); !math.IsInf(float64(d), 0) {
		t.Errorf("overflowing scale stored as %v", d)
	}
	// the largest weight f16 can scale survives
	w := []float32{-32 * 65504, 65504}
	m, _ = Quantize(kernel.Q6, w, 1, 2, false)
	if got := m.Dequantize(); got[0] != w[0] || got[1] != w[1] || half.F32ToF16(m.Scale(0, 0)) != 0x7bff {
		t.Errorf("largest: %v, scale %v", got, m.Scale(0, 0))
	}
}

// TestQ6Random: Random's Q6 matrices hold values of about the asked std
// and zeros in the padding.
func TestQ6Random(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, err := Random(r, kernel.Q6, 40, 70, false, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Dequantize()
	var s float64
	for _, v := range w {
		s += float64(v) * float64(v)
	}
	if std := math.Sqrt(s / float64(len(w))); std < 0.07 || std > 0.14 {
		t.Errorf("std %.3f, want about 0.1", std)
	}
	rec := m.Panel(0)[2*Q6GroupBytes:]
	for j := 70 - 64; j < GroupK; j++ {
		if q6At(rec, 3, j) != Q6Zero {
			t.Fatalf("padded column %d holds %d", 64+j, q6At(rec, 3, j))
		}
	}
}

// TestQ6Hint: a group on a ggml Q6_K sub-block grid (w = d·sc·q, q ∈
// [−32, 31], both halves the same scale) whose max-abs scale misses the
// grid is packed exactly with the grid's scale as the hint, and a useless
// hint never makes a group worse than max-abs.
func TestQ6Hint(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		step := float32(0.001 * float64(1+r.IntN(100))) // d·sc, an f16 value
		step = half.F16ToF32(half.F32ToF16(step))
		var x [GroupK]float32
		for j := range x {
			x[j] = step * float32(r.IntN(61)-30) // |q| ≤ 30: max-abs's scale is off the grid
		}
		x[trial%GroupK] = step * 30
		err := func(hint float32) float32 {
			rec := make([]byte, Q6GroupBytes)
			packQ6Hint(rec, 3, &x, &ones, false, hint)
			var e float32
			for j, v := range x {
				d := q6Scale(rec, 3) * float32(q6At(rec, 3, j)-Q6Zero)
				e += (d - v) * (d - v)
			}
			return e
		}
		e0 := err(0)
		if e := err(step); e != 0 || !(e0 > 0) {
			t.Fatalf("trial %d: error %g with the grid's scale, %g by max-abs", trial, e, e0)
		}
		if e := err(step * 0.37); e > e0 {
			t.Fatalf("trial %d: a bad hint raised the error %g → %g", trial, e0, e)
		}
	}
}

package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// TestQ3Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few.
func TestQ3Layout(t *testing.T) {
	rec := make([]byte, Q3GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ3(rec, pr, j, (pr*7+j*3)%8)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q3At(rec, pr, j), (pr*7+j*3)%8; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ3(rec, 5, 13, 6) // k 13: line 1, bits 3–5 of byte 4·5+1
	if rec[64+21] != 6<<3 {
		t.Errorf("k 13: byte %#x", rec[64+21])
	}
	setQ3(rec, 5, 26, 7) // k 26: low bits in line 0 bits 6–7, high bit in line 2 bit 6 (byte 4·5+2)
	if rec[22] != 3<<6 || rec[128+22] != 1<<6 {
		t.Errorf("k 26: bytes %#x %#x", rec[22], rec[128+22])
	}
	setQ3(rec, 0, 31, 5) // k 31: low bits in line 1 bits 6–7, high bit in line 2 bit 7 (byte 3)
	if rec[64+3] != 1<<6 || rec[128+3] != 1<<7 {
		t.Errorf("k 31: bytes %#x %#x", rec[64+3], rec[128+3])
	}
}

// TestQ3RoundTrip: every element within one step (the range [−4, 3] is
// asymmetric, as Q4's), sizes as Size says, and the search never worse
// than max-abs.
func TestQ3RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for _, shape := range [][2]int{{1, 1}, {3, 31}, {16, 32}, {17, 33}, {33, 100}, {5, 257}} {
		n, k := shape[0], shape[1]
		w := gaussian(r, n*k)
		for _, search := range []bool{false, true} {
			var m *Matrix
			var err error
			if search {
				m, err = QuantizeWeighted(kernel.Q3, w, n, k, false, nil)
			} else {
				m, err = Quantize(kernel.Q3, w, n, k, false)
			}
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(m.Data)) != Size(kernel.Q3, n, k, false) || m.Kp%GroupK != 0 {
				t.Fatalf("%d×%d: %d bytes, Size says %d", n, k, len(m.Data), Size(kernel.Q3, n, k, false))
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

// TestQ3Error reports Q3's relative RMS error on Gaussian rows beside
// Q4's, max-abs and search, and holds it under a bound a bug would break.
func TestQ3Error(t *testing.T) {
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
	q3, q3s := rel(Quantize(kernel.Q3, w, n, k, false)), rel(QuantizeWeighted(kernel.Q3, w, n, k, false, nil))
	q4, q4s := rel(Quantize(kernel.Q4, w, n, k, false)), rel(QuantizeWeighted(kernel.Q4, w, n, k, false, nil))
	t.Logf("q3 %.4f bytes/weight: relative RMS error %.4f (search %.4f); q4 %.4f bytes/weight: %.4f (search %.4f)",
		BytesPerWeight(kernel.Q3, false), q3, q3s, BytesPerWeight(kernel.Q4, false), q4, q4s)
	if q3 > 0.25 || q3s > 0.22 || !(q3s < q3) {
		t.Errorf("q3 relative RMS error %.4f (search %.4f): over 0.25 (0.22), or the search not better", q3, q3s)
	}
}

func TestQ3BadInput(t *testing.T) {
	if _, err := Quantize(kernel.Q3, []float32{1, float32(math.NaN())}, 1, 2, false); err == nil {
		t.Error("NaN weight accepted")
	}
	if _, err := Quantize(kernel.Q3, []float32{1, float32(math.Inf(-1))}, 1, 2, false); err == nil {
		t.Error("Inf weight accepted")
	}
	if _, err := New(kernel.Q3, 1, 32, true); err == nil {
		t.Error("q3 with a min accepted")
	}
	if _, err := View(kernel.Q3, 16, 64, false, make([]byte, 2*Q4GroupBytes)); err == nil {
		t.Error("View of the wrong size accepted")
	}
	if m, err := View(kernel.Q3, 17, 64, false, make([]byte, 4*Q3GroupBytes)); err != nil || m.Panels() != 2 || m.Groups() != 2 {
		t.Errorf("View: %v %v", m, err)
	}
	if b := BytesPerWeight(kernel.Q3, false); b != 3.5/8 {
		t.Errorf("BytesPerWeight(q3) = %v", b)
	}
	// a scale beyond f16 is stored as Inf (callers check finiteness, as for Q4)
	m, err := Quantize(kernel.Q3, []float32{1e6, 1}, 1, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Scale(0, 0); !math.IsInf(float64(d), 0) {
		t.Errorf("overflowing scale stored as %v", d)
	}
	// the largest weight f16 can scale survives
	w := []float32{-4 * 65504, 65504}
	m, _ = Quantize(kernel.Q3, w, 1, 2, false)
	if got := m.Dequantize(); got[0] != w[0] || half.F32ToF16(m.Scale(0, 0)) != 0x7bff {
		t.Errorf("largest: %v, scale %v", got, m.Scale(0, 0))
	}
}

// TestQ3Random: Random's Q3 matrices hold values of about the asked std
// and zeros in the padding.
func TestQ3Random(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, err := Random(r, kernel.Q3, 40, 70, false, 0.1)
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
	rec := m.Panel(0)[2*Q3GroupBytes:]
	for j := 70 - 64; j < GroupK; j++ {
		if q3At(rec, 3, j) != Q3Zero {
			t.Fatalf("padded column %d holds %d", 64+j, q3At(rec, 3, j))
		}
	}
}

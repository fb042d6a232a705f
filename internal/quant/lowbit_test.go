package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// lowBit describes one of the formats without a min whose quants are
// u = q + zero, q in [−zero, zero−1] (Q3, Q6, Q5), or Q2 (u ∈ [0, 3] under a
// per-group offset; zero: what Random stores in padding), for the shared
// tests.
type lowBit struct {
	dt         kernel.DType
	zero       int     // q3: 4, q6: 32
	groupBytes int     // one group record of a panel
	bits       float64 // per weight, scale included
	at         func(rec []byte, pr, j int) int
	neighbour  kernel.DType // the format reported beside it
	// bounds on the relative RMS error on Gaussian rows, max-abs and searched
	bound, searchBound float64
	overflow           float32 // a weight whose scale overflows f16
	// largest: a row whose scale is the largest the format stores,
	// largestScale; exact: it dequantizes exactly (else within a step)
	largest      []float32
	largestScale float32
	exact        bool
}

var lowBits = []lowBit{
	{dt: kernel.Q3, zero: Q3Zero, groupBytes: Q3GroupBytes, bits: 3.5, at: q3At, neighbour: kernel.Q4, bound: 0.25, searchBound: 0.22, overflow: 1e6,
		largest: []float32{-Q3Zero * 65504, 65504}, largestScale: 65504, exact: true},
	{dt: kernel.Q6, zero: Q6Zero, groupBytes: Q6GroupBytes, bits: 6.5, at: q6At, neighbour: kernel.Q8, bound: 0.03, searchBound: 0.028, overflow: 1e7,
		largest: []float32{-Q6Zero * 65504, 65504}, largestScale: 65504, exact: true},
	{dt: kernel.Q5, zero: Q5Zero, groupBytes: Q5GroupBytes, bits: 5.5, at: q5At, neighbour: kernel.Q6, bound: 0.05, searchBound: 0.046, overflow: 1e7,
		largest: []float32{-Q5Zero * 65504, 65504}, largestScale: 65504, exact: true},
	// Q2's scale keeps 7 significant bits: the largest is 65024 (0x7bf0)
	{dt: kernel.Q2, zero: 2, groupBytes: Q2GroupBytes, bits: 2.5, at: q2At, neighbour: kernel.Q3, bound: 0.33, searchBound: 0.31, overflow: 1e6,
		largest: []float32{-2 * 65024, 2 * 65024}, largestScale: 65024},
}

// TestLowBitRoundTrip: every element within one step (the ranges are
// asymmetric, as Q4's), sizes as Size says, max-abs and searched.
func TestLowBitRoundTrip(t *testing.T) {
	for _, f := range lowBits {
		r := rand.New(rand.NewPCG(1, 3))
		for _, shape := range [][2]int{{1, 1}, {3, 31}, {16, 32}, {17, 33}, {33, 100}, {5, 257}} {
			n, k := shape[0], shape[1]
			w := gaussian(r, n*k)
			for _, search := range []bool{false, true} {
				var m *Matrix
				var err error
				if search {
					m, err = QuantizeWeighted(f.dt, w, n, k, false, nil)
				} else {
					m, err = Quantize(f.dt, w, n, k, false)
				}
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(m.Data)) != Size(f.dt, n, k, false) || m.Kp%GroupK != 0 {
					t.Fatalf("%s %d×%d: %d bytes, Size says %d", f.dt, n, k, len(m.Data), Size(f.dt, n, k, false))
				}
				got := m.Dequantize()
				for i := range w {
					row, col := i/k, i%k
					bound := math.Abs(float64(m.Scale(row, col/GroupK))) * 1.001
					if e := math.Abs(float64(got[i] - w[i])); e > bound {
						t.Fatalf("%s search %v %d×%d [%d,%d]: %v → %v (error %g > %g)", f.dt, search, n, k, row, col, w[i], got[i], e, bound)
					}
				}
			}
		}
	}
}

// TestLowBitError reports each format's relative RMS error on Gaussian
// rows beside its neighbour's, max-abs and search, and holds it under a
// bound a bug would break.
func TestLowBitError(t *testing.T) {
	serialSweep(t)
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
	for _, f := range lowBits {
		e, es := rel(Quantize(f.dt, w, n, k, false)), rel(QuantizeWeighted(f.dt, w, n, k, false, nil))
		o, os := rel(Quantize(f.neighbour, w, n, k, false)), rel(QuantizeWeighted(f.neighbour, w, n, k, false, nil))
		t.Logf("%s %.4f bytes/weight: relative RMS error %.5f (search %.5f); %s %.4f bytes/weight: %.5f (search %.5f)",
			f.dt, BytesPerWeight(f.dt, false), e, es, f.neighbour, BytesPerWeight(f.neighbour, false), o, os)
		if e > f.bound || es > f.searchBound || !(es < e) {
			t.Errorf("%s relative RMS error %.4f (search %.4f): over %g (%g), or the search not better", f.dt, e, es, f.bound, f.searchBound)
		}
	}
}

func TestLowBitBadInput(t *testing.T) {
	for _, f := range lowBits {
		if _, err := Quantize(f.dt, []float32{1, float32(math.NaN())}, 1, 2, false); err == nil {
			t.Errorf("%s: NaN weight accepted", f.dt)
		}
		if _, err := Quantize(f.dt, []float32{1, float32(math.Inf(-1))}, 1, 2, false); err == nil {
			t.Errorf("%s: Inf weight accepted", f.dt)
		}
		if _, err := New(f.dt, 1, 32, true); err == nil {
			t.Errorf("%s with a min accepted", f.dt)
		}
		if _, err := View(f.dt, 16, 64, false, make([]byte, 2*f.groupBytes+1)); err == nil {
			t.Errorf("%s: View of the wrong size accepted", f.dt)
		}
		if m, err := View(f.dt, 17, 64, false, make([]byte, 4*f.groupBytes)); err != nil || m.Panels() != 2 || m.Groups() != 2 {
			t.Errorf("%s: View: %v %v", f.dt, m, err)
		}
		if b := BytesPerWeight(f.dt, false); b != f.bits/8 {
			t.Errorf("BytesPerWeight(%s) = %v", f.dt, b)
		}
		// a scale beyond f16 is stored as Inf (callers check finiteness, as for Q4)
		m, err := Quantize(f.dt, []float32{f.overflow, 1}, 1, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Scale(0, 0); !math.IsInf(float64(d), 0) {
			t.Errorf("%s: overflowing scale stored as %v", f.dt, d)
		}
		// the largest weight f16 can scale survives
		w := f.largest
		m, _ = Quantize(f.dt, w, 1, 2, false)
		got := m.Dequantize()
		d := m.Scale(0, 0)
		for i := range w {
			if e := math.Abs(float64(got[i] - w[i])); d != f.largestScale || (f.exact && e != 0) || e > float64(d) {
				t.Errorf("%s largest: %v, scale %v", f.dt, got, d)
				break
			}
		}
	}
}

// TestLowBitRandom: Random's matrices hold values of about the asked std
// and zeros in the padding.
func TestLowBitRandom(t *testing.T) {
	for _, f := range lowBits {
		r := rand.New(rand.NewPCG(5, 6))
		m, err := Random(r, f.dt, 40, 70, false, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		w := m.Dequantize()
		var s float64
		for _, v := range w {
			s += float64(v) * float64(v)
		}
		if std := math.Sqrt(s / float64(len(w))); std < 0.07 || std > 0.14 {
			t.Errorf("%s: std %.3f, want about 0.1", f.dt, std)
		}
		rec := m.Panel(0)[2*f.groupBytes:]
		for j := 70 - 64; j < GroupK; j++ {
			if f.at(rec, 3, j) != f.zero {
				t.Fatalf("%s: padded column %d holds %d", f.dt, 64+j, f.at(rec, 3, j))
			}
		}
	}
}

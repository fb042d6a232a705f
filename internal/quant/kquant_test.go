package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

var kFormats = []kernel.DType{kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}

// TestKLayout: every (scale code, min code) pair and every stored value
// of every K format reads back from the bytes the doc of kquant.go names;
// the sizes are b + 0.5 bits per weight with K padded to 256.
func TestKLayout(t *testing.T) {
	sb := make([]byte, KHeaderBytes)
	for j := range KGroups {
		for sc := 0; sc <= kCodeMax; sc++ {
			for mc := 0; mc <= kCodeMax; mc++ {
				pr := (sc + mc) % PanelRows
				setKCodes(sb, pr, j, sc, mc)
				if gs, gm := KCodes(kernel.Q4K, sb, pr, j); gs != sc || gm != mc {
					t.Fatalf("group %d row %d: codes (%d, %d) read back as (%d, %d)", j, pr, sc, mc, gs, gm)
				}
				// the documented bytes
				b, nb := sb[16*j+pr], sb[128+16*(j/2)+pr]>>uint(4*(j%2))&15
				if int(b&63) != sc || int(b>>6)|int(nb)<<2 != mc {
					t.Fatalf("group %d row %d: codes (%d, %d) not where the layout says", j, pr, sc, mc)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, dt := range kFormats {
		bits := kBits(dt)
		if got, want := BytesPerWeight(dt, false)*8, float64(bits)+0.5; got != want {
			t.Errorf("%s: %v bits per weight, want %v", dt, got, want)
		}
		for _, k := range []int{1, 255, 256, 257, 2304} {
			want := int64(PaddedN(17)/PanelRows) * int64((k+255)/256) * int64(KSuperBytes(dt))
			if got := Size(dt, 17, k, false); got != want {
				t.Errorf("%s 17×%d: Size %d, want %d", dt, k, got, want)
			}
		}
		m, err := New(dt, 16, 512, false)
		if err != nil {
			t.Fatal(err)
		}
		panel := m.Panel(0)
		want := make([]int, 16*512)
		for pr := range 16 {
			for k := range 512 {
				u := r.IntN(1 << bits)
				want[pr*512+k] = u
				setKValue(KBase(dt), KGroup(dt, panel, k/GroupK), pr, k%GroupK, u)
			}
		}
		for pr := range 16 {
			for k := range 512 {
				if got := kValueAt(KBase(dt), KGroup(dt, panel, k/GroupK), pr, k%GroupK); got != want[pr*512+k] {
					t.Fatalf("%s row %d k %d: stored %d, read %d", dt, pr, k, want[pr*512+k], got)
				}
			}
		}
	}
}

// TestKDequantize: Dequantize gives (d·sc)·u − dm·mc of the stored fields,
// with the f32 products every kernel forms (KScaleMin); zero rows stay
// zero; padded columns are not returned.
func TestKDequantize(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, dt := range kFormats {
		n, k := 19, 300
		w := gaussian(r, n*k)
		for c := range k { // row 3 all zero
			w[3*k+c] = 0
		}
		m, err := Quantize(dt, w, n, k, false)
		if err != nil {
			t.Fatal(err)
		}
		got := m.Dequantize()
		for row := range n {
			panel, pr := m.Panel(row/PanelRows), row%PanelRows
			for c := range k {
				s, mn := KScaleMin(dt, panel, pr, c/GroupK)
				u := kValueAt(KBase(dt), KGroup(dt, panel, c/GroupK), pr, c%GroupK)
				if want := s*float32(u) - mn; got[row*k+c] != want {
					t.Fatalf("%s [%d,%d]: %v, want (d·sc)·u − dm·mc = %v", dt, row, c, got[row*k+c], want)
				}
				if row == 3 && got[row*k+c] != 0 {
					t.Fatalf("%s: a zero row dequantizes to %v at %d", dt, got[row*k+c], c)
				}
			}
		}
	}
}

// kBounds: relative RMS error bounds on the three matrix kinds of
// quanterr_test.go, today's figure (in the comment) plus about 2%, for
// Quantize (min-max) and QuantizeWeighted (searched). The searched ones
// are at most ggml's Q3_K…Q6_K on the same matrices
// (docs/quant-error.md), except q3k on the Gaussian rows (0.1445 against
// Q3_K's 0.1443 with an importance matrix of ones).
var kBounds = map[kernel.DType]map[string][2]float64{
	kernel.Q3K: {
		"gauss":    {0.1711, 0.1474}, // 0.16771, 0.14452
		"t4":       {0.2052, 0.1776}, // 0.20115, 0.17411
		"outliers": {0.2236, 0.1895}, // 0.21919, 0.1858
	},
	kernel.Q4K: {
		"gauss":    {7.99e-2, 7.07e-2}, // 0.078307, 0.069355
		"t4":       {9.60e-2, 8.58e-2}, // 0.094108, 0.084152
		"outliers": {0.1035, 9.30e-2},  // 0.10147, 0.091153
	},
	kernel.Q5K: {
		"gauss":    {3.89e-2, 3.47e-2}, // 0.038101, 0.033984
		"t4":       {4.68e-2, 4.20e-2}, // 0.045923, 0.041176
		"outliers": {5.06e-2, 4.57e-2}, // 0.049628, 0.044811
	},
	kernel.Q6K: {
		"gauss":    {1.95e-2, 1.73e-2}, // 0.019115, 0.016918
		"t4":       {2.36e-2, 2.10e-2}, // 0.023171, 0.020594
		"outliers": {2.61e-2, 2.28e-2}, // 0.025606, 0.022335
	},
}

type kQuantizer func(dt kernel.DType, w []float32, n, k int) (*Matrix, error)

func kMinMax(dt kernel.DType, w []float32, n, k int) (*Matrix, error) {
	return Quantize(dt, w, n, k, false)
}

func kSearched(dt kernel.DType, w []float32, n, k int) (*Matrix, error) {
	return QuantizeWeighted(dt, w, n, k, false, nil)
}

// checkKErr quantizes every kind in every K format both ways and returns
// what breaks: a relative RMS over its bound, or a row's super-block
// where the search's squared error exceeds min-max's.
func checkKErr(t *testing.T, minMax, search kQuantizer) []string {
	var bad []string
	mats := qeMatrices()
	for _, dt := range kFormats {
		for _, kind := range qeKinds {
			w := mats[kind]
			a, err := minMax(dt, w, qeN, qeK)
			if err != nil {
				t.Fatal(err)
			}
			s, err := search(dt, w, qeN, qeK)
			if err != nil {
				t.Fatal(err)
			}
			da, ds := a.Dequantize(), s.Dequantize()
			ea, es := qeRelRMS(w, da), qeRelRMS(w, ds)
			b := kBounds[dt][kind]
			t.Logf("%-4s %-8s min-max %.5g (bound %.4g)  searched %.5g (bound %.4g)  %.1f%% lower", dt, kind, ea, b[0], es, b[1], 100*(1-es/ea))
			if !(ea <= b[0]) {
				bad = append(bad, fmt.Sprintf("%s %s: min-max relative RMS %.4g > %.4g", dt, kind, ea, b[0]))
			}
			if !(es <= b[1]) {
				bad = append(bad, fmt.Sprintf("%s %s: searched relative RMS %.4g > %.4g", dt, kind, es, b[1]))
			}
			worse := 0
			for i := 0; i < len(w); i += SuperK {
				var sa, ss float64
				for j := i; j < i+SuperK; j++ {
					xa, xs := float64(w[j])-float64(da[j]), float64(w[j])-float64(ds[j])
					sa += xa * xa
					ss += xs * xs
				}
				if ss > sa*(1+1e-4) || math.IsNaN(ss) {
					worse++
				}
			}
			if worse > 0 {
				bad = append(bad, fmt.Sprintf("%s %s: the search is worse than min-max on %d super-blocks", dt, kind, worse))
			}
		}
	}
	return bad
}

// TestKQuantErr holds each K format's weight error, min-max and searched,
// under its bound on the three matrix kinds, and the search never worse
// than min-max on a row's super-block.
func TestKQuantErr(t *testing.T) {
	serialSweep(t)
	for _, b := range checkKErr(t, kMinMax, kSearched) {
		t.Error(b)
	}
}

// TestKQuantErrCatchesPlantedErrors: a dropped search, super-block scales
// carrying 1% noise, scale codes moved by one step at random, and
// min-max weights with noise of a tenth of a step fail every K format's
// checks.
func TestKQuantErrCatchesPlantedErrors(t *testing.T) {
	serialSweep(t)
	perturb := func(f func(r *rand.Rand, sb []byte)) kQuantizer {
		return func(dt kernel.DType, w []float32, n, k int) (*Matrix, error) {
			m, err := kSearched(dt, w, n, k)
			if err != nil {
				return nil, err
			}
			r := rand.New(rand.NewPCG(5, 5))
			for p := 0; p < m.Panels(); p++ {
				for s := 0; s < m.Kp/SuperK; s++ {
					f(r, m.Panel(p)[s*KSuperBytes(dt):])
				}
			}
			return m, nil
		}
	}
	noisyD := perturb(func(r *rand.Rand, sb []byte) {
		for pr := range PanelRows {
			h := binary.LittleEndian.Uint16(sb[kDOff+2*pr:])
			binary.LittleEndian.PutUint16(sb[kDOff+2*pr:], half.F32ToF16(half.F16ToF32(h)*float32(1+0.01*r.NormFloat64())))
		}
	})
	codeSteps := perturb(func(r *rand.Rand, sb []byte) {
		for pr := range PanelRows {
			for j := range KGroups {
				sc, mc := KCodes(kernel.Q4K, sb, pr, j)
				setKCodes(sb, pr, j, min(max(sc+r.IntN(3)-1, 0), kCodeMax), mc)
			}
		}
	})
	noisyWeights := func(dt kernel.DType, w []float32, n, k int) (*Matrix, error) {
		r := rand.New(rand.NewPCG(6, 6))
		x := make([]float32, len(w))
		step := 4.4 / float64(int(1)<<kBits(dt)) // a typical group range over its levels
		for i := range w {
			x[i] = w[i] + float32(0.1*step*r.NormFloat64())
		}
		return Quantize(dt, x, n, k, false)
	}
	for _, c := range []struct {
		name           string
		minMax, search kQuantizer
	}{
		{"search dropped", kMinMax, kMinMax},
		{"noisy super-block scales", kMinMax, noisyD},
		{"scale codes off by one", kMinMax, codeSteps},
		{"noisy min-max", noisyWeights, kSearched},
	} {
		bad := checkKErr(&testing.T{}, c.minMax, c.search)
		if len(bad) == 0 {
			t.Errorf("%s: passed the K weight-error checks", c.name)
			continue
		}
		t.Logf("%s: caught (%d findings), e.g. %s", c.name, len(bad), bad[0])
		for _, dt := range kFormats {
			if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, string(dt)+" ") }) {
				t.Errorf("%s: passed the weight-error checks of %s", c.name, dt)
			}
		}
	}
}

// TestKEdges: constant, all-positive, tiny and huge rows, and a row
// whose groups differ by orders of magnitude, quantize to finite values
// within the format's reach.
func TestKEdges(t *testing.T) {
	k := 512
	rows := map[string][]float32{}
	add := func(name string, f func(i int) float32) {
		w := make([]float32, k)
		for i := range w {
			w[i] = f(i)
		}
		rows[name] = w
	}
	add("constant", func(int) float32 { return 0.5 })
	add("positive", func(i int) float32 { return 1 + float32(i%7) })
	add("negative", func(i int) float32 { return -1 - float32(i%7) })
	add("tiny", func(i int) float32 { return 1e-6 * float32(i%5-2) })
	add("huge", func(i int) float32 { return 3e4 * float32(i%5-2) })
	add("mixed scales", func(i int) float32 { return float32(math.Pow(10, float64(i/32%4))) * float32(i%9-4) })
	for _, dt := range kFormats {
		for name, w := range rows {
			for _, search := range []bool{false, true} {
				var m *Matrix
				var err error
				if search {
					m, err = QuantizeWeighted(dt, w, 1, k, false, nil)
				} else {
					m, err = Quantize(dt, w, 1, k, false)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := m.Dequantize()
				var maxAbs float64
				for _, v := range w {
					maxAbs = max(maxAbs, math.Abs(float64(v)))
				}
				for i, v := range got {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("%s %s search=%v: w[%d] = %v → %v", dt, name, search, i, w[i], v)
					}
					// a group's reach: every weight within its super-block's
					// largest |w| (plus a min's rounding), so no blow-up
					if math.Abs(float64(v)) > 1.1*maxAbs+1e-30 {
						t.Fatalf("%s %s search=%v: w[%d] = %v → %v beyond the row's range", dt, name, search, i, w[i], v)
					}
				}
				if e := qeRelRMS(w, got); name != "mixed scales" && e > 0.5 {
					t.Errorf("%s %s search=%v: relative RMS %.3g", dt, name, search, e)
				}
			}
		}
	}
}

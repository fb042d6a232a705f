package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// Weight-error tests of the quantizers on the matrix kinds of
// docs/quant-error.md (smaller: 64 rows): Gaussian rows, Student-t rows
// (ν = 4) and Gaussian rows whose input channels are 10× larger on 1% of
// the columns.

const qeN, qeK = 64, 4096

// qeMatrices returns the three kinds, row-major qeN×qeK.
func qeMatrices() map[string][]float32 {
	r := rand.New(rand.NewPCG(23, 2))
	g, t, o := make([]float32, qeN*qeK), make([]float32, qeN*qeK), make([]float32, qeN*qeK)
	for i := range g {
		g[i] = float32(r.NormFloat64())
	}
	for i := range t {
		var c float64
		for range 4 {
			z := r.NormFloat64()
			c += z * z
		}
		t[i] = float32(r.NormFloat64() / math.Sqrt(c/4))
	}
	scale := make([]float32, qeK)
	for j := range scale {
		scale[j] = 1
		if r.IntN(100) == 0 {
			scale[j] = 10
		}
	}
	for i := range o {
		o[i] = float32(r.NormFloat64()) * scale[i%qeK]
	}
	return map[string][]float32{"gauss": g, "t4": t, "outliers": o}
}

var qeKinds = []string{"gauss", "t4", "outliers"}

// qeBounds: relative RMS error bounds, today's figure (in the comment)
// plus about 2%, for max-abs (Quantize) and searched (QuantizeWeighted).
var qeBounds = map[string]map[string][2]float64{
	"q8": {
		"gauss":    {5.45e-3, 4.92e-3}, // 5.344e-3, 4.822e-3
		"t4":       {7.41e-3, 6.85e-3}, // 7.269e-3, 6.719e-3
		"outliers": {9.78e-3, 9.31e-3}, // 9.589e-3, 9.128e-3
	},
	"q4": {
		"gauss":    {8.75e-2, 8.24e-2}, // 8.583e-2, 8.075e-2
		"t4":       {0.1172, 0.1125},   // 0.1149, 0.1103
		"outliers": {0.1524, 0.1485},   // 0.1494, 0.1456
	},
	"q4+min": {
		"gauss":    {7.97e-2, 7.18e-2}, // 7.814e-2, 7.039e-2
		"t4":       {9.56e-2, 8.65e-2}, // 9.373e-2, 8.479e-2
		"outliers": {0.1028, 9.35e-2},  // 0.1008, 9.17e-2
	},
	"q5": {
		"gauss":    {4.35e-2, 4.08e-2}, // 4.262e-2, 3.995e-2
		"t4":       {5.89e-2, 5.67e-2}, // 5.777e-2, 5.555e-2
		"outliers": {7.77e-2, 7.65e-2}, // 7.622e-2, 7.496e-2
	},
	"q2": {
		"gauss":    {0.3275, 0.3062}, // 0.3211, 0.3002
		"t4":       {0.3914, 0.3603}, // 0.3837, 0.3532
		"outliers": {0.3968, 0.3353}, // 0.389, 0.3287
	},
}

type quantizer func(f format, w []float32, n, k int) (*Matrix, error)

func maxAbsQ(f format, w []float32, n, k int) (*Matrix, error) {
	return Quantize(f.dt, w, n, k, f.hasMin)
}
func searchQ(f format, w []float32, n, k int) (*Matrix, error) {
	return QuantizeWeighted(f.dt, w, n, k, f.hasMin, nil)
}

func qeRelRMS(w, got []float32) float64 {
	var num, den float64
	for i := range w {
		e := float64(got[i]) - float64(w[i])
		num += e * e
		den += float64(w[i]) * float64(w[i])
	}
	return math.Sqrt(num / den)
}

var qeFormats = []format{{kernel.Q8, false}, {kernel.Q4, false}, {kernel.Q4, true}, {kernel.Q5, false}, {kernel.Q2, false}}

// checkQuantErr quantizes every kind in every format with maxAbs and
// search and returns what breaks: a relative RMS over its bound, a group
// where the search's squared error exceeds max-abs's, or a weight whose
// error exceeds max-abs's bound (half a step, one for Q4 without a min,
// Q5 and Q2).
func checkQuantErr(t *testing.T, maxAbs, search quantizer) []string {
	var bad []string
	mats := qeMatrices()
	for _, f := range qeFormats {
		for _, kind := range qeKinds {
			w := mats[kind]
			a, err := maxAbs(f, w, qeN, qeK)
			if err != nil {
				t.Fatal(err)
			}
			s, err := search(f, w, qeN, qeK)
			if err != nil {
				t.Fatal(err)
			}
			da, ds := a.Dequantize(), s.Dequantize()
			ea, es := qeRelRMS(w, da), qeRelRMS(w, ds)
			b := qeBounds[f.String()][kind]
			t.Logf("%-7v %-8s max-abs %.4g (bound %.4g)  searched %.4g (bound %.4g)  %.1f%% lower", f, kind, ea, b[0], es, b[1], 100*(1-es/ea))
			if !(ea <= b[0]) {
				bad = append(bad, fmt.Sprintf("%v %s: max-abs relative RMS %.4g > %.4g", f, kind, ea, b[0]))
			}
			if !(es <= b[1]) {
				bad = append(bad, fmt.Sprintf("%v %s: searched relative RMS %.4g > %.4g", f, kind, es, b[1]))
			}
			worse, far := 0, 0
			for r := 0; r < qeN; r++ {
				for g := 0; g < qeK/GroupK; g++ {
					var sa, ss float64
					for j := g * GroupK; j < (g+1)*GroupK; j++ {
						i := r*qeK + j
						xa, xs := float64(w[i])-float64(da[i]), float64(w[i])-float64(ds[i])
						sa += xa * xa
						ss += xs * xs
						step := math.Abs(float64(s.Scale(r, g)))
						lim := step*0.5 + 1e-3*math.Abs(float64(w[i]))
						if f.dt == kernel.Q4 && !f.hasMin || f.dt == kernel.Q5 || f.dt == kernel.Q2 {
							lim = step * 1.001
						}
						if math.Abs(xs) > lim {
							far++
						}
					}
					if ss > sa {
						worse++
					}
				}
			}
			if worse > 0 {
				bad = append(bad, fmt.Sprintf("%v %s: the search is worse than max-abs on %d groups", f, kind, worse))
			}
			if far > 0 {
				bad = append(bad, fmt.Sprintf("%v %s: %d searched weights beyond max-abs's per-weight bound", f, kind, far))
			}
		}
	}
	return bad
}

// TestQuantErr holds each format's weight error, max-abs and searched, on
// the three matrix kinds under its bound; the search is never worse than
// max-abs on a group and keeps every weight within max-abs's bound.
func TestQuantErr(t *testing.T) {
	serialSweep(t)
	for _, b := range checkQuantErr(t, maxAbsQ, searchQ) {
		t.Error(b)
	}
}

// TestQuantErrCatchesPlantedErrors: a search that was dropped, one whose
// scales carry 1% noise, and a max-abs quantizer whose weights carry noise
// of a tenth of a step each fail the checks.
func TestQuantErrCatchesPlantedErrors(t *testing.T) {
	serialSweep(t)
	noisyScales := func(f format, w []float32, n, k int) (*Matrix, error) {
		m, err := searchQ(f, w, n, k)
		if err != nil {
			return nil, err
		}
		r := rand.New(rand.NewPCG(5, 5))
		off := 8 * LineBytes
		switch f.dt {
		case kernel.Q4:
			off = 4 * LineBytes
		case kernel.Q5:
			off = Q5Lines * LineBytes
		case kernel.Q2:
			off = Q2Lines * LineBytes
		}
		for p := 0; p < m.Panels(); p++ {
			for g := 0; g < m.Groups(); g++ {
				rec := m.Panel(p)[g*m.GroupBytes():]
				for pr := 0; pr < PanelRows; pr++ {
					h := rec[off+2*pr:]
					d := half.F16ToF32(uint16(h[0]) | uint16(h[1])<<8)
					v := half.F32ToF16(d * float32(1+0.01*r.NormFloat64()))
					if f.dt == kernel.Q2 { // keep the offset code
						d, c := Q2Scale(uint16(h[0]) | uint16(h[1])<<8)
						v = q2Grid(d*float32(1+0.01*r.NormFloat64()), false) | uint16(c)
					}
					h[0], h[1] = byte(v), byte(v>>8)
				}
			}
		}
		return m, nil
	}
	noisyWeights := func(f format, w []float32, n, k int) (*Matrix, error) {
		r := rand.New(rand.NewPCG(6, 6))
		x := make([]float32, len(w))
		lv := map[kernel.DType]float64{kernel.Q8: 127, kernel.Q5: 15.5}[f.dt]
		if lv == 0 {
			lv = 7.5
		}
		for i := range w {
			// a tenth of a typical step: max|w| of a group / (levels/2)
			x[i] = w[i] + float32(0.1*2.2/lv*r.NormFloat64())
		}
		return Quantize(f.dt, x, n, k, f.hasMin)
	}
	for _, c := range []struct {
		name           string
		maxAbs, search quantizer
	}{
		{"search dropped", maxAbsQ, maxAbsQ},
		{"noisy scales", maxAbsQ, noisyScales},
		{"noisy max-abs", noisyWeights, searchQ},
	} {
		bad := checkQuantErr(&testing.T{}, c.maxAbs, c.search)
		if len(bad) == 0 {
			t.Errorf("%s: passed the weight-error checks", c.name)
			continue
		}
		t.Logf("%s: caught (%d findings), e.g. %s", c.name, len(bad), bad[0])
		for _, f := range qeFormats { // every format's own checks catch it
			if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, f.String()+" ") }) {
				t.Errorf("%s: passed the weight-error checks of %v", c.name, f)
			}
		}
	}
}

// TestQuantizeWeighted: with the activation energy of the outlier matrix's
// input channels as importance, the weighted error is lower than the
// uniform search's, and bad importances are refused.
func TestQuantizeWeighted(t *testing.T) {
	w := qeMatrices()["outliers"]
	imp := make([]float32, qeK)
	r := rand.New(rand.NewPCG(7, 7))
	for j := range imp {
		imp[j] = float32(0.5 + r.Float64())
		if j%97 == 0 {
			imp[j] = 100
		}
	}
	werr := func(m *Matrix) float64 {
		got := m.Dequantize()
		var s float64
		for i := range w {
			e := float64(got[i]) - float64(w[i])
			s += float64(imp[i%qeK]) * e * e
		}
		return s
	}
	for _, f := range qeFormats {
		u, err := QuantizeWeighted(f.dt, w, qeN, qeK, f.hasMin, nil)
		if err != nil {
			t.Fatal(err)
		}
		iw, err := QuantizeWeighted(f.dt, w, qeN, qeK, f.hasMin, imp)
		if err != nil {
			t.Fatal(err)
		}
		eu, ei := werr(u), werr(iw)
		t.Logf("%-7v weighted squared error: uniform search %.4g, importance search %.4g (%.1f%% lower)", f, eu, ei, 100*(1-ei/eu))
		if !(ei < 0.97*eu) {
			t.Errorf("%v: importance search %.4g not 3%% below the uniform search %.4g", f, ei, eu)
		}
	}
	for _, imp := range [][]float32{{1, float32(math.NaN()), 1}, {1, -1, 1}, {float32(math.Inf(1)), 1, 1}} {
		if _, err := QuantizeWeighted(kernel.Q8, make([]float32, 6), 2, 3, false, imp); err == nil {
			t.Errorf("importance %v accepted", imp)
		}
	}
	if _, err := QuantizeWeighted(kernel.Q8, make([]float32, 6), 2, 3, false, make([]float32, 4)); err == nil {
		t.Error("4 importances for 3 channels accepted")
	}
}

package model

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestQuantSearch: with QuantSearch every q4 matrix of the tiny model is
// at least as close to the f32 weights as with max-abs scales, and the
// model as a whole closer (the squared error summed over all matrices).
func TestQuantSearch(t *testing.T) {
	dir := loadTiny(t)[0].f.Dir()
	ref := mustLoad(t, dir, LoadOptions{Formats: Formats{DType: kernel.F32}})
	plain := mustLoad(t, dir, LoadOptions{Formats: Formats{DType: kernel.Q4}})
	searched := mustLoad(t, dir, LoadOptions{Formats: Formats{DType: kernel.Q4}, Conversion: Conversion{QuantSearch: true}})
	rm, pm, sm := ref.matrices(), plain.matrices(), searched.matrices()
	var pe, se float64
	for i := range rm {
		if (*pm[i]).DType != kernel.Q4 {
			continue // the router stays f32
		}
		w := (*rm[i]).Dequantize()
		p, s := sqErr((*pm[i]).Dequantize(), w), sqErr((*sm[i]).Dequantize(), w)
		if s > p {
			t.Errorf("matrix %d: searched squared error %.4g > max-abs %.4g", i, s, p)
		}
		pe, se = pe+p, se+s
	}
	t.Logf("q4 squared weight error: max-abs %.4g, searched %.4g (%.1f%% less)", pe, se, 100*(1-se/pe))
	if !(se < pe) {
		t.Errorf("the search did not lower the total error: %.4g vs %.4g", se, pe)
	}
}

func sqErr(got, want []float32) float64 {
	var s float64
	for i := range want {
		d := float64(got[i] - want[i])
		s += d * d
	}
	return s
}

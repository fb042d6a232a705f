package kerneltest

import (
	"math"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestDotScales: ρ² = Σ_j b_j²·(mean of a² over j's group), groups along k.
func TestDotScales(t *testing.T) {
	a := []float32{3, 4, 0, 2} // m=1, k=4, groups of 2: means 12.5 and 2
	b := []float32{1, 0, 2, 1, // n=2
		0, 1, 0, 0}
	got := DotScales(a, b, 1, 2, 4, 2)
	want := []float64{math.Sqrt(1*12.5 + 4*2 + 1*2), math.Sqrt(12.5)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("ρ[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestDotCompare: figures against ρ, and the failures kernel.Compare has.
func TestDotCompare(t *testing.T) {
	tol := kernel.Tolerance{RelRMS: 1e-2, MaxRel: 1e-1}
	want := []float32{1e-3, 2} // the first nearly cancels
	rho := []float64{1, 1}
	if d, err := DotCompare([]float32{1e-3 + 5e-3, 2}, want, rho, nil, tol); err != nil || math.Abs(d.MaxRel-5e-3) > 1e-6 {
		t.Errorf("an error of 0.5%% of ρ on a cancelling output: %+v, %v", d, err)
	}
	for _, c := range []struct {
		name string
		got  []float32
		rho  []float64
	}{
		{"NaN", []float32{float32(math.NaN()), 2}, rho},
		{"+Inf", []float32{1e-3, float32(math.Inf(1))}, rho},
		{"2% of ρ", []float32{1e-3 + 0.02, 2 - 0.02}, rho},
		{"one output 20% of ρ off", []float32{1e-3, 2.2}, []float64{100, 1}},
		{"an error where ρ = 0", []float32{2e-3, 2}, []float64{0, 1}},
		{"length", []float32{1e-3}, rho},
	} {
		if _, err := DotCompare(c.got, want, c.rho, nil, tol); err == nil {
			t.Errorf("%s: passes", c.name)
		}
	}
	if _, err := DotCompare([]float32{0, 2}, []float32{0, 2}, []float64{0, 1}, nil, tol); err != nil {
		t.Errorf("exact output with ρ = 0: %v", err)
	}
	// a floor admits f32 rounding where ρ = 0, and no more
	floor := []float64{1e-7, 1e-7}
	if _, err := DotCompare([]float32{7e-8, 2}, []float32{0, 2}, []float64{0, 1}, floor, tol); err != nil {
		t.Errorf("rounding within the floor where ρ = 0: %v", err)
	}
	if _, err := DotCompare([]float32{2e-7, 2}, []float32{0, 2}, []float64{0, 1}, floor, tol); err == nil {
		t.Errorf("an error past the floor where ρ = 0 passes")
	}
	if f := DotFloor([]float32{1, 2}, []float64{3, 4}, 1, 1, 2); math.Abs(f[0]-4*0x1p-24*math.Sqrt(2)*math.Sqrt(9+64)) > 1e-20 {
		t.Errorf("DotFloor = %v", f)
	}
}

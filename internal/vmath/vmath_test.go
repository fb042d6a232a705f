package vmath

import (
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// TestExp holds Exp within 2 ulp of math.Exp on every ISA path (masking
// the wider ones), including tails, overflow and underflow.
func TestExp(t *testing.T) {
	var src []float32
	for x := -110.0; x <= 90; x += 0.0137 {
		src = append(src, float32(x))
	}
	src = append(src, 0, -0, 1e-30, -1e-30, -1000, 1000, -87.4, 88.5)
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}, {cpu.ASIMD}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{len(src), 1, 7, 8, 15, 17} {
			dst := make([]float32, n)
			Exp(dst, src[len(src)-n:])
			for i, x := range src[len(src)-n:] {
				want := math.Exp(float64(x))
				got := float64(dst[i])
				if want > math.MaxFloat32 {
					if !math.IsInf(got, 1) {
						t.Fatalf("mask %v: exp(%v) = %v, want +Inf", mask, x, got)
					}
					continue
				}
				tol := 2.5e-7 * want
				if want < 1.2e-38 {
					tol = 1.2e-38 // subnormal range: absolute
				}
				if math.IsNaN(got) || math.Abs(got-want) > tol {
					t.Fatalf("mask %v: exp(%v) = %v, want %v", mask, x, got, want)
				}
			}
		}
		restore()
	}
}

func TestDotAxpy(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6, 7}
	b := []float32{7, 6, 5, 4, 3, 2, 1, 99}
	if got := Dot(a, b); got != 84 {
		t.Errorf("Dot = %v, want 84", got)
	}
	y := []float32{1, 1, 1}
	Axpy(2, a, y)
	if y[0] != 3 || y[1] != 5 || y[2] != 7 {
		t.Errorf("Axpy = %v", y)
	}
}

// TestActivations checks Sigmoid, SiLU and SiLUMul against float64 on a
// range past exp's limits (and NaN), on lengths with and without a tail.
func TestActivations(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}} {
		restore := cpu.Disable(mask...)
		testActivations(t)
		restore()
	}
}

func testActivations(t *testing.T) {
	for _, n := range []int{1, 15, 16, 17, 255, 256, 257, 600} {
		x := make([]float32, n)
		u := make([]float32, n)
		for i := range x {
			x[i] = float32(i*37%401-200) * 0.55 // −110 … 110
			u[i] = float32(i%7) - 3
		}
		x[n/2] = float32(math.NaN())
		sg, sl, sm := make([]float32, n), make([]float32, n), make([]float32, n)
		Sigmoid(sg, x)
		SiLU(sl, x)
		SiLUMul(sm, x, u)
		for i, v := range x {
			if v != v {
				if sg[i] == sg[i] || sl[i] == sl[i] || sm[i] == sm[i] {
					t.Fatalf("n=%d: NaN in, %v %v %v out", n, sg[i], sl[i], sm[i])
				}
				continue
			}
			s := 1 / (1 + math.Exp(-float64(v)))
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"sigmoid", float64(sg[i]), s}, {"silu", float64(sl[i]), float64(v) * s}, {"silumul", float64(sm[i]), float64(v) * s * float64(u[i])}} {
				// below 1e-30 the product of an overflowed exp is 0: fine
				if d := math.Abs(c.got - c.want); d > 4e-7*math.Abs(c.want)+1e-30 {
					t.Errorf("n=%d %s(%v) = %v, want %v", n, c.name, v, c.got, c.want)
				}
			}
		}
	}
}

// TestExpNaN: a NaN in gives NaN out on every ISA path, in the vector
// body and in the tail (a clamp that swallowed NaN made σ(NaN) = 0).
func TestExpNaN(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}, {cpu.ASIMD}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{1, 8, 16, 19, 40} {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i) - 3
			}
			for _, at := range []int{0, n / 2, n - 1} {
				src[at] = float32(math.NaN())
				dst := make([]float32, n)
				Exp(dst, src)
				if dst[at] == dst[at] {
					t.Errorf("mask %v n=%d: exp(NaN) at %d = %v", mask, n, at, dst[at])
				}
				src[at] = 0
			}
			// in place, with results past the clamp range (exp(5) > 88.3)
			for i := range src {
				src[i] = float32(i%13) - 2
			}
			want := make([]float32, n)
			Exp(want, src)
			Exp(src, src)
			for i := range src {
				if src[i] != want[i] {
					t.Fatalf("mask %v n=%d: in-place exp[%d] = %v, out of place %v", mask, n, i, src[i], want[i])
				}
			}
		}
		restore()
	}
}

// TestBLAS checks Dot and Axpy against float64 on every ISA path and on
// lengths around the vector widths and unroll steps.
func TestBLAS(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 512, 1000} {
			a, b := make([]float32, n), make([]float32, n)
			var want float64
			for i := range a {
				a[i] = float32(i%11) - 5.5
				b[i] = float32(i%7)*0.25 - 0.6
				want += float64(a[i]) * float64(b[i])
			}
			if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("mask %v: Dot over %d = %v, want %v", mask, n, got, want)
			}
			y := append([]float32(nil), b...)
			Axpy(-1.5, a, y)
			for i := range y {
				if w := float64(b[i]) - 1.5*float64(a[i]); math.Abs(float64(y[i])-w) > 1e-6*(1+math.Abs(w)) {
					t.Fatalf("mask %v: Axpy over %d: y[%d] = %v, want %v", mask, n, i, y[i], w)
				}
			}
			if n > 0 {
				a[n/2] = float32(math.NaN())
				if d := Dot(a, b); d == d {
					t.Errorf("mask %v: Dot with a NaN over %d = %v", mask, n, d)
				}
			}
		}
		restore()
	}
}

package vmath

import (
	"math"
	"slices"
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

// TestMulAdd holds MulAdd on every ISA path to the exact bits of the Go
// expression dst + a·b (product rounded, then the sum), on lengths around
// the vector widths and unroll steps, with a, b longer than dst and a
// guard cell after dst that must stay untouched; a NaN propagates.
func TestMulAdd(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 129} {
			buf := make([]float32, n+1)
			dst := buf[:n]
			a, b := make([]float32, n+3), make([]float32, n+3)
			for i := range a {
				a[i] = float32(i%11)*0.37 - 1.5
				b[i] = float32(i%7)*0.25 - 0.6
			}
			for i := range dst {
				dst[i] = float32(i%5) - 2
			}
			buf[n] = float32(math.NaN())
			want := make([]float32, n)
			for i := range want {
				p := a[i] * b[i]
				want[i] = dst[i] + p
			}
			MulAdd(dst, a, b)
			for i, w := range want {
				if dst[i] != w {
					t.Fatalf("mask %v: MulAdd over %d: dst[%d] = %v, want %v", mask, n, i, dst[i], w)
				}
			}
			if buf[n] == buf[n] {
				t.Fatalf("mask %v: MulAdd over %d wrote past dst", mask, n)
			}
			if n > 0 {
				a[n-1] = float32(math.NaN())
				MulAdd(dst, a, b)
				if dst[n-1] == dst[n-1] {
					t.Errorf("mask %v: MulAdd over %d: NaN in a gave %v", mask, n, dst[n-1])
				}
			}
		}
		restore()
	}
}

// softplusTol is Softplus's bound relative to float64 (|want| ≥ 1e-37):
// measured worst 1.15e-7 (Exp's error and f32 roundings).
const softplusTol = 2e-7

// TestSoftplus checks Softplus against float64 on every ISA path, over
// inputs past exp's range, with lengths with and without a tail, a
// scale, a guard cell after dst, and NaN and ±Inf.
func TestSoftplus(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}} {
		restore := cpu.Disable(mask...)
		var src []float32
		for x := -120.0; x <= 120; x += 0.0173 {
			src = append(src, float32(x))
		}
		for x := float32(1e-30); x < 1; x *= 1.37 {
			src = append(src, x, -x)
		}
		src = append(src, 0, float32(math.Copysign(0, -1)), 88.5, -88.5, 1000, -1000)
		for _, n := range []int{len(src), 1, 15, 16, 17, 33} {
			in := src[len(src)-n:]
			buf := make([]float32, n+1)
			buf[n] = float32(math.NaN())
			Softplus(buf[:n], in, -1.75)
			for i, x := range in {
				z := float64(x)
				want := -1.75 * (math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))))
				if e := math.Abs(float64(buf[i]) - want); !(e <= softplusTol*math.Abs(want)+1e-37) {
					t.Fatalf("mask %v n=%d: softplus(%v) = %v, want %v (rel %.2g)", mask, n, x, buf[i], want, e/math.Abs(want))
				}
			}
			if buf[n] == buf[n] {
				t.Fatalf("mask %v n=%d: Softplus wrote past dst", mask, n)
			}
		}
		// the bits of Exp followed by the Go loop over float64 log1p, on a
		// length with a tail
		in := src[:len(src)-5]
		out, e := make([]float32, len(in)), make([]float32, len(in))
		for i, x := range in {
			e[i] = -float32(math.Abs(float64(x)))
		}
		Exp(e, e)
		Softplus(out, in, 0.625)
		for i, x := range in {
			if want := 0.625 * (max(x, 0) + log1p(e[i])); out[i] != want {
				t.Fatalf("mask %v: softplus(%v) = %v, the Go loop %v", mask, x, out[i], want)
			}
		}
		for _, n := range []int{1, 16, 19} {
			in := make([]float32, n)
			for i := range in {
				in[i] = float32(i) - 5
			}
			for _, c := range []struct {
				x    float32
				want float64
			}{{float32(math.NaN()), math.NaN()}, {float32(math.Inf(1)), math.Inf(1)}, {float32(math.Inf(-1)), 0}} {
				in[n-1] = c.x
				out := make([]float32, n)
				Softplus(out, in, 2)
				if got := float64(out[n-1]); !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
					t.Errorf("mask %v n=%d: softplus(%v) = %v, want %v", mask, n, c.x, got, c.want)
				}
			}
		}
		restore()
	}
}

// TestLog1p: within 0.51 ulp of log(1+y) on [0, 1], tiny y and 1 included.
func TestLog1p(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(y float32) {
		want := math.Log1p(float64(y))
		got := float64(log1p(y))
		if want == 0 {
			if got != 0 {
				t.Fatalf("log1p(0) = %g", got)
			}
			return
		}
		w32 := float32(want)
		ulp := float64(math.Nextafter32(w32, 2) - w32)
		if e := math.Abs(got-want) / ulp; e > worst || math.IsNaN(e) {
			worst, at = e, y
		}
	}
	for y := float32(0); y <= 1; y = math.Nextafter32(y, 2)*1.00003 + 0 {
		check(y)
		if y == 0 {
			y = math.SmallestNonzeroFloat32
			check(y)
		}
	}
	check(1)
	if !(worst <= 0.51) {
		t.Fatalf("log1p: %.3f ulp at y = %g", worst, at)
	}
}

// TestScale checks Scale and ScaleMul on every ISA path for the exact
// bits of the Go expressions (x·α; ((dst·α)·a)·b, the products rounded in
// that order), on lengths around the vector widths, with a guard cell
// after x and dst that must stay untouched.
func TestScale(t *testing.T) {
	for _, mask := range [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}} {
		restore := cpu.Disable(mask...)
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 129} {
			x, a, b := make([]float32, n+1), make([]float32, n+2), make([]float32, n+2)
			for i := range a {
				a[i] = float32(i%13)*0.731 - 4.1
				b[i] = 1 / (float32(i%5) + 1.3)
			}
			for i := range x {
				x[i] = float32(i%9)*1.37e-3 - 3.3e-3
			}
			x[n] = float32(math.NaN())
			const alpha = float32(0.7071068)
			s, m := slices.Clone(x), slices.Clone(x)
			Scale(alpha, s[:n])
			ScaleMul(m[:n], alpha, a, b)
			for i := 0; i < n; i++ {
				ws, wm := x[i]*alpha, x[i]*alpha*a[i]*b[i]
				if s[i] != ws || m[i] != wm {
					t.Fatalf("mask %v n=%d: [%d]: Scale %v, want %v; ScaleMul %v, want %v", mask, n, i, s[i], ws, m[i], wm)
				}
			}
			if s[n] == s[n] || m[n] == m[n] {
				t.Fatalf("mask %v n=%d: wrote past the end", mask, n)
			}
		}
		restore()
	}
}

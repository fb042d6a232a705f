// Package vmath holds vectorised elementwise math shared by the kernel
// families (exp for softmax, gates and decays), dispatched on the effective
// CPU features at call time.
package vmath

import "math"

// Exp writes exp(src[i]) into dst[i] (len(dst) ≥ len(src); dst may be
// src), within 2 ulp of math.Exp for src ∈ [−87.3, 88.3]. Outside that
// range it follows exp (overflow to +Inf, gradual underflow to 0, NaN to
// NaN): the AVX-512 kernel itself, the AVX2 and NEON kernels (which clamp)
// by redoing those elements with math.Exp.
func Exp(dst, src []float32) {
	dst = dst[:len(src)]
	done := expAsm(dst, src)
	for i := done; i < len(src); i++ {
		dst[i] = float32(math.Exp(float64(src[i])))
	}
}

// The activations' vector kernels (actAsm's modes).
const (
	actSigmoid = iota
	actSiLU
	actSiLUMul
)

// expChunk is how many exponentials the activation helpers compute at a
// time into a stack buffer.
const expChunk = 256

// Sigmoid writes σ(src[i]) = 1/(1+exp(−src[i])) into dst[i] (len(dst) ≥
// len(src); dst may be src). An element's result depends only on its value
// and on whether it lies in src's last len(src) mod 16 elements (done by
// math.Exp), so a caller that splits a row among threads at multiples of
// 16 gets the same bits.
func Sigmoid(dst, src []float32) {
	var e [expChunk]float32
	for lo := actAsm(actSigmoid, dst, src, nil); lo < len(src); lo += expChunk {
		s := src[lo:min(lo+expChunk, len(src))]
		d := dst[lo : lo+len(s)]
		t := e[:len(s)]
		for i, v := range s {
			t[i] = -v
		}
		Exp(t, t)
		for i := range d {
			d[i] = 1 / (1 + t[i])
		}
	}
}

// SiLU writes silu(src[i]) = src[i]·σ(src[i]) into dst[i] (dst may be
// src), with Sigmoid's exponentials.
func SiLU(dst, src []float32) {
	SiLUMul(dst, src, nil)
}

// SiLUMul writes silu(g[i])·u[i] into dst[i] (u nil: silu(g[i])); dst may
// alias g or u.
func SiLUMul(dst, g, u []float32) {
	var e [expChunk]float32
	mode := actSiLUMul
	if u == nil {
		mode = actSiLU
	}
	for lo := actAsm(mode, dst, g, u); lo < len(g); lo += expChunk {
		s := g[lo:min(lo+expChunk, len(g))]
		d := dst[lo : lo+len(s)]
		t := e[:len(s)]
		for i, v := range s {
			t[i] = -v
		}
		Exp(t, t)
		if u == nil {
			for i := range d {
				d[i] = s[i] / (1 + t[i])
			}
			continue
		}
		uu := u[lo : lo+len(s)]
		for i := range d {
			d[i] = s[i] / (1 + t[i]) * uu[i]
		}
	}
}

// Softplus writes scale·softplus(src[i]) = scale·log(1+exp(src[i])) into
// dst[i] (len(dst) ≥ len(src); dst may be src), as max(x, 0) +
// log1p(exp(−|x|)) with Exp's exponential and the float64 log1p below:
// the AVX-512 kernel does the bulk (a multiple of 16 elements) with the
// same operations, so the result has the bits of that Go loop on every
// path. NaN gives NaN, +Inf gives scale·(+Inf), −Inf gives 0.
func Softplus(dst, src []float32, scale float32) {
	dst = dst[:len(src)]
	var e [expChunk]float32
	for lo := softplusAsm(dst, src, scale); lo < len(src); lo += expChunk {
		s := src[lo:min(lo+expChunk, len(src))]
		d := dst[lo : lo+len(s)]
		t := e[:len(s)]
		for i, x := range s {
			t[i] = -float32(math.Abs(float64(x)))
		}
		Exp(t, t)
		for i, x := range s {
			d[i] = scale * (max(x, 0) + log1p(t[i]))
		}
	}
}

// log1p is log(1+y) for y ∈ [0, 1], within 0.51 ulp of f32 (tiny y
// included): 2·atanh(s) with s = y/(2+y) ∈ [0, 1/3], the series in s² to
// s¹⁶ in float64 (its remainder < 1e-11 relative). A third of math.Log's
// time per element; Softplus takes it (its vector kernel runs the same
// operations on float64 lanes; a build that fused them into FMAs, as
// GOAMD64=v3 may, would differ from it by an f32 ulp at most).
func log1p(y float32) float32 {
	s := float64(y) / (2 + float64(y))
	z := s * s
	p := 1 + z*(1.0/3+z*(1.0/5+z*(1.0/7+z*(1.0/9+z*(1.0/11+z*(1.0/13+z*(1.0/15+z*(1.0/17))))))))
	return float32(2 * s * p)
}

// clampedExp runs clampKernel, which clamps its inputs to [−87.3, 88.3]
// (AVX2, NEON), on the first len(src) rounded down to a multiple of width elements
// and returns that count. Elements outside the range (or NaN) get
// math.Exp instead; they are found before the kernel runs, so dst may
// alias src.
func clampedExp(dst, src []float32, width int) int {
	n := len(src) / width * width
	var tmp [expChunk]float32
	for lo := 0; lo < n; lo += expChunk {
		s := src[lo:min(lo+expChunk, n)]
		d := dst[lo : lo+len(s)]
		wild := false
		for _, x := range s {
			if !(x >= -87.3 && x <= 88.3) {
				wild = true
				break
			}
		}
		if !wild {
			clampKernel(d, s)
			continue
		}
		t := tmp[:len(s)]
		clampKernel(t, s)
		for i, x := range s {
			if !(x >= -87.3 && x <= 88.3) {
				t[i] = float32(math.Exp(float64(x)))
			}
		}
		copy(d, t)
	}
	return n
}

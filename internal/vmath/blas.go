package vmath

// Dot returns Σ a[i]·b[i] over len(a) in f32 (len(b) ≥ len(a)): vector
// partial sums on the bulk where the CPU has them, then four scalar
// partial sums on the rest. The result depends only on the inputs and the
// CPU's features.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	s, i := dotAsm(a, b)
	return s + dotGo(a[i:], b[i:])
}

func dotGo(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy computes y += alpha·x over len(y) (len(x) ≥ len(y)): fused
// multiply-adds on vectors for the bulk where the CPU has them, separate
// ones on the rest; an element's result depends only on the inputs, the
// CPU's features and whether it lies in the last len(y) mod 16 elements.
func Axpy(alpha float32, x, y []float32) {
	x = x[:len(y)]
	for i := axpyAsm(alpha, x, y); i < len(y); i++ {
		y[i] += alpha * x[i]
	}
}

// MulAdd computes dst[i] += a[i]·b[i] over len(dst) (len(a), len(b) ≥
// len(dst)), the product rounded before the sum as the Go expression
// does (not fused): the same bits on every path, vectors for the bulk
// where the CPU has them.
func MulAdd(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := mulAddAsm(dst, a, b); i < len(dst); i++ {
		dst[i] += a[i] * b[i]
	}
}

// Scale computes x[i] *= alpha, vectors for the bulk where the CPU has
// them: the same bits on every path.
func Scale(alpha float32, x []float32) {
	for i := scaleAsm(alpha, x); i < len(x); i++ {
		x[i] *= alpha
	}
}

// ScaleMul computes dst[i] = dst[i]·alpha·a[i]·b[i] over len(dst) (len(a),
// len(b) ≥ len(dst)), rounding after each product from the left, as the
// Go expression does: the same bits on every path.
func ScaleMul(dst []float32, alpha float32, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := scaleMulAsm(dst, alpha, a, b); i < len(dst); i++ {
		dst[i] = dst[i] * alpha * a[i] * b[i]
	}
}

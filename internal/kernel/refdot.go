package kernel

// Float64 dot products for the references. Each sum runs in index order
// in float64 (the same bits as a plain loop), Dot64x4 only shares the
// loads of w across four sums.

// Dot64 is Σ a[i]·b[i] in float64, in index order.
func Dot64(a, b []float32) float64 {
	var s float64
	b = b[:len(a)]
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return s
}

// Dot64x4 is Dot64(w, x0), …, Dot64(w, x3).
func Dot64x4(w, x0, x1, x2, x3 []float32) (s0, s1, s2, s3 float64) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for i, v := range w {
		wv := float64(v)
		s0 += float64(x0[i]) * wv
		s1 += float64(x1[i]) * wv
		s2 += float64(x2[i]) * wv
		s3 += float64(x3[i]) * wv
	}
	return
}

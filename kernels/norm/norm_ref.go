package norm

import "math"

// rmsRowRef is the reference: x (n,) · w (n,) -> dst (n,), float64 throughout.
func rmsRowRef(dst, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
	for i, v := range x {
		dst[i] = float32(float64(v) * scale * float64(w[i]))
	}
}

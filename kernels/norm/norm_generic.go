package norm

import (
	"math/rand/v2"
)

// rmsRowGeneric: x (n,) · w (n,) -> dst (n,) in f32 with four partial sums.
func rmsRowGeneric(dst, x, w []float32, eps float32) {
	n := len(x)
	dst, w = dst[:n], w[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += x[i] * x[i]
		s1 += x[i+1] * x[i+1]
		s2 += x[i+2] * x[i+2]
		s3 += x[i+3] * x[i+3]
	}
	for ; i < n; i++ {
		s0 += x[i] * x[i]
	}
	scale := rmsScale((s0+s1)+(s2+s3), n, eps)
	for i := range x {
		dst[i] = x[i] * scale * w[i]
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5bd1e995)) }

package gemm

import (
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/quant"
)

// quantizeRow quantizes one activation row x (K values) to int8 with one
// scale per group of 32 (s and sums hold Kp/32 entries, q Kp):
//
//	s[g] = max|x_g|/127, q = round(x·(127/max|x_g|)) (zero where max|x_g| = 0)
//
// padded with zeros to len(q) = Kp, and the sums of q per group (for the
// weights' zero points). A scale per group rather than per row (as ggml's
// Q8_0 activations) keeps one large activation from coarsening the grid of
// every other group of its row; on the golden tiny model's Gaussian
// activations it already cuts the error int8 activations add to the Q8
// logits by about 30%. Variants with vector code replace quantizeRowFn.
func quantizeRow(q []int8, s []float32, sums []int32, x []float32) { quantizeRowFn(q, s, sums, x) }

var quantizeRowFn = quantizeRowGeneric

func quantizeRowGeneric(q []int8, s []float32, sums []int32, x []float32) {
	for g := range sums {
		lo := min(g*quant.GroupK, len(x))
		hi := min(lo+quant.GroupK, len(x))
		quantizeGroup(q[g*quant.GroupK:(g+1)*quant.GroupK], &s[g], &sums[g], x[lo:hi])
	}
}

// quantizeGroup quantizes one group: x holds ≤ 32 values, q 32 (the rest
// zero).
func quantizeGroup(q []int8, s *float32, sum *int32, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	*s = amax / 127
	inv := float32(0)
	if amax > 0 {
		inv = 127 / amax
	}
	var t int32
	for i, v := range x {
		q[i] = int8(math.RoundToEven(float64(v * inv)))
		t += int32(q[i])
	}
	clear(q[len(x):])
	*sum = t
}

// toBF16Row rounds x to BF16 (nearest even) into b, zero-padded.
func toBF16Row(b []uint16, x []float32) {
	for i, v := range x {
		b[i] = half.F32ToBF16(v)
	}
	clear(b[len(x):])
}

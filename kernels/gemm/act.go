package gemm

import (
	"fmt"
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
// logits by about 30%; one scale per 256 (ggml's Q8_K, which would spare
// the Q4 kernels' per-group activation-scale multiply, ~9% of the dense q4
// GEMMs) fails the golden tiny model's q4 and q4k accuracy budgets
// (SetActBlock; model's TestAccuracy keeps that check). Variants with
// vector code replace quantizeRowFn.
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
	quantizeGroupMax(q, s, sum, x, absMax(x))
}

func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	return amax
}

// quantizeGroupMax is quantizeGroup on the grid of amax (≥ max|x|).
func quantizeGroupMax(q []int8, s *float32, sum *int32, x []float32, amax float32) {
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

// SetActBlock makes the int8 activations share one scale per block of n
// values (n a multiple of 32: 256 is ggml's Q8_K grid; the group sums stay
// per 32, each group keeping its block's scale), in place of one per group
// of 32, and returns what restores the product's grid. It is a test
// instrument (a coarser grid is a fast but less accurate candidate the
// accuracy budgets must reject); it must not be called while a gemm call
// runs.
func SetActBlock(n int) (restore func()) {
	if n < quant.GroupK || n%quant.GroupK != 0 {
		panic(fmt.Sprintf("gemm: activation block %d is not a positive multiple of %d", n, quant.GroupK))
	}
	prev := quantizeRowFn
	quantizeRowFn = func(q []int8, s []float32, sums []int32, x []float32) {
		per := n / quant.GroupK
		for b := 0; b < len(sums); b += per {
			amax := absMax(x[min(b*quant.GroupK, len(x)):min((b+per)*quant.GroupK, len(x))])
			for g := b; g < min(b+per, len(sums)); g++ {
				lo := min(g*quant.GroupK, len(x))
				hi := min(lo+quant.GroupK, len(x))
				quantizeGroupMax(q[g*quant.GroupK:(g+1)*quant.GroupK], &s[g], &sums[g], x[lo:hi], amax)
			}
		}
	}
	return func() { quantizeRowFn = prev }
}

// toBF16Row rounds x to BF16 (nearest even) into b, zero-padded.
func toBF16Row(b []uint16, x []float32) {
	for i, v := range x {
		b[i] = half.F32ToBF16(v)
	}
	clear(b[len(x):])
}

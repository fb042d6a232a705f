package gemm

import (
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/quant"
)

// quantizeRow quantizes one activation row x (K values) to int8 with one
// scale: s = max|x|/127, q = round(x/s) (zero where s = 0), padded with
// zeros to len(q) = Kp, and the sums of q per group of 32 (for the weights'
// zero points). Variants with vector code replace quantizeRowFn.
func quantizeRow(q []int8, s *float32, sums []int32, x []float32) { quantizeRowFn(q, s, sums, x) }

var quantizeRowFn = quantizeRowGeneric

func quantizeRowGeneric(q []int8, s *float32, sums []int32, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	*s = amax / 127
	inv := float32(0)
	if amax > 0 {
		inv = 127 / amax
	}
	for i, v := range x {
		q[i] = int8(math.RoundToEven(float64(v * inv)))
	}
	clear(q[len(x):])
	for g := range sums {
		var t int32
		for _, v := range q[g*quant.GroupK : (g+1)*quant.GroupK] {
			t += int32(v)
		}
		sums[g] = t
	}
}

// toBF16Row rounds x to BF16 (nearest even) into b, zero-padded.
func toBF16Row(b []uint16, x []float32) {
	for i, v := range x {
		b[i] = half.F32ToBF16(v)
	}
	clear(b[len(x):])
}

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

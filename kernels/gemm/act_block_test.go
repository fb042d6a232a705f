package gemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/quant"
)

// TestSetActBlock: with a block of 256 every group of a block carries the
// block's scale (max|x| over the block / 127), each value rounds to within
// half a step, the group sums are those of q and the padding is zero; the
// restore gives back the product's grid bit for bit; bad sizes panic.
func TestSetActBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{2304, 2311, 70, 31} {
		x := make([]float32, k)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp(2*r.NormFloat64()))
		}
		kp := (k + quant.GroupK - 1) / quant.GroupK * quant.GroupK
		ng := kp / quant.GroupK
		q, s, sums := make([]int8, kp), make([]float32, ng), make([]int32, ng)
		want := func() ([]int8, []float32, []int32) {
			q, s, sums := make([]int8, kp), make([]float32, ng), make([]int32, ng)
			quantizeRowGeneric(q, s, sums, x)
			return q, s, sums
		}
		restore := SetActBlock(256)
		quantizeRow(q, s, sums, x)
		restore()
		for g := 0; g < ng; g++ {
			b0 := g / 8 * 256
			amax := absMax(x[min(b0, k):min(b0+256, k)])
			if s[g] != amax/127 {
				t.Fatalf("k=%d group %d: scale %g, want the block's %g", k, g, s[g], amax/127)
			}
			var sum int32
			for i := g * quant.GroupK; i < (g+1)*quant.GroupK; i++ {
				sum += int32(q[i])
				if i >= k {
					if q[i] != 0 {
						t.Fatalf("k=%d: padding q[%d] = %d", k, i, q[i])
					}
					continue
				}
				if d := math.Abs(float64(q[i])*float64(s[g]) - float64(x[i])); d > 0.5001*float64(s[g]) {
					t.Fatalf("k=%d: x[%d] = %g quantized to %d·%g, off by %g", k, i, x[i], q[i], s[g], d)
				}
			}
			if sum != sums[g] {
				t.Fatalf("k=%d group %d: sum %d, want %d", k, g, sums[g], sum)
			}
		}
		quantizeRow(q, s, sums, x)
		wq, ws, wsum := want()
		if !slices.Equal(q, wq) || !slices.Equal(s, ws) || !slices.Equal(sums, wsum) {
			t.Fatalf("k=%d: after the restore quantizeRow differs from the per-group grid", k)
		}
	}
	for _, n := range []int{0, 31, 48, -32} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetActBlock(%d) did not panic", n)
				}
			}()
			SetActBlock(n)
		}()
	}
}

package mla

import (
	"fmt"
	"math"
	"testing"
)

// TestCtxBucket: for profiles tuned at power-of-two contexts (ktune's
// 4096, 32768, 131072, and a denser set), the entry nearest in log2 to
// ctxBucket(n) is the one nearest to n itself, for every n up to 2^18 but
// the exact midpoints (ties the profile breaks by speed). Rounding n to
// the nearest power of two, the first form, is shown to fail it.
func TestCtxBucket(t *testing.T) {
	nearest := func(tuned []int, n int) int {
		best, bd := -1, math.Inf(1)
		for i, c := range tuned {
			d := math.Abs(math.Log2(float64(c) / float64(n)))
			if d < bd-1e-9 {
				best, bd = i, d
			} else if math.Abs(d-bd) <= 1e-9 {
				best = -1 // a tie
			}
		}
		return best
	}
	pow2 := func(n int) int { return 1 << int(math.Round(math.Log2(float64(n)))) }
	for _, tuned := range [][]int{{4096, 32768, 131072}, {1024, 2048, 8192, 65536}, {512, 4096}} {
		bad := 0
		for n := 1; n <= 1<<18; n++ {
			want := nearest(tuned, n)
			if want < 0 {
				continue
			}
			if got := nearest(tuned, ctxBucket(n)); got != want {
				pick := "a tie"
				if got >= 0 {
					pick = fmt.Sprint(tuned[got])
				}
				t.Fatalf("tuned %v, context %d: bucket %d picks %s, the exact length %d", tuned, n, ctxBucket(n), pick, tuned[want])
			}
			if nearest(tuned, pow2(n)) != want {
				bad++
			}
		}
		if tuned[0] == 4096 && bad == 0 {
			t.Errorf("tuned %v: rounding to a power of two never picked another entry; the check cannot fail", tuned)
		}
	}
	for n := 1; n < 1<<20; n++ {
		if ctxBucket(n) < ctxBucket(max(n-1, 1)) {
			t.Fatalf("ctxBucket(%d) = %d < ctxBucket(%d) = %d", n, ctxBucket(n), n-1, ctxBucket(n-1))
		}
	}
}

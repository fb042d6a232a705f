package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQuantize measures conversion speed (MB/s of f32 input, one
// goroutine) of max-abs (Quantize) and the search (QuantizeWeighted) per
// format on a 256×2048 Gaussian matrix.
func BenchmarkQuantize(b *testing.B) {
	const n, k = 256, 2048
	w := gaussian(rand.New(rand.NewPCG(1, 1)), n*k)
	for _, f := range qeFormats {
		for _, rule := range []string{"maxabs", "search"} {
			b.Run(fmt.Sprintf("dtype=%v/rule=%s/n=%d/k=%d", f, rule, n, k), func(b *testing.B) {
				b.SetBytes(int64(4 * n * k))
				for b.Loop() {
					var err error
					if rule == "search" {
						_, err = QuantizeWeighted(f.dt, w, n, k, f.hasMin, nil)
					} else {
						_, err = Quantize(f.dt, w, n, k, f.hasMin)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
)

// BenchmarkFromGGML measures the load-time cost of FromGGML per type and
// mode on a 2048×2048 matrix; MB/s counts the ggml bytes read.
func BenchmarkFromGGML(b *testing.B) {
	const n, k = 2048, 2048
	r := rand.New(rand.NewPCG(21, 9))
	for _, ty := range ggmlAllTypes {
		raw := randomGGML(r, ty, n, k)
		for _, mode := range []GGMLRepack{RepackExact, RepackFast} {
			b.Run(fmt.Sprintf("type=%s/mode=%s/n=%d/k=%d", ty, mode, n, k), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, _, err := FromGGML(ty, raw, n, k, mode); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDequantizeGGML: the same for DequantizeGGML.
func BenchmarkDequantizeGGML(b *testing.B) {
	const n, k = 2048, 2048
	r := rand.New(rand.NewPCG(21, 10))
	dst := make([]float32, n*k)
	for _, ty := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		raw := randomGGML(r, ty, n, k)
		b.Run(fmt.Sprintf("type=%s/n=%d/k=%d", ty, n, k), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if err := DequantizeGGML(ty, raw, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

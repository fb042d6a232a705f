package vmath

import "testing"

func BenchmarkSiLUMul(b *testing.B) {
	for _, n := range []int{16, 1024} {
		g, u, d := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range g {
			g[i] = float32(i%9) - 4
			u[i] = 1
		}
		b.Run(map[int]string{16: "16", 1024: "1024"}[n], func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				SiLUMul(d, g, u)
			}
		})
	}
}

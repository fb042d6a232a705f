//go:build amd64 && gc && !purego

package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// TestAMXExact drives amx_int8 through its AMX path (M ≥ 16) with integer
// data, so the results are exact: several 16-row tiles plus a VNNI
// remainder, one group and odd group counts, K not a multiple of 32 or 64,
// partial last panels, several panels and L2 blocks, acc, 1 and 2
// threads, and the extreme values (−128 activations × 255 weights) where
// the sums stay below 2²⁴.
func TestAMXExact(t *testing.T) {
	var v *kernel.Variant
	for _, c := range kernel.Variants(OpGEMM) {
		if c.Name == "amx_int8" {
			v = c
		}
	}
	if v == nil || !v.Available() {
		req, err := kerneltest.Required()
		if err != nil {
			t.Fatal(err)
		}
		if v != nil && req.Intersect(v.Requires) == v.Requires {
			t.Fatalf("amx_int8 unavailable but KTUNE_REQUIRE lists %s", v.Requires)
		}
		t.Skip("amx_int8 not available on this machine")
	}
	im := implOf(v)
	r := rand.New(rand.NewPCG(21, 22))
	shapes := [][3]int{ // m, n, k
		{16, 16, 32}, {16, 40, 64}, {17, 33, 96}, {31, 16, 33}, {32, 48, 160},
		{33, 1, 1}, {48, 100, 320}, {50, 17, 2048}, {64, 130, 1000},
	}
	if testing.Short() {
		shapes = shapes[:8]
	}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, extreme := range []int8{0, -128} {
			if extreme != 0 && k > 320 {
				continue // |y| past 2²⁴: f32 sums no longer exact
			}
			mx := newIntMatrix(t, r, kernel.Q8, n, k, false, extreme != 0)
			kp := mx.w.Kp
			g := kp / quant.GroupK
			xq := make([]int8, m*kp)
			xi := make([][]int32, m)
			xsum := make([]int32, m*g)
			for i := 0; i < m; i++ {
				xi[i] = make([]int32, kp)
				for j := 0; j < k; j++ {
					x := int8(r.IntN(256) - 128)
					if extreme != 0 {
						x = extreme
					}
					if i == 3 {
						x = 0
					}
					xq[i*kp+j], xi[i][j] = x, int32(x)
					xsum[i*g+j/quant.GroupK] += int32(x)
				}
			}
			xs := make([]float32, m*g)
			for i := range xs {
				xs[i] = float32(1 + r.IntN(2))
			}
			for _, cfg := range configs(v) {
				for _, acc := range []bool{false, true} {
					y := make([]float32, m*n)
					for i := range y {
						y[i] = float32(i % 7)
					}
					a := &args{m: m, n: n, k: k, kp: kp, w: mx.w, y: y, ldy: n, acc: acc,
						xq: xq, xs: xs, xsum: xsum, ws: &workspace{}}
					im.run(a, cfg)
					for i := 0; i < m; i++ {
						for c := 0; c < n; c++ {
							want := mx.dotScaled(c, xi[i], xs[i*g:(i+1)*g])
							if acc {
								want += float64((i*n + c) % 7)
							}
							if got := float64(y[i*n+c]); got != want {
								t.Fatalf("m=%d n=%d k=%d x=%d %v acc=%v: y[%d,%d] = %v, want %v",
									m, n, k, extreme, cfg, acc, i, c, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkAMXKernel times the bare kernels on L2-resident data: 16 rows ×
// 8 panels × K = 2304 (amx) against 12 rows (avx512_vnni), in GOP/s.
func BenchmarkAMXKernel(b *testing.B) {
	const np, k = 8, 2304
	ng := k / quant.GroupK
	w := make([]byte, np*ng*544)
	for i := range w {
		w[i] = byte(i*7 + i>>6)
	}
	for i := 0; i < np*ng; i++ { // f16 scales 1.0
		for j := 0; j < 16; j++ {
			w[i*544+512+2*j], w[i*544+512+2*j+1] = 0x00, 0x3c
		}
	}
	xq := make([]int8, 16*k)
	for i := range xq {
		xq[i] = int8(i*13 + i>>5)
	}
	aux := make([]int32, 16*ng)
	xs := make([]float32, 16*ng)
	for i := range xs {
		xs[i] = 1
	}
	y := make([]float32, 16*16*np)
	var tmp [1024]int32
	b.Run("amx", func(b *testing.B) {
		for b.Loop() {
			amxQ8_16x16(&w[0], np, ng, &xq[0], k, 32, &xs[0], 64, &y[0], 16*np, false, &tmp[0])
		}
		b.ReportMetric(float64(2*16*16*np*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
	})
	b.Run("vnni12", func(b *testing.B) {
		for b.Loop() {
			vnniQ8_12x16(&w[0], np, ng, &xq[0], k, &aux[0], 64, &xs[0], &y[0], 16*np, false)
		}
		b.ReportMetric(float64(2*12*16*np*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
	})
}

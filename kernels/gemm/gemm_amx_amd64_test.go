//go:build amd64 && gc && !purego

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// TestAMXExact drives amx_int8 through its AMX path (M ≥ 16; Q8, and Q4
// unpacked per block; Q4 with mins goes to the VNNI kernels) with integer
// data, so the results are exact: several 16-row tiles plus a VNNI
// remainder, one group and odd group counts, K not a multiple of 32 or 64,
// partial last panels, several panels and L2 blocks, acc, 1 and 2
// threads, and the extreme values (−128 activations × 255 weights) where
// the sums stay below 2²⁴.
func TestAMXExact(t *testing.T) {
	v := kerneltest.Variant(t, OpGEMM+"/amx_int8")
	im := implOf(v)
	r := rand.New(rand.NewPCG(21, 22))
	shapes := [][3]int{ // m, n, k
		{16, 16, 32}, {16, 40, 64}, {17, 33, 96}, {31, 16, 33}, {32, 48, 160},
		{33, 1, 1}, {48, 100, 320}, {50, 17, 2048}, {64, 130, 1000},
	}
	if testing.Short() {
		shapes = shapes[:8]
	}
	type format struct {
		dt     kernel.DType
		hasMin bool
	}
	for _, f := range []format{{kernel.Q8, false}, {kernel.Q4, false}, {kernel.Q4, true}} {
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, extreme := range []int8{0, -128} {
				if extreme != 0 && k > 320 {
					continue // |y| past 2²⁴: f32 sums no longer exact
				}
				mx := newIntMatrix(t, r, f.dt, n, k, f.hasMin, extreme != 0)
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
				checkPanelsExact(t, im, v, mx, m, xq, xi, xs, xsum, fmt.Sprintf("%s min=%v x=%d", f.dt, f.hasMin, extreme))
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

// TestAMXMatchesVNNI: per group both kernels form the same exact int32
// (Σxq·u − 128·Σxq) and then apply the same f32 operations in the same
// order, so amx_int8 must equal avx512_vnni bit for bit, through Run and
// GateUp, on random (non-integer) data.
func TestAMXMatchesVNNI(t *testing.T) {
	amx := kerneltest.Variant(t, OpGEMM+"/amx_int8")
	vnni := kerneltest.Variant(t, OpGEMM+"/avx512_vnni")
	gu := map[string]*kernel.Variant{}
	for _, c := range kernel.Variants(OpGateUp) {
		gu[c.Name] = c
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, f := range []struct {
		dt     kernel.DType
		hasMin bool
	}{{kernel.Q8, false}, {kernel.Q4, false}, {kernel.Q4, true}} {
		for _, sh := range [][3]int{{16, 48, 64}, {23, 40, 96}, {40, 33, 320}, {70, 64, 2048}} {
			m, n, k := sh[0], sh[1], sh[2]
			wf := make([]float32, n*k)
			wu := make([]float32, n*k)
			for i := range wf {
				wf[i], wu[i] = float32(r.NormFloat64()*0.02), float32(r.NormFloat64()*0.02)
			}
			w, err := quant.Quantize(f.dt, wf, n, k, f.hasMin)
			if err != nil {
				t.Fatal(err)
			}
			w2, err := quant.Quantize(f.dt, wu, n, k, f.hasMin)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, m*k)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			for threads := 1; threads <= 2; threads++ {
				for _, acc := range []bool{false, true} {
					ya, yv := make([]float32, m*n), make([]float32, m*n)
					for i := range ya {
						ya[i] = float32(i % 5)
						yv[i] = ya[i]
					}
					Run(kernel.Choice{Variant: amx, Config: amx.DefaultConfig(nil, threads)}, ya, x, w, m, acc)
					Run(kernel.Choice{Variant: vnni, Config: vnni.DefaultConfig(nil, threads)}, yv, x, w, m, acc)
					for i := range ya {
						if ya[i] != yv[i] {
							t.Fatalf("%s min=%v m=%d n=%d k=%d threads=%d acc=%v: y[%d] = %v (amx), %v (vnni)", f.dt, f.hasMin, m, n, k, threads, acc, i, ya[i], yv[i])
						}
					}
				}
				ha, hv := make([]float32, m*n), make([]float32, m*n)
				GateUp(kernel.Choice{Variant: gu["amx_int8"], Config: gu["amx_int8"].DefaultConfig(nil, threads)}, ha, x, w, w2, m)
				GateUp(kernel.Choice{Variant: gu["avx512_vnni"], Config: gu["avx512_vnni"].DefaultConfig(nil, threads)}, hv, x, w, w2, m)
				for i := range ha {
					if ha[i] != hv[i] {
						t.Fatalf("gateup %s min=%v m=%d n=%d k=%d threads=%d: h[%d] = %v (amx), %v (vnni)", f.dt, f.hasMin, m, n, k, threads, i, ha[i], hv[i])
					}
				}
			}
		}
	}
}

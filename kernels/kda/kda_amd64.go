//go:build amd64 && gc && !purego

// amd64 registration of the generated KDA recurrent-step kernels.
package kda

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/vmath"
)

func init() {
	p512 := kernel.Param{Name: "strip", Doc: "value columns per L1-resident strip of the state", Values: []int{16, 32, 64}, Default: 32}
	p2 := kernel.Param{Name: "strip", Doc: "value columns per L1-resident strip of the state", Values: []int{8, 16, 32}, Default: 16}
	avx512 := recurrentAsm(map[int]stripsFn{16: kdaStripsAVX512_16, 32: kdaStripsAVX512_32, 64: kdaStripsAVX512_64})
	avx2 := recurrentAsm(map[int]stripsFn{8: kdaStripsAVX2_8, 16: kdaStripsAVX2_16, 32: kdaStripsAVX2_32})
	vk := []func(s *float32, nrows int, alpha, kk, qs, v *float32, beta float32, o *float32){kdaRowsVKAVX512_16, kdaRowsVKAVX512_32,
		kdaRowsVKAVX512_48, kdaRowsVKAVX512_64, kdaRowsVKAVX512_80, kdaRowsVKAVX512_96, kdaRowsVKAVX512_112, kdaRowsVKAVX512_128}
	avx512kv := avx512
	avx512 = func(o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, prm kernel.Values, scratch *[]float32) {
		if prm["layout"] != LayoutVK {
			avx512kv(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, prm, scratch)
			return
		}
		if K%16 != 0 || K > 16*len(vk) {
			recurrentVKGeneric(o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch)
			return
		}
		recurrentVKAVX512(vk[K/16-1], o, state, q, k, v, g, beta, T, K, V, sq, sv, sb, scale, scratch)
	}
	for _, op := range []string{OpDecode, OpPrefill} {
		register(op, kernel.Variant{Name: "avx512", Doc: "generated AVX-512 recurrence over L1-resident value strips, or value-major rows", Priority: 30,
			Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512VL), Threaded: true, Params: []kernel.Param{p512, layoutParam}, Check: checkLayout}, avx512)
		register(op, kernel.Variant{Name: "avx2", Doc: "generated AVX2+FMA recurrence over L1-resident value strips", Priority: 20,
			Requires: cpu.NewSet(cpu.AVX2, cpu.FMA), Threaded: true, Params: []kernel.Param{p2}}, avx2)
	}
}

// recurrentVKAVX512 is recurrentVKGeneric with the rows in assembly.
func recurrentVKAVX512(fn func(s *float32, nrows int, alpha, kk, qs, v *float32, beta float32, o *float32),
	o, state, q, k, v, g, beta []float32, T, K, V, sq, sv, sb int, scale float32, scratch *[]float32) {
	buf := grow(scratch, 2*K)
	alpha, qs := buf[:K], buf[K:]
	_ = state[K*V-1]
	for t := 0; t < T; t++ {
		qt, kt, gt := q[t*sq:t*sq+K], k[t*sq:t*sq+K], g[t*sq:t*sq+K]
		vt, ot := v[t*sv:t*sv+V], o[t*sv:t*sv+V]
		vmath.Exp(alpha, gt)
		for i := range qs {
			qs[i] = scale * qt[i]
		}
		fn(&state[0], V, &alpha[0], &kt[0], &qs[0], &vt[0], beta[t*sb], &ot[0])
	}
}

package gemm

import (
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// setQ6 stores u (0…63) at row i, group element j of a Q6 record (the
// layout of quant/q6.go; q6At reads it back).
func setQ6(rec []byte, i, j, u int) {
	b := 4*i + j%4
	if q := j / 4; q < 6 {
		rec[q*quant.LineBytes+b] = rec[q*quant.LineBytes+b]&0xc0 | byte(u)
		return
	}
	for t := 0; t < 3; t++ {
		off := (3*(j/4-6)+t)*quant.LineBytes + b
		rec[off] = rec[off]&0x3f | byte(u>>uint(2*t))<<6
	}
}

// TestQ6Shapes checks every Q6 candidate of gemm.gemv and gemm.gemm with
// the dot-product error model (as FuzzGEMM does) at awkward shapes: M
// across the row tiles, N across panels, K across groups.
func TestQ6Shapes(t *testing.T) {
	seed := uint64(1)
	for _, m := range []int{1, 2, 3, 4, 5, 8, 11, 12, 13, 25} {
		for _, nk := range [][2]int{{1, 1}, {15, 31}, {16, 32}, {17, 33}, {40, 95}, {63, 257}, {64, 64}} {
			s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
			for _, op := range []string{OpGEMV, OpGEMM} {
				fuzzOne(t, op, kernel.Q6, s, seed)
			}
			seed++
		}
	}
}

// BenchmarkQ6Decode compares decode GEMV (m = 1) on Q6, Q8 and Q4 weights
// streamed from DRAM, beside the read ceiling, at the shapes of
// BenchmarkQ3Decode (the experts' 1024×2304 and 2304×1024, a 32768×2304
// head slice). GB/s counts the packed weights; µs/op is the time per call.
//
//	KTUNE_BENCH_VARIANTS=avx512_vnni go test ./kernels/gemm -run '^$' -bench Q6Decode -count 5
func BenchmarkQ6Decode(b *testing.B) { benchDecode(b, kernel.Q6, kernel.Q8, kernel.Q4) }

// TestFastRepack: quant.FastQ6 (GGUF fast mode's Q6_K → Q6),
// quant.FastQ5 (Q5_0 → Q5 rather than Q8) and quant.FastK (Q4_K → Q4K,
// Q5_K → Q5K) hold exactly when a SIMD variant
// serves that format's GEMV here (amd64: avx512_vnni, avx_vnni, avx2_int8,
// for Q6 also avx512 and avx2; arm64: neon_dotprod, sve_dotprod), and
// follow the ISA masking.
func TestFastRepack(t *testing.T) {
	int8SIMD := []string{"avx512_vnni", "avx_vnni", "avx2_int8", "neon_dotprod", "sve_dotprod"}
	for _, c := range []struct {
		dt   kernel.DType
		fast func() bool
		simd []string
		off  []cpu.Feature // masking these leaves no SIMD variant of dt
	}{
		{kernel.Q6, quant.FastQ6, append(slices.Clone(int8SIMD), "avx512", "avx2"), []cpu.Feature{cpu.AVX512VNNI, cpu.AVX512F, cpu.AVX2, cpu.ASIMDDP, cpu.SVE}},
		{kernel.Q5, quant.FastQ5, int8SIMD, []cpu.Feature{cpu.AVX512VNNI, cpu.AVX2, cpu.ASIMDDP, cpu.SVE}},
		{kernel.Q4K, func() bool { return quant.FastK(kernel.Q4K) }, int8SIMD, []cpu.Feature{cpu.AVX512VNNI, cpu.AVX2, cpu.ASIMDDP, cpu.SVE}},
		{kernel.Q5K, func() bool { return quant.FastK(kernel.Q5K) }, int8SIMD, []cpu.Feature{cpu.AVX512VNNI, cpu.AVX2, cpu.ASIMDDP, cpu.SVE}},
	} {
		if c.fast == nil {
			t.Fatalf("kernels/gemm did not set quant's fast-repack check of %s", c.dt)
		}
		simd := false
		for _, v := range kernel.Candidates(OpGEMV, c.dt, nil) {
			simd = simd || slices.Contains(c.simd, v.Name)
		}
		if got := c.fast(); got != simd {
			t.Errorf("%s: fast repack %v, a SIMD variant serving it: %v", c.dt, got, simd)
		}
		restore := cpu.Disable(c.off...)
		if c.fast() {
			t.Errorf("%s: fast repack with %v disabled", c.dt, c.off)
		}
		restore()
	}
}

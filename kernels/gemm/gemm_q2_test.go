package gemm

import (
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// setQ2 stores u (0…3) at row i, group element j of a Q2 record (the
// layout of quant/q2.go; q2At reads it back).
func setQ2(rec []byte, i, j, u int) {
	off, sh := (j/16)*quant.LineBytes+4*i+j%4, uint(2*(j%16/4))
	rec[off] = rec[off]&^(3<<sh) | byte(u)<<sh
}

// TestQ2Shapes checks every Q2 candidate of gemm.gemv and gemm.gemm
// (avx512_vnni, avx_vnni, avx2_int8 where the CPU has them, and the
// generic ones) with the dot-product error model (as FuzzGEMM does) at
// awkward shapes — M 1…13 and 25 across the row tiles (4 for the ymm
// kernels, 12 for the zmm ones), N across panels, K across groups — on
// 1, 2, 3 and 7 threads. Under an emulator in -short mode (CI's qemu
// stage) each case runs at one thread count (in turn) and the 200×1000
// shape only at M ≤ 2: the arm64 kernels' checks there are
// TestQ2ShapesARM64 and TestInt8PanelsExact.
func TestQ2Shapes(t *testing.T) {
	seed := uint64(1)
	emulated := testing.Short() && os.Getenv("KTUNE_TEST_EXEC") != ""
	for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 25} {
		for _, nk := range [][2]int{{1, 1}, {15, 31}, {16, 32}, {17, 33}, {40, 95}, {63, 257}, {64, 64}, {200, 1000}} {
			s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
			if !sampled(int(seed)) || emulated && nk[1] == 1000 && m > 2 {
				seed++
				continue
			}
			threadCounts := shapeThreads(seed)
			for _, op := range []string{OpGEMV, OpGEMM} {
				for _, v := range kernel.Candidates(op, kernel.Q2, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
					if emulatedPortable(v) {
						continue
					}
					for _, threads := range threadCounts {
						p, want := sharedProblem(t, op, s, kernel.Q2, seed)
						cfg := v.DefaultConfig(s, threads)
						got, err := kernel.RunOutput(v, p, cfg)
						if err != nil {
							t.Fatal(err)
						}
						if err := dotCheck(p, v.Class, got, want); err != nil {
							t.Errorf("%s at %s seed=%d threads=%d %v: %v", v.ID(), s, seed, threads, cfg.Params, err)
						}
					}
				}
			}
			seed++
		}
	}
}

// BenchmarkQ2Decode compares decode GEMV (m = 1) on Q2, Q3 and Q4 weights
// streamed from DRAM, beside the read ceiling, at the experts' shapes
// (gate/up 1024×2304, down 2304×1024) and a 32768×2304 head slice (see
// BenchmarkQ3Decode). GB/s counts the packed weights.
//
//	go test ./kernels/gemm -run '^$' -bench Q2Decode -count 5
func BenchmarkQ2Decode(b *testing.B) { benchDecode(b, kernel.Q2, kernel.Q3, kernel.Q4) }

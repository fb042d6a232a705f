package gemm

import (
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// setQ5 stores u (0…31) at row i, group element j of a Q5 record (the
// layout of quant/q5.go; q5At reads it back): the low four bits in Q4's
// nibble, the fifth at bit j/4 of line 4.
func setQ5(rec []byte, i, j, u int) {
	off, sh := (j/8)*quant.LineBytes+4*i+j%4, uint(4*(j%8/4))
	rec[off] = rec[off]&^(15<<sh) | byte(u&15)<<sh
	off, sh = 4*quant.LineBytes+4*i+j%4, uint(j/4)
	rec[off] = rec[off]&^(1<<sh) | byte(u>>4&1)<<sh
}

// TestQ5Shapes checks every Q5 candidate of gemm.gemv, gemm.gemm and
// gemm.gateup (the SIMD int8 ones where the CPU has them, and the generic
// ones, which the f32 class runs) against the reference — the
// dot-product error model as FuzzGEMM uses it, gateup the op's tolerance —
// at awkward shapes: M 1…13 and 25 across the row tiles (4 for the ymm
// kernels, 12 for the zmm ones), N across panels, K across groups, on 1,
// 2, 3 and 7 threads, each non-grain parameter (mr, nb) cycled through
// its values. Under an emulator in -short mode (CI's qemu stage) each
// case runs at one thread count (in turn) and the 200×1000 shape only at
// M ≤ 2: the arm64 kernels' checks there are TestQ5ShapesARM64 and
// TestInt8PanelsExact.
func TestQ5Shapes(t *testing.T) {
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
			for _, op := range allOps {
				for _, v := range kernel.Candidates(op, kernel.Q5, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
					if emulatedPortable(v) {
						continue
					}
					for _, threads := range threadCounts {
						checkShapeCycled(t, op, v.Name, kernel.Q5, s, seed, threads, int(seed)+threads)
					}
				}
			}
			seed++
		}
	}
}

// BenchmarkQ5Decode compares decode GEMV (m = 1) on Q5, Q6 and Q4 weights
// streamed from DRAM, beside the read ceiling, at the experts' shapes
// (gate/up 1024×2304, down 2304×1024) and a 32768×2304 head slice (see
// BenchmarkQ3Decode). GB/s counts the packed weights.
//
//	go test ./kernels/gemm -run '^$' -bench Q5Decode -count 3
func BenchmarkQ5Decode(b *testing.B) { benchDecode(b, kernel.Q5, kernel.Q6, kernel.Q4) }

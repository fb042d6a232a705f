package gemm

import (
	"os"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

var kDTypes = []kernel.DType{kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}

// TestKShapes checks every candidate of gemm.gemv, gemm.gemm and
// gemm.gateup for the K formats (quant/kquant.go) against the reference,
// as TestQ5Shapes does for Q5, at shapes whose K crosses super-blocks of
// 256 (1, 31, 257, 300, 513, 1000) and whose N crosses panels, on 1, 2, 3
// and 7 threads, each non-grain parameter cycled. Under an emulator in
// -short mode each case runs at one thread count and K = 1000 only at M ≤ 2.
func TestKShapes(t *testing.T) {
	seed := uint64(1)
	emulated := testing.Short() && os.Getenv("KTUNE_TEST_EXEC") != ""
	for _, dt := range kDTypes {
		for _, m := range []int{1, 2, 3, 4, 5, 12, 13, 25} {
			for _, nk := range [][2]int{{1, 1}, {15, 31}, {17, 257}, {40, 300}, {63, 513}, {64, 256}, {200, 1000}} {
				s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
				if !sampled(int(seed)) || emulated && nk[1] == 1000 && m > 2 {
					seed++
					continue
				}
				threadCounts := []int{1, 2, 3, 7}
				if emulated {
					threadCounts = threadCounts[seed%4 : seed%4+1]
				}
				for _, op := range allOps {
					for _, v := range kernel.Candidates(op, dt, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
						if emulatedPortable(v) {
							continue
						}
						for _, threads := range threadCounts {
							checkShapeCycled(t, op, v.Name, dt, s, seed, threads, int(seed)+threads)
						}
					}
				}
				seed++
			}
		}
	}
}

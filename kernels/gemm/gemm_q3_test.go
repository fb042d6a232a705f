package gemm

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// setQ3 stores u (0…7) at row i, group element j of a Q3 record (the
// layout of quant/q3.go; q3At reads it back).
func setQ3(rec []byte, i, j, u int) {
	b := 4*i + j%4
	if q := j / 4; q < 6 {
		off, sh := (q/2)*quant.LineBytes+b, uint(3*(q%2))
		rec[off] = rec[off]&^(7<<sh) | byte(u)<<sh
		return
	}
	q := j / 4
	lo, hi := (q-6)*quant.LineBytes+b, 2*quant.LineBytes+b
	rec[lo] = rec[lo]&0x3f | byte(u&3)<<6
	rec[hi] = rec[hi]&^(1<<uint(q)) | byte(u>>2)<<uint(q)
}

// TestQ3Shapes checks every Q3 candidate of gemm.gemv and gemm.gemm with
// the dot-product error model (as FuzzGEMM does) at awkward shapes: M
// across the row tiles, N across panels, K across groups.
func TestQ3Shapes(t *testing.T) {
	seed := uint64(1)
	for _, m := range []int{1, 2, 3, 4, 5, 8, 11, 12, 13, 25} {
		for _, nk := range [][2]int{{1, 1}, {15, 31}, {16, 32}, {17, 33}, {40, 95}, {63, 257}, {64, 64}} {
			s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
			for _, op := range []string{OpGEMV, OpGEMM} {
				fuzzOne(t, op, kernel.Q3, s, seed)
			}
			seed++
		}
	}
}

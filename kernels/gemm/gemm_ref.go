package gemm

import (
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// panelsRef is the reference: for every output column of the panels and
// every row, a float64 dot product of x with the dequantized weight row.
//
//	X (m, k) · W (n, k)ᵀ -> Y (m, n)
func panelsRef(a *args, p0, p1, worker int, _ kernel.Values) {
	row := make([]float32, a.k)
	for c := p0 * quant.PanelRows; c < p1*quant.PanelRows; c++ {
		if c < a.n {
			a.w.DequantizeRow(c, row)
		} else {
			clear(row) // padding rows of a partial panel
		}
		put := func(r int, s float64) {
			out := &a.y[r*a.ldy+c-a.ycol]
			if a.acc {
				s += float64(*out)
			}
			*out = float32(s)
		}
		xr := func(r int) []float32 { return a.x[r*a.kp : r*a.kp+a.k] }
		r := 0
		for ; r+4 <= a.m; r += 4 { // four rows per pass over the weight row, each sum in k order
			s0, s1, s2, s3 := kernel.Dot64x4(row, xr(r), xr(r+1), xr(r+2), xr(r+3))
			put(r, s0)
			put(r+1, s1)
			put(r+2, s2)
			put(r+3, s3)
		}
		for ; r < a.m; r++ {
			put(r, kernel.Dot64(xr(r), row))
		}
	}
}

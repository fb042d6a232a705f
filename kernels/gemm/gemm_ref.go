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
		for r := 0; r < a.m; r++ {
			var s float64
			x := a.x[r*a.kp:]
			for k, w := range row {
				s += float64(x[k]) * float64(w)
			}
			out := &a.y[r*a.ldy+c-a.ycol]
			if a.acc {
				s += float64(*out)
			}
			*out = float32(s)
		}
	}
}

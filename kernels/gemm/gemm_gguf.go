// The GGUF formats (quant/gguf.go): weights in ggml's own block layout,
// row after row, read in place from a GGUF file's mapping. Portable
// variants here; the generated ones in gemm_gguf_amd64.go.
//
// A GGUF matrix's panel p is its rows 16p…16p+15 (fewer in a partial last
// panel, whose missing rows are neither stored nor written): the driver
// hands out panels as for the panel formats, and a kernel computes each
// row's outputs as a dot product along the row's blocks.

package gemm

import (
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/vmath"
)

// ggufDTypes are the GGUF formats every op serves; ggufIntDTypes those
// with integer blocks (all but f32, f16 and bf16), which the int8
// variants serve.
var (
	ggufDTypes    = kernel.GGUFDTypes
	ggufIntDTypes = kernel.GGUFDTypes[:len(kernel.GGUFDTypes)-3]
)

// panelRows is the rows [r0, r1) of panels [p0, p1) that a GGUF matrix
// stores.
func panelRows(a *args, p0, p1 int) (int, int) { return p0 * pr, min(p1*pr, a.n) }

// put writes (or adds) output column c of row r.
func (a *args) put(r, c int, v float32) {
	o := &a.y[r*a.ldy+c-a.ycol]
	if a.acc {
		v += *o
	}
	*o = v
}

// panelsGGUF is the f32 variant of the GGUF formats: each weight row
// widened to f32 by ggml's own dequantization (exact), then one f32 dot
// product per activation row (vmath.Dot).
//
//	for c in rows of [p0, p1): w := dequantize(W[c]); for r < m: y[r, c] (+)= Σ_k x[r,k]·w[k]
func panelsGGUF(a *args, p0, p1, worker int, _ kernel.Values) {
	row := a.scratch(worker, tmpKernel, a.k)
	r0, r1 := panelRows(a, p0, p1)
	for c := r0; c < r1; c++ {
		a.w.DequantizeRow(c, row)
		for r := 0; r < a.m; r++ {
			a.put(r, c, vmath.Dot(row, a.x[r*a.kp:r*a.kp+a.k]))
		}
	}
}

// panelsGGUFInt8 is the portable int8-activation variant: per block, the
// weights in their integer form (quant.GGUFBlockInts: w = s·v − mn per
// sub-block of 16), and per activation group of 32 (scale xs) and
// sub-block an integer dot product:
//
//	y[r, c] (+)= Σ_sub xs[r, g]·(s·Σ_j v_j·xq[r, j] − mn·Σ_j xq[r, j])
//
// (g the group of 32 holding the sub-block).
func panelsGGUFInt8(a *args, p0, p1, worker int, _ kernel.Values) {
	t, _ := quant.GGUFType(a.w.DType)
	bs, bb := t.BlockSize(), t.BlockBytes()
	subs := bs / quant.GGUFSub
	var v [256]int8
	var s, mn [256 / quant.GGUFSub]float32
	acc := a.scratch(worker, tmpKernel, a.m)
	r0, r1 := panelRows(a, p0, p1)
	for c := r0; c < r1; c++ {
		row := a.w.Row(c)
		clear(acc)
		for blk := 0; blk < a.k/bs; blk++ {
			quant.GGUFBlockInts(t, row[blk*bb:(blk+1)*bb], v[:bs], s[:subs], mn[:subs])
			for r := 0; r < a.m; r++ {
				xq := a.xq[r*a.kp+blk*bs:][:bs]
				xs := a.xs[(r*a.kp+blk*bs)/quant.GroupK:]
				var sum float32
				for sb := 0; sb < subs; sb++ {
					var dot, xsum int32
					for j := sb * quant.GGUFSub; j < (sb+1)*quant.GGUFSub; j++ {
						dot += int32(v[j]) * int32(xq[j])
						xsum += int32(xq[j])
					}
					sum += xs[sb*quant.GGUFSub/quant.GroupK] * (s[sb]*float32(dot) - mn[sb]*float32(xsum))
				}
				acc[r] += sum
			}
		}
		for r := 0; r < a.m; r++ {
			a.put(r, c, acc[r])
		}
	}
}

func init() {
	register(allOps, kernel.Variant{Name: "gguf_generic", Doc: "pure Go on the file's blocks: rows widened by ggml's dequantization, f32 dot products",
		Priority: 10, DTypes: ggufDTypes, Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actF32, panels: panelsGGUF, grain: 4})
	register(allOps, kernel.Variant{Name: "gguf_generic_int8", Doc: "pure Go on the file's blocks: integer dot products on int8 activations",
		Priority: 5, DTypes: ggufIntDTypes, Class: kernel.ClassInt8Act, Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actInt8, panels: panelsGGUFInt8, grain: 4})
}

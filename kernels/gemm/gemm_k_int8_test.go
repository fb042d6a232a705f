package gemm

// The K formats in the exact int8 checks (TestInt8PanelsExact,
// TestInt8RunExact): d = 1 and dm = kDM = 2 (unequal, so a kernel that
// takes one for the other fails), a weight the integer
// w = sc·u − 2·mc (codes 0…63) and every group's s·(xs·Σxq·u) and
// m·(xs·Σxq) an integer; kExactBound checks the test's premise that no
// product or partial sum reaches 2²⁴.

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// kDM is the dm of every super-block of the exact K matrices.
const kDM = 2

// fillK stores im.u and the codes im.ksc, im.kmc (random 0…63, or 63
// when max) into im.w, a K matrix, with d = 1 and dm = kDM in every
// super-block.
func (im *intMatrix) fillK(r *rand.Rand, max bool) {
	dt, w := im.w.DType, im.w
	groups := w.Kp / quant.GroupK
	im.ksc = make([][]int32, w.Np)
	im.kmc = make([][]int32, w.Np)
	for i := range im.ksc {
		im.ksc[i] = make([]int32, groups)
		im.kmc[i] = make([]int32, groups)
		for g := range im.ksc[i] {
			im.ksc[i][g], im.kmc[i][g] = 63, 63
			if !max {
				im.ksc[i][g], im.kmc[i][g] = r.Int32N(64), r.Int32N(64)
			}
		}
	}
	one, dm := half.F32ToF16(1), half.F32ToF16(kDM)
	sb := quant.KSuperBytes(dt)
	for p := 0; p < w.Panels(); p++ {
		panel := w.Panel(p)
		for g := 0; g < groups; g++ {
			hdr, j := panel[(g/quant.KGroups)*sb:], g%quant.KGroups
			rec := quant.KGroup(dt, panel, g)
			for i := 0; i < quant.PanelRows; i++ {
				row := p*quant.PanelRows + i
				sc, mc := byte(im.ksc[row][g]), byte(im.kmc[row][g])
				hdr[16*j+i] = sc | mc<<6
				off, sh := 128+16*(j/2)+i, uint(4*(j%2))
				hdr[off] = hdr[off]&^(15<<sh) | (mc>>2)<<sh
				binary.LittleEndian.PutUint16(hdr[192+2*i:], one)
				binary.LittleEndian.PutUint16(hdr[224+2*i:], dm)
				u := im.u[row][g*quant.GroupK:]
				for k := 0; k < quant.GroupK; k++ {
					switch dt {
					case kernel.Q3K:
						setQ3(rec, i, k, int(u[k]))
					case kernel.Q5K:
						setQ5(rec, i, k, int(u[k]))
					case kernel.Q6K:
						setQ6(rec, i, k, int(u[k]))
					default: // Q4K: Q4's nibbles
						b := &rec[(k/8)*quant.LineBytes+4*i+k%4]
						sh := uint(4 * ((k % 8) / 4))
						*b = *b&^(15<<sh) | byte(u[k])<<sh
					}
				}
			}
		}
	}
	for i := 0; i < quant.PanelRows && w.Panels() > 0; i++ { // the layout as quant reads it
		for g := 0; g < groups; g++ {
			if s, m := quant.KScaleMin(dt, w.Panel(0), i, g); s != float32(im.ksc[i][g]) || m != kDM*float32(im.kmc[i][g]) {
				panic("fillK: codes do not read back")
			}
		}
	}
}

// kExactBound is, for output column c and activation row x (group scales
// xs), Σ_g xs[g]·(sc·|Σ x·u| + kDM·mc·|Σ x|): a bound on every product and
// partial sum of the K kernels' f32 arithmetic for integer data.
func (im *intMatrix) kExactBound(c int, x []int32, xs []float32) float64 {
	var b float64
	for g := range xs {
		var xu, xsum int64
		for k := g * quant.GroupK; k < min((g+1)*quant.GroupK, im.k); k++ {
			xu += int64(x[k]) * int64(im.u[c][k])
			xsum += int64(x[k])
		}
		b += float64(xs[g]) * (float64(im.ksc[c][g])*float64(abs64(xu)) + kDM*float64(im.kmc[c][g])*float64(abs64(xsum)))
	}
	return b
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// kOnes are unit group scales (TestInt8RunExact's activations quantize
// with scale 1 or 0).
var kOnes = func() []float32 {
	s := make([]float32, 64)
	for i := range s {
		s[i] = 1
	}
	return s
}()

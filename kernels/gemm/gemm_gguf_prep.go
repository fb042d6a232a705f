// The activations of the GGUF formats' SIMD kernels: per activation row
// and unit of 256 values, the int8 values in the order the type's
// weights unpack into, with their scales and sums beside them.

package gemm

import (
	"encoding/binary"
	"math"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/quant"
)

// One unit of one activation row, as the kernels read it (the generator,
// _asm/gemm/gguf, documents the computation):
//
//	[0, 256)    xq: the unit's int8 values, chunk c (64 values) at 64c, in
//	            the type's layout (ggufLayoutB)
//	[256, 512)  xs: f32 per lane (4 values) of each chunk: the scale of the
//	            lane's group of 32
//	[512, 768)  aux: int32 per lane, −z·Σxq of a group (32-value types) or
//	            of a sub-block of 16 (q2_K, q3_K, q6_K) in the lane that
//	            starts it (its first, for 32-value groups in layout B), 0
//	            elsewhere; z the weights' zero point
//	[768, 832)  A: f32 per quad of 4 lanes (16 values), in layout order:
//	            xs·Σxq of the quad's sub-block, or of the whole group in
//	            the group's first quad (32-value groups), 0 in its other
const (
	ggufUnitK     = 256
	ggufUnitBytes = 832
	ggufOffXS     = 256
	ggufOffAux    = 512
	ggufOffA      = 768
)

// ggufLayoutB reports whether t's kernels take the activations in layout
// B: per chunk [group 2c values 0–15, group 2c+1 values 0–15, group 2c
// values 16–31, group 2c+1 values 16–31] (the types whose 16 bytes hold
// a group's two halves as low and high nibbles); otherwise in order.
func ggufLayoutB(t gguf.Type) bool {
	switch t {
	case gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeIQ4_NL, gguf.TypeMXFP4, gguf.TypeIQ4_XS:
		return true
	}
	return false
}

// ggufZero is the zero point the kernels' unsigned weights carry: u = v + z.
func ggufZero(t gguf.Type) int32 {
	switch t {
	case gguf.TypeQ8_0, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeMXFP4:
		return 128
	case gguf.TypeQ4_0:
		return 8
	case gguf.TypeQ5_0:
		return 16
	case gguf.TypeQ3_K:
		return 4
	case gguf.TypeQ6_K:
		return 32
	}
	return 0
}

// ggufSubs16 reports whether t has a scale per 16 values.
func ggufSubs16(t gguf.Type) bool {
	return t == gguf.TypeQ2_K || t == gguf.TypeQ3_K || t == gguf.TypeQ6_K
}

// ggufPrep builds a.pre.gg from the int8 activations (a.xq, a.xs per
// group of 32) for a GGUF matrix whose rows are whole units; rows are
// units·ggufUnitBytes apart.
func ggufPrep(a *args) {
	t, _ := quant.GGUFType(a.w.DType)
	if a.k%ggufUnitK != 0 {
		return
	}
	units := a.k / ggufUnitK
	p := &a.ws.pre
	p.gg = grow(p.gg, a.m*units*ggufUnitBytes)
	layoutB, z, subs16 := ggufLayoutB(t), ggufZero(t), ggufSubs16(t)
	g := a.kp / quant.GroupK
	for r := 0; r < a.m; r++ {
		xq := a.xq[r*a.kp : (r+1)*a.kp]
		xs := a.xs[r*g : (r+1)*g]
		xsum := a.xsum[r*g : (r+1)*g]
		for u := 0; u < units; u++ {
			dst := p.gg[(r*units+u)*ggufUnitBytes:][:ggufUnitBytes]
			src := xq[u*ggufUnitK:][:ggufUnitK]
			ggufUnit(dst, src, xs[u*8:u*8+8], xsum[u*8:u*8+8], layoutB, z, subs16)
		}
	}
	a.pre = p
}

// ggufUnit writes one unit (see the constants above).
func ggufUnit(dst []byte, xq []int8, xs []float32, xsum []int32, layoutB bool, z int32, subs16 bool) {
	q := dst[:ggufOffXS]
	xsE := dst[ggufOffXS:ggufOffAux]
	aux := dst[ggufOffAux:ggufOffA]
	A := dst[ggufOffA:ggufUnitBytes]
	clear(aux)
	clear(A)
	putF := func(b []byte, i int, v float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v)) }
	putI := func(b []byte, i int, v int32) { binary.LittleEndian.PutUint32(b[4*i:], uint32(v)) }
	for c := 0; c < 4; c++ {
		g0, g1 := 2*c, 2*c+1
		if layoutB {
			// [g0 0–15, g1 0–15, g0 16–31, g1 16–31]
			for h := 0; h < 2; h++ {
				for j, g := range [2]int{g0, g1} {
					src := xq[32*g+16*h : 32*g+16*h+16]
					o := 64*c + 32*h + 16*j
					for i, v := range src {
						q[o+i] = byte(v)
					}
				}
			}
			for l := 0; l < 16; l++ {
				putF(xsE, 16*c+l, xs[2*c+(l/4)%2])
			}
			// the groups' whole sums in their first quads (lanes 0 and 4)
			putI(aux, 16*c, -z*xsum[g0])
			putI(aux, 16*c+4, -z*xsum[g1])
			putF(A, 4*c, xs[g0]*float32(xsum[g0]))
			putF(A, 4*c+1, xs[g1]*float32(xsum[g1]))
			continue
		}
		for i, v := range xq[64*c : 64*c+64] {
			q[64*c+i] = byte(v)
		}
		for l := 0; l < 16; l++ {
			putF(xsE, 16*c+l, xs[2*c+l/8])
		}
		if !subs16 {
			putI(aux, 16*c, -z*xsum[g0])
			putI(aux, 16*c+8, -z*xsum[g1])
			putF(A, 4*c, xs[g0]*float32(xsum[g0]))
			putF(A, 4*c+2, xs[g1]*float32(xsum[g1]))
			continue
		}
		for sb := 0; sb < 4; sb++ { // sub-blocks of 16: quads
			var s int32
			for _, v := range xq[64*c+16*sb : 64*c+16*sb+16] {
				s += int32(v)
			}
			putI(aux, 16*c+4*sb, -z*s)
			putF(A, 4*c+sb, xs[2*c+sb/2]*float32(s))
		}
	}
}

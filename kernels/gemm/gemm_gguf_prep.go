// The activations of the GGUF formats' SIMD kernels: per activation row
// and unit of 256 values, the int8 values in the order the type's
// weights unpack into, with their scales and sums beside them.

package gemm

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/quant"
)

// One unit of one activation row, as the kernels read it (the generator,
// _asm/gemm/gguf, documents the computation):
//
//	[0, 256)    xq: the unit's int8 values, chunk c (64 values) at 64c, in
//	            the type's layout (ggufLayoutB, ggufLaneStationary)
//	[256, 512)  xs: f32 per lane (4 values) of each chunk: the scale of the
//	            lane's group of 32 (not for the lane-stationary types: XSI)
//	[512, 576)  XSI: f32 per weight-scale index of the unit (its 8 groups,
//	            or 16 sub-blocks for q2_K, q3_K and q6_K): the activations'
//	            scale there (the one-row kernels' prescale)
//	[576, 768)  unused
//	[768, 832)  A: f32 per quad of 4 lanes (16 values), in layout order:
//	            xs·Σxq of the quad's sub-block, or of the whole group in
//	            the group's first quad (32-value groups), 0 in its other;
//	            times z, the weights' zero point, for the types with one
const (
	ggufUnitK     = 256
	ggufUnitBytes = 832
	ggufOffXS     = 256
	ggufOffXSI    = 512
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

// ggufLaneStationary reports whether t's row kernel of m activation rows
// takes them lane-stationary: chunk c's lane l (4 bytes) holds values
// 4c…4c+3 of the unit's 16 values 16l…16l+15 (sub-block l, or half l%2
// of group l/2), so that a lane sees one scale in every chunk (the
// generator's gtype.lsFrom: q2_K, q3_K, q4_K, q5_K and iq4_xs, and q6_K
// from two rows). XSI and A are then per 16 values (as subs16's).
func ggufLaneStationary(t gguf.Type, m int) bool {
	switch t {
	case gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeIQ4_XS:
		return true
	case gguf.TypeQ6_K:
		return m >= 2
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

// ggufHasMin reports whether t's values carry a min (w = s·v − mn).
func ggufHasMin(t gguf.Type) bool {
	switch t {
	case gguf.TypeQ4_1, gguf.TypeQ5_1, gguf.TypeQ2_K, gguf.TypeQ4_K, gguf.TypeQ5_K:
		return true
	}
	return false
}

// ggufSubs16 reports whether t has a scale per 16 values.
func ggufSubs16(t gguf.Type) bool {
	return t == gguf.TypeQ2_K || t == gguf.TypeQ3_K || t == gguf.TypeQ6_K
}

// ggufUnits is how a row of k values splits for the kernels: whole units
// of 256 and a tail of chunks of 64 (32-value block types only); ok is
// false where the kernels cannot take the row (k not a multiple of 64, or
// of 256 for the super-block types).
func ggufUnits(t gguf.Type, k int) (units, tail int, ok bool) {
	units, rest := k/ggufUnitK, k%ggufUnitK
	if rest%64 != 0 || rest != 0 && t.BlockSize() != 32 {
		return 0, 0, false
	}
	return units, rest / 64, true
}

// ggufPrep builds a.pre.gg from the int8 activations (a.xq, a.xs per
// group of 32) for a GGUF matrix whose rows the kernels take (ggufUnits):
// per row its units and, for a tail, one more unit whose chunks past the
// tail are zero; rows are that many units·ggufUnitBytes apart.
func ggufPrep(a *args) {
	t, _ := quant.GGUFType(a.w.DType)
	layoutB, z, subs16, ls := ggufLayoutB(t), ggufZero(t), ggufSubs16(t), ggufLaneStationary(t, a.m)
	ggufPrepUnits(a, ggufUnitBytes, func(dst []byte, xq []int8, xs []float32, xsum []int32) {
		ggufUnit(dst, xq, xs, xsum, layoutB && !ls, z, subs16 || ls)
		if ls {
			ggufUnitLS(dst, xq)
		}
	})
}

// ggufPrepUnits lays out a.pre.gg for the row kernels of a GGUF matrix
// whose rows they take (ggufUnits; else it leaves a.pre nil): per row and
// unit of 256 values, unitBytes written by fill from the unit's 256 int8
// values and its 8 groups' scales and sums (a tail unit's past the row's
// end zero); rows are the units' count·unitBytes apart.
func ggufPrepUnits(a *args, unitBytes int, fill func(dst []byte, xq []int8, xs []float32, xsum []int32)) {
	t, _ := quant.GGUFType(a.w.DType)
	units, tail, ok := ggufUnits(t, a.k)
	if !ok {
		return
	}
	n := units
	if tail > 0 {
		n++
	}
	p := &a.ws.pre
	p.gg = grow(p.gg, a.m*n*unitBytes)
	g := a.kp / quant.GroupK
	// (the tail's padding in the workspace: arrays here would be moved to
	// the heap at every call, fill being a func value)
	p.pad, p.padS, p.padSum = grow(p.pad, ggufUnitK), grow(p.padS, 8), grow(p.padSum, 8)
	pad, padS, padSum := p.pad[:ggufUnitK], p.padS[:8], p.padSum[:8]
	for r := 0; r < a.m; r++ {
		xq := a.xq[r*a.kp : (r+1)*a.kp]
		xs := a.xs[r*g : (r+1)*g]
		xsum := a.xsum[r*g : (r+1)*g]
		for u := 0; u < n; u++ {
			dst := p.gg[(r*n+u)*unitBytes:][:unitBytes]
			if u < units {
				fill(dst, xq[u*ggufUnitK:][:ggufUnitK], xs[u*8:u*8+8], xsum[u*8:u*8+8])
				continue
			}
			// the tail: its chunks, then zeros
			clear(pad)
			clear(padS)
			clear(padSum)
			copy(pad, xq[u*ggufUnitK:a.k])
			copy(padS, xs[u*8:a.k/quant.GroupK])
			copy(padSum, xsum[u*8:a.k/quant.GroupK])
			fill(dst, pad, padS, padSum)
		}
	}
	a.pre = p
}

// ggufUnit writes one unit (see the constants above).
func ggufUnit(dst []byte, xq []int8, xs []float32, xsum []int32, layoutB bool, z int32, subs16 bool) {
	q := dst[:ggufOffXS]
	xsE := dst[ggufOffXS:ggufOffXSI]
	xsi := dst[ggufOffXSI:ggufOffA]
	A := dst[ggufOffA:ggufUnitBytes]
	clear(A)

	putF := func(b []byte, i int, v float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v)) }
	clear(xsi)
	for i := 0; i < 16; i++ {
		if subs16 {
			putF(xsi, i, xs[i/2])
		} else if i < 8 {
			putF(xsi, i, xs[i])
		}
	}
	zf := float32(1) // A's factor: the zero point, for a type with one
	if z != 0 {
		zf = float32(z)
	}
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
			putF(A, 4*c, zf*xs[g0]*float32(xsum[g0]))
			putF(A, 4*c+1, zf*xs[g1]*float32(xsum[g1]))
			continue
		}
		for i, v := range xq[64*c : 64*c+64] {
			q[64*c+i] = byte(v)
		}
		for l := 0; l < 16; l++ {
			putF(xsE, 16*c+l, xs[2*c+l/8])
		}
		if !subs16 {
			putF(A, 4*c, zf*xs[g0]*float32(xsum[g0]))
			putF(A, 4*c+2, zf*xs[g1]*float32(xsum[g1]))
			continue
		}
		for sb := 0; sb < 4; sb++ { // sub-blocks of 16: quads
			var s int32
			for _, v := range xq[64*c+16*sb : 64*c+16*sb+16] {
				s += int32(v)
			}
			putF(A, 4*c+sb, zf*xs[2*c+sb/2]*float32(s))
		}
	}
}

// ggufUnitLS rewrites a unit's values (ggufUnit's, in order) in the
// lane-stationary layout: chunk c, lane l, byte i is value 16l + 4c + i.
// The rest of the unit (XSI and A per sub-block) is the same.
func ggufUnitLS(dst []byte, xq []int8) {
	for c := 0; c < 4; c++ {
		for l := 0; l < 16; l++ {
			for i := 0; i < 4; i++ {
				dst[64*c+4*l+i] = byte(xq[16*l+4*c+i])
			}
		}
	}
}

// ---- prefill: tiles of 16 activation rows ----

// The activations of the tile kernels (ggufTileZ*), per tile of 16 rows
// (the last padded with rows of zeros) and group of 32 values, 704 bytes:
// eight lines of 64 (line j: values 4j…4j+3 of each of the 16 rows, as
// unsigned bytes x + 128), then f32 ×16 each: XS (the rows' group scales)
// and AS0, AS1 (xs·Σxq over the group's first and second 16 values, for a
// flush per 16; over the whole group in AS0, for a flush per 32).
const (
	ggufTileRows  = 16
	ggufTileGroup = 704
	ggufTileXS    = 512
	ggufTileAS0   = 576
	ggufTileAS1   = 640
)

// ggufTilePrep builds a.pre.gt: the activations in tiles, every group of
// every tile; tiles are groups·ggufTileGroup bytes apart.
func ggufTilePrep(a *args, flush16 bool) {
	g := a.kp / quant.GroupK
	ng := a.k / quant.GroupK
	tiles := (a.m + ggufTileRows - 1) / ggufTileRows
	p := &a.ws.pre
	p.gt = grow(p.gt, tiles*ng*ggufTileGroup)
	for tl := 0; tl < tiles; tl++ {
		for gi := 0; gi < ng; gi++ {
			rec := p.gt[(tl*ng+gi)*ggufTileGroup:][:ggufTileGroup]
			for r := 0; r < ggufTileRows; r++ {
				row := tl*ggufTileRows + r
				var xs, as0, as1 float32
				if row < a.m {
					xq := a.xq[row*a.kp+gi*quant.GroupK:][:quant.GroupK]
					for j := 0; j < 8; j++ {
						w := binary.LittleEndian.Uint32(unsafeBytes(xq[4*j : 4*j+4]))
						binary.LittleEndian.PutUint32(rec[64*j+4*r:], w^0x80808080)
					}
					xs = a.xs[row*g+gi]
					if flush16 {
						var s0, s1 int32
						for j := 0; j < 16; j++ {
							s0 += int32(xq[j])
							s1 += int32(xq[16+j])
						}
						as0, as1 = xs*float32(s0), xs*float32(s1)
					} else {
						as0 = xs * float32(a.xsum[row*g+gi])
					}
				} else {
					for j := 0; j < 8; j++ {
						binary.LittleEndian.PutUint32(rec[64*j+4*r:], 0x80808080)
					}
				}
				binary.LittleEndian.PutUint32(rec[ggufTileXS+4*r:], math.Float32bits(xs))
				binary.LittleEndian.PutUint32(rec[ggufTileAS0+4*r:], math.Float32bits(as0))
				binary.LittleEndian.PutUint32(rec[ggufTileAS1+4*r:], math.Float32bits(as1))
			}
		}
	}
	a.pre = p
}

// unsafeBytes views int8s as bytes.
func unsafeBytes(v []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// ---- the AVX2 kernels' activations ----

// One unit of one activation row for the AVX2 kernels (ggufY*), 416
// bytes: the 256 int8 values in order, then f32 ×8 XS (each group of
// 32's scale), f32 ×16 XS16 (each 16 values' group scale) and f32 ×16 A
// (xs·Σxq of each 16 values).
const (
	ggufUnitBytesY = 416
	ggufOffXSY     = 256
	ggufOffXS16Y   = 288
	ggufOffAY      = 352
)

// ggufPrepY builds a.pre.gg for the AVX2 kernels from the int8
// activations: per row its units and, for a tail, one more unit whose
// values past the tail are zero.
func ggufPrepY(a *args) {
	ggufPrepUnits(a, ggufUnitBytesY, func(dst []byte, xq []int8, xs []float32, _ []int32) {
		clear(dst)
		copy(dst, unsafeBytes(xq))
		for gi := 0; gi < 8; gi++ {
			s := xs[gi]
			binary.LittleEndian.PutUint32(dst[ggufOffXSY+4*gi:], math.Float32bits(s))
			for h := 0; h < 2; h++ {
				var sum int32
				for _, v := range xq[32*gi+16*h : 32*gi+16*h+16] {
					sum += int32(v)
				}
				binary.LittleEndian.PutUint32(dst[ggufOffXS16Y+4*(2*gi+h):], math.Float32bits(s))
				binary.LittleEndian.PutUint32(dst[ggufOffAY+4*(2*gi+h):], math.Float32bits(s*float32(sum)))
			}
		}
	})
}

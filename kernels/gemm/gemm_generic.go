package gemm

import (
	"encoding/binary"
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

const pr = quant.PanelRows

// panelsGeneric: for each panel, widen one group of weights (or a block of
// k for f32/bf16) to an f32 tile [kb][16], then for every activation row
// accumulate 16 outputs. Pure Go; the baseline every ISA variant beats.
func panelsGeneric(a *args, p0, p1, worker int, _ kernel.Values) {
	const kb = quant.GroupK
	tile := make([]float32, kb*pr)
	acc := a.scratch(worker, tmpKernel, a.m*pr)
	for p := p0; p < p1; p++ {
		panel := a.w.Panel(p)
		clear(acc)
		for k0 := 0; k0 < a.kp; k0 += kb {
			n := min(kb, a.kp-k0)
			widen(a.w, panel, k0, n, tile)
			for r := 0; r < a.m; r++ {
				x := a.x[r*a.kp+k0 : r*a.kp+k0+n]
				o := acc[r*pr : (r+1)*pr : (r+1)*pr]
				for j, xv := range x {
					t := tile[j*pr : (j+1)*pr : (j+1)*pr]
					for i := range o {
						o[i] += xv * t[i]
					}
				}
			}
		}
		store(a, p, acc)
	}
}

// store writes (or adds) the 16 outputs of panel p for every row.
func store(a *args, p int, acc []float32) {
	for r := 0; r < a.m; r++ {
		dst := a.y[r*a.ldy+p*pr-a.ycol:][:pr]
		src := acc[r*pr : (r+1)*pr]
		if a.acc {
			for i := range dst {
				dst[i] += src[i]
			}
		} else {
			copy(dst, src)
		}
	}
}

// widen converts k in [k0, k0+n) of a panel to f32, tile[j·16+i] = W[i, k0+j].
func widen(w *quant.Matrix, panel []byte, k0, n int, tile []float32) {
	if quant.IsK(w.DType) {
		g := k0 / quant.GroupK
		rec := quant.KGroup(w.DType, panel, g)
		var s, mn [pr]float32
		for i := range s {
			s[i], mn[i] = quant.KScaleMin(w.DType, panel, i, g)
		}
		var u [quant.GroupK * pr]int32
		kValues(w.DType, rec, &u)
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = s[i]*float32(u[j*pr+i]) - mn[i]
			}
		}
		return
	}
	switch w.DType {
	case kernel.F32:
		b := panel[4*k0*pr:]
		for i := range tile[:n*pr] {
			tile[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case kernel.BF16:
		b := panel[2*k0*pr:]
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = half.BF16ToF32(binary.LittleEndian.Uint16(b[2*((j/2)*2*pr+2*i+j%2):]))
			}
		}
	case kernel.Q8:
		rec := panel[(k0/quant.GroupK)*quant.Q8GroupBytes:]
		var d [pr]float32
		for i := range d {
			d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[8*quant.LineBytes+2*i:]))
		}
		for j := 0; j < n; j++ {
			line := rec[(j/4)*quant.LineBytes+j%4:]
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = d[i] * float32(int(line[4*i])-128)
			}
		}
	case kernel.Q4:
		gb := w.GroupBytes()
		rec := panel[(k0/quant.GroupK)*gb:]
		var d, mn [pr]float32
		for i := range d {
			d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[4*quant.LineBytes+2*i:]))
			if w.HasMin {
				mn[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[4*quant.LineBytes+2*pr+2*i:]))
			} else {
				mn[i] = -8 * d[i]
			}
		}
		for j := 0; j < n; j++ {
			line := rec[(j/8)*quant.LineBytes+j%4:]
			shift := uint(4 * ((j % 8) / 4))
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = d[i]*float32((line[4*i]>>shift)&15) + mn[i]
			}
		}
	case kernel.Q3:
		rec := panel[(k0/quant.GroupK)*quant.Q3GroupBytes:]
		var d [pr]float32
		for i := range d {
			d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[quant.Q3Lines*quant.LineBytes+2*i:]))
		}
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = d[i] * float32(q3At(rec, i, j)-quant.Q3Zero)
			}
		}
	case kernel.Q6:
		rec := panel[(k0/quant.GroupK)*quant.Q6GroupBytes:]
		var d [pr]float32
		for i := range d {
			d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[quant.Q6Lines*quant.LineBytes+2*i:]))
		}
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = d[i] * float32(q6At(rec, i, j)-quant.Q6Zero)
			}
		}
	case kernel.Q5:
		rec := panel[(k0/quant.GroupK)*quant.Q5GroupBytes:]
		var d [pr]float32
		for i := range d {
			d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[quant.Q5Lines*quant.LineBytes+2*i:]))
		}
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				tile[j*pr+i] = d[i] * float32(q5At(rec, i, j)-quant.Q5Zero)
			}
		}
	case kernel.Q2:
		rec := panel[(k0/quant.GroupK)*quant.Q2GroupBytes:]
		var d [pr]float32
		var c [pr]int
		for i := range d {
			d[i], c[i] = quant.Q2Scale(binary.LittleEndian.Uint16(rec[quant.Q2Lines*quant.LineBytes+2*i:]))
		}
		for j := 0; j < n; j++ {
			for i := 0; i < pr; i++ {
				// d·(u − (c−1)/4), exact as quant's dequantization
				tile[j*pr+i] = d[i] * 0.25 * float32(4*q2At(rec, i, j)-c[i]+1)
			}
		}
	}
}

// kValues decodes the stored u of a K format's group record (the value
// lines of its base format) into u[j·16+i].
func kValues(dt kernel.DType, rec []byte, u *[quant.GroupK * pr]int32) {
	base := quant.KBase(dt)
	for j := 0; j < quant.GroupK; j++ {
		for i := 0; i < pr; i++ {
			var v int
			switch base {
			case kernel.Q3:
				v = q3At(rec, i, j)
			case kernel.Q4:
				v = int(rec[(j/8)*quant.LineBytes+4*i+j%4]>>uint(4*(j%8/4))) & 15
			case kernel.Q5:
				v = q5At(rec, i, j)
			default:
				v = q6At(rec, i, j)
			}
			u[j*pr+i] = int32(v)
		}
	}
}

// q2At is the stored u (0…3) of row i, group element j of a Q2 record
// (the layout of quant/q2.go): bits 2(j%16/4) of line j/16.
func q2At(rec []byte, i, j int) int {
	return int(rec[(j/16)*quant.LineBytes+4*i+j%4]>>uint(2*(j%16/4))) & 3
}

// q5At is the stored u (0…31) of row i, group element j of a Q5 record
// (the layout of quant/q5.go): Q4's nibble of k = j in lines 0–3, the
// fifth bit at bit j/4 of line 4.
func q5At(rec []byte, i, j int) int {
	b := 4*i + j%4
	nib := int(rec[(j/8)*quant.LineBytes+b]>>uint(4*(j%8/4))) & 15
	return nib | int(rec[4*quant.LineBytes+b]>>uint(j/4))&1<<4
}

// q3At is the stored u (0…7) of row i, group element j of a Q3 record
// (the layout of quant/q3.go).
func q3At(rec []byte, i, j int) int {
	b := 4*i + j%4
	if q := j / 4; q >= 6 {
		return int(rec[(q-6)*quant.LineBytes+b]>>6) | int(rec[2*quant.LineBytes+b]>>uint(q))&1<<2
	}
	return int(rec[(j/8)*quant.LineBytes+b]>>uint(3*(j/4%2))) & 7
}

// q6At is the stored u (0…63) of row i, group element j of a Q6 record
// (the layout of quant/q6.go): bits 0–5 of line j/4, or for j ≥ 24 the
// bits 6–7 of three lines, low piece first.
func q6At(rec []byte, i, j int) int {
	b := 4*i + j%4
	if q := j / 4; q < 6 {
		return int(rec[q*quant.LineBytes+b] & 63)
	}
	l := rec[(3*(j/4-6))*quant.LineBytes+b:]
	return int(l[0]>>6) | int(l[quant.LineBytes]>>6)<<2 | int(l[2*quant.LineBytes]>>6)<<4
}

// panelsGenericInt8: int8 activations against the integer weights, one
// int32 dot product per (row, output, group), then per group
//
//	y += s_x · (d·(Σ q_x·u − z·Σ q_x) [+ m·Σ q_x])   (s_x the group's activation scale)
//
// with u the stored unsigned weight (Q8: q+128, z = 128; Q4: the nibble,
// z = 8, or z = 0 and a min m; Q3: the 3-bit value, z = 4; Q6: the
// 6-bit value, z = 32; Q5: the 5-bit value, z = 16; Q2: the 2-bit value, z = 0 and the min m = −d·t
// of the scale word's offset t; the K formats: z = 0, d = d_sb·sc and
// m = −dm_sb·mc from the group's codes, see panelsGenericInt8K).
func panelsGenericInt8(a *args, p0, p1, worker int, v kernel.Values) {
	if quant.IsK(a.w.DType) {
		panelsGenericInt8K(a, p0, p1, worker)
		return
	}
	g := a.kp / quant.GroupK
	gb := a.w.GroupBytes()
	acc := a.scratch(worker, tmpKernel, a.m*pr)
	var u [quant.GroupK * pr]int32
	for p := p0; p < p1; p++ {
		panel := a.w.Panel(p)
		clear(acc)
		for gi := 0; gi < g; gi++ {
			rec := panel[gi*gb:]
			var d, mn [pr]float32
			var zp int32
			scales := 8 * quant.LineBytes
			switch a.w.DType {
			case kernel.Q4:
				scales = 4 * quant.LineBytes
			case kernel.Q3:
				scales = quant.Q3Lines * quant.LineBytes
			case kernel.Q6:
				scales = quant.Q6Lines * quant.LineBytes
			case kernel.Q5:
				scales = quant.Q5Lines * quant.LineBytes
			case kernel.Q2:
				scales = quant.Q2Lines * quant.LineBytes
			}
			for i := range d {
				if a.w.DType == kernel.Q2 {
					var c int
					d[i], c = quant.Q2Scale(binary.LittleEndian.Uint16(rec[scales+2*i:]))
					mn[i] = -d[i] * 0.25 * float32(c-1)
					continue
				}
				d[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[scales+2*i:]))
				if a.w.HasMin {
					mn[i] = half.F16ToF32(binary.LittleEndian.Uint16(rec[scales+2*pr+2*i:]))
				}
			}
			switch {
			case a.w.DType == kernel.Q2:
				for j := 0; j < quant.GroupK; j++ {
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32(q2At(rec, i, j))
					}
				}
			case a.w.DType == kernel.Q3:
				zp = quant.Q3Zero
				for j := 0; j < quant.GroupK; j++ {
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32(q3At(rec, i, j))
					}
				}
			case a.w.DType == kernel.Q6:
				zp = quant.Q6Zero
				for j := 0; j < quant.GroupK; j++ {
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32(q6At(rec, i, j))
					}
				}
			case a.w.DType == kernel.Q5:
				zp = quant.Q5Zero
				for j := 0; j < quant.GroupK; j++ {
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32(q5At(rec, i, j))
					}
				}
			case a.w.DType == kernel.Q8:
				zp = 128
				for j := 0; j < quant.GroupK; j++ {
					line := rec[(j/4)*quant.LineBytes+j%4:]
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32(line[4*i])
					}
				}
			default:
				if !a.w.HasMin {
					zp = 8
				}
				for j := 0; j < quant.GroupK; j++ {
					line := rec[(j/8)*quant.LineBytes+j%4:]
					shift := uint(4 * ((j % 8) / 4))
					for i := 0; i < pr; i++ {
						u[j*pr+i] = int32((line[4*i] >> shift) & 15)
					}
				}
			}
			for r := 0; r < a.m; r++ {
				xq := a.xq[r*a.kp+gi*quant.GroupK:][:quant.GroupK]
				sum := a.xsum[r*g+gi]
				var dot [pr]int32
				for j, xv := range xq {
					uj := u[j*pr : (j+1)*pr]
					for i := range dot {
						dot[i] += int32(xv) * uj[i]
					}
				}
				s := a.xs[r*g+gi]
				o := acc[r*pr : (r+1)*pr]
				for i := range o {
					o[i] += s * (d[i]*float32(dot[i]-zp*sum) + mn[i]*float32(sum))
				}
			}
		}
		store(a, p, acc)
	}
}

// panelsGenericInt8K is panelsGenericInt8 for the K formats: per group
//
//	y += s·(xs·float32(Σ q_x·u)) − m·float32(xs·Σ q_x)
//
// with s = d·sc and m = dm·mc (quant.KScaleMin), the arithmetic every K
// kernel follows (the min term as Q4 with a min: aux = float32(xs·Σxq)).
func panelsGenericInt8K(a *args, p0, p1, worker int) {
	g := a.kp / quant.GroupK
	acc := a.scratch(worker, tmpKernel, a.m*pr)
	var u [quant.GroupK * pr]int32
	for p := p0; p < p1; p++ {
		panel := a.w.Panel(p)
		clear(acc)
		for gi := 0; gi < g; gi++ {
			var s, mn [pr]float32
			for i := range s {
				s[i], mn[i] = quant.KScaleMin(a.w.DType, panel, i, gi)
			}
			kValues(a.w.DType, quant.KGroup(a.w.DType, panel, gi), &u)
			for r := 0; r < a.m; r++ {
				xq := a.xq[r*a.kp+gi*quant.GroupK:][:quant.GroupK]
				var dot [pr]int32
				for j, xv := range xq {
					uj := u[j*pr : (j+1)*pr]
					for i := range dot {
						dot[i] += int32(xv) * uj[i]
					}
				}
				xs := a.xs[r*g+gi]
				aux := xs * float32(a.xsum[r*g+gi])
				o := acc[r*pr : (r+1)*pr]
				for i := range o {
					o[i] += s[i]*(xs*float32(dot[i])) - mn[i]*aux
				}
			}
		}
		store(a, p, acc)
	}
}

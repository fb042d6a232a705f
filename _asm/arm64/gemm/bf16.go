package main

import (
	"fmt"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The BF16 kernels of the neon_bf16 (bf16Tile) and sve_bf16
// (bf16SVETile) variants share one skeleton (bf16Panels) around the steps
// of their form (bf16Form).
//
// Registers: R0 w (post-incremented a line at a time), R1 panels left,
// R2 pairs, R3 xb, R4 ldx (bytes), R5 y, R6 ldy·4, R7 acc; per panel
// R8–R11 the activation rows, R12 steps of 4 pairs, R13 tail pairs,
// R14–R17 the rows of y.

// bf16Sig is the Go signature of every BF16 kernel.
const bf16Sig = "(w *byte, np, npairs int, xb *uint16, ldx int, y *float32, ldy int, acc int)"

// bf16Form is what a form of the BF16 kernels puts in bf16Panels.
type bf16Form interface {
	zero()        // clear the accumulators
	quad()        // each row's next 4 pairs against the next 4 lines
	one()         // each row's next pair against the next line
	sum()         // each row's accumulator sets summed into set 0
	addY(r int)   // y row r (at R14+r) added into row r's set 0
	storeY(r int) // row r's set 0 stored into y row r
}

// bf16Args loads the BF16 kernels' arguments (the row strides only for
// several rows) and leaves for done when there is no panel.
func bf16Args(f *a64.File, rows int, done string) {
	f.Op("MOVD w+0(FP), R0")
	f.Op("MOVD np+8(FP), R1")
	f.Op("MOVD npairs+16(FP), R2")
	f.Op("MOVD xb+24(FP), R3")
	if rows > 1 {
		f.Op("MOVD ldx+32(FP), R4")
	}
	f.Op("MOVD y+40(FP), R5")
	if rows > 1 {
		f.Op("MOVD ldy+48(FP), R6")
		f.Op("LSL $2, R6, R6")
	}
	f.Op("MOVD acc+56(FP), R7")
	f.Op("CBZ R1, %s", done)
}

// bf16Panels writes a BF16 kernel from its panel loop on (labels b+…):
// per panel, the activation rows, the pairs 4 at a time (quad) then one
// at a time (one), the sets summed, and y written (bf16Y).
func bf16Panels(f *a64.File, b string, rows int, k bf16Form) {
	f.Label(b + "panel")
	f.Op("MOVD R3, R8")
	for r := 1; r < rows; r++ {
		f.Op("ADD R4, R%d, R%d", 7+r, 8+r)
	}
	k.zero()
	f.OpC("steps of 4 pairs", "LSR $2, R2, R12")
	f.OpC("tail pairs", "AND $3, R2, R13")
	f.Op("CBZ R12, %stail", b)

	f.Label(b + "quad")
	k.quad()
	f.Op("SUBS $1, R12, R12")
	f.Op("BNE %squad", b)

	f.Label(b + "tail")
	f.Op("CBZ R13, %ssum", b)
	f.Label(b + "one")
	k.one()
	f.Op("SUBS $1, R13, R13")
	f.Op("BNE %sone", b)

	f.Label(b + "sum")
	k.sum()
	bf16Y(f, b, rows, k)
}

// bf16Y writes the panel's y rows (+)= the sums (adding y when acc), then
// moves to the next panel, or returns.
func bf16Y(f *a64.File, b string, rows int, k bf16Form) {
	f.Op("MOVD R5, R14")
	for r := 1; r < rows; r++ {
		f.Op("ADD R6, R%d, R%d", 13+r, 14+r)
	}
	f.Op("CBZ R7, %sstore", b)
	for r := range rows {
		k.addY(r)
	}
	f.Label(b + "store")
	for r := range rows {
		k.storeY(r)
	}
	f.Op("ADD $64, R5, R5")
	f.Op("SUBS $1, R1, R1")
	f.Op("BNE %spanel", b)
	f.Label(b + "done")
	f.Op("RET")
}

// bf16Tile writes bf16NEON_<rows>x16: per panel, y[r][0:16] (+)= the BF16
// dot products of activation row r with the panel's 16 rows.
func bf16Tile(f *a64.File, rows int) {
	k := neonBF16{f, rows, map[int]int{1: 4, 2: 2, 3: 1, 4: 1}[rows]}
	b := fmt.Sprintf("b%d", rows)
	f.Func(fmt.Sprintf("bf16NEON_%dx16", rows), bf16Sig, "$0-64")
	bf16Args(f, rows, b+"done")
	bf16Panels(f, b, rows, k)
}

// neonBF16 is the NEON form: V0–V3 and V4–V7 panel lines (even, odd),
// V8–V11 the activation rows, V(16 + 4·(r·U + u)) the accumulator set u
// of row r.
type neonBF16 struct {
	f       *a64.File
	rows, U int
}

// acc is the first register of set u of row r.
func (k neonBF16) acc(r, u int) int { return 16 + 4*(r*k.U+u) }

func (k neonBF16) zero() { k.f.ZeroV(16, 4*k.rows*k.U) }

func (k neonBF16) quad() {
	for r := range k.rows {
		k.f.OpC(fmt.Sprintf("row %d: 4 pairs", r), "VLD1.P 16(R%d), [V%d.H8]", 8+r, 8+r)
	}
	for l := range 4 {
		first := 4 * (l % 2)
		k.f.OpC(fmt.Sprintf("line %d: 16 rows × 1 pair", l), "VLD1.P 64(R0), [V%d.H8, V%d.H8, V%d.H8, V%d.H8]", first, first+1, first+2, first+3)
		k.dots(first, l, l%k.U)
	}
}

func (k neonBF16) one() {
	for r := range k.rows {
		k.f.OpC(fmt.Sprintf("row %d: one pair", r), "VLD1R.P 4(R%d), [V%d.S4]", 8+r, 8+r)
	}
	k.f.Op("VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]")
	k.dots(0, 0, 0)
}

// dots adds the line at V(first)… times each row's pair e into set u.
func (k neonBF16) dots(first, e, u int) {
	for r := range k.rows {
		for j := range 4 {
			k.f.Word("bfdot v%d.4s, v%d.8h, v%d.2h[%d]", k.acc(r, u)+j, first+j, 8+r, e)
		}
	}
}

// sum adds the sets pairwise (0 += 2, 1 += 3, then 0 += 1 for U = 4).
func (k neonBF16) sum() {
	for half := k.U / 2; half >= 1; half /= 2 {
		for r := range k.rows {
			for u := range half {
				k.fadd(k.acc(r, u), k.acc(r, u+half))
			}
		}
	}
}

// fadd adds the four registers from src into those from dst.
func (k neonBF16) fadd(dst, src int) {
	for j := range 4 {
		k.f.Word("fadd v%d.4s, v%d.4s, v%d.4s", dst+j, dst+j, src+j)
	}
}

func (k neonBF16) addY(r int) {
	k.f.Op("VLD1 (R%d), %s", 14+r, a64.V4(0, "S4"))
	k.fadd(k.acc(r, 0), 0)
}

func (k neonBF16) storeY(r int) {
	k.f.Op("VST1 %s, (R%d)", a64.V4(k.acc(r, 0), "S4"), 14+r)
}

// bf16SVETile writes bf16SVE<nc>_<rows>x16: bf16Tile with a line of nc
// vectors (p0…, predicated to the line's 32 halfwords; y's under p4…).
func bf16SVETile(f *a64.File, nc, rows int) {
	k := sveBF16{f, nc, rows, min(4, 16/(rows*nc))}
	b := fmt.Sprintf("s%d%d", nc, rows)
	f.Func(fmt.Sprintf("bf16SVE%d_%dx16", nc, rows), bf16Sig, "$0-64")
	bf16Args(f, rows, b+"done")
	bf16SVEPreds(f, nc)
	bf16Panels(f, b, rows, k)
}

// bf16SVEPreds sets p0… to a line's nc chunks of halfwords, p4… to the
// same chunks as f32 lanes of y, p2 and p3 to all halfwords and words.
func bf16SVEPreds(f *a64.File, nc int) {
	f.Note("p0, p1: the halfwords [c·VL/16, (c+1)·VL/16) ∩ [0, 32) of a line;")
	f.Note("p4, p5: the same chunks as f32 lanes ∩ [0, 16)")
	for _, p := range []struct {
		n, pred int
		t       string
	}{{32, 0, "h"}, {16, 4, "s"}} {
		f.Op("MOVD $%d, R19", p.n)
		f.Op("MOVD $0, R20")
		f.WhileLo(p.t, p.pred, nc, 20, 19)
	}
	f.Word("ptrue p2.h")
	f.Word("ptrue p3.s")
}

// sveBF16 is the SVE form: z0–z3 the activation rows, z8… and z12… the
// even and odd lines, z(16 + nc·(r·U + u) + c) chunk c of set u of row
// r.
type sveBF16 struct {
	f           *a64.File
	nc, rows, U int
}

// acc is chunk c of set u of row r.
func (k sveBF16) acc(r, u, c int) int { return 16 + k.nc*(r*k.U+u) + c }

func (k sveBF16) zero() { k.f.ZeroZ(16, k.nc*k.rows*k.U) }

func (k sveBF16) quad() {
	for r := range k.rows {
		k.f.WordC(fmt.Sprintf("row %d: 4 pairs in every segment", r), "ld1rqh {z%d.h}, p2/z, [x%d]", r, 8+r)
		k.f.Op("ADD $16, R%d, R%d", 8+r, 8+r)
	}
	for l := range 4 {
		first := 8 + 4*(l%2)
		k.line(first, fmt.Sprintf("line %d", l))
		k.dots(first, l, l%k.U)
	}
}

func (k sveBF16) one() {
	for r := range k.rows {
		k.f.WordC(fmt.Sprintf("row %d: one pair", r), "ld1rw {z%d.s}, p3/z, [x%d]", r, 8+r)
		k.f.Op("ADD $4, R%d, R%d", 8+r, 8+r)
	}
	k.line(8, "")
	k.dots(8, 0, 0)
}

// line loads the next panel line into z(first)… (note: its number).
func (k sveBF16) line(first int, note string) {
	for c := range k.nc {
		if c == 0 && note != "" {
			k.f.WordC(note, "ld1h {z%d.h}, p%d/z, %s", first+c, c, a64.VL(0, c))
		} else {
			k.f.Word("ld1h {z%d.h}, p%d/z, %s", first+c, c, a64.VL(0, c))
		}
	}
	k.f.Op("ADD $64, R0, R0")
}

// dots adds the line at z(first)… times each row's pair e into set u.
func (k sveBF16) dots(first, e, u int) {
	for r := range k.rows {
		for c := range k.nc {
			k.f.Word("bfdot z%d.s, z%d.h, z%d.h[%d]", k.acc(r, u, c), first+c, r, e)
		}
	}
}

// sum adds the sets pairwise, row by row.
func (k sveBF16) sum() {
	for r := range k.rows {
		for half := k.U / 2; half >= 1; half /= 2 {
			for u := range half {
				for c := range k.nc {
					d, s := k.acc(r, u, c), k.acc(r, u+half, c)
					k.f.Word("fadd z%d.s, z%d.s, z%d.s", d, d, s)
				}
			}
		}
	}
}

func (k sveBF16) addY(r int) {
	k.f.Ld1w(8, 4, 14+r, k.nc)
	for c := range k.nc {
		d := k.acc(r, 0, c)
		k.f.Word("fadd z%d.s, z%d.s, z%d.s", d, d, 8+c)
	}
}

func (k sveBF16) storeY(r int) { k.f.St1w(k.acc(r, 0, 0), 4, 14+r, k.nc) }

// Package rows addresses the rows of a matrix from generated assembly:
// row r of a matrix with row stride s, with as few registers as the
// x86 addressing modes allow.
package rows

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Addr addresses row r of a matrix with row stride S: rows 4q…4q+3 are at
// Base[q] + {0, S, 2S, 3S} (S3 = 3S).
type Addr struct {
	Base  []reg.Register
	S, S3 reg.Register
}

// New addresses m rows from first, stride bytes apart (stride is unused,
// and may be nil, for m = 1). It emits the LEAs of 3·stride and of each
// further group of four rows' base.
func New(m int, first, stride reg.Register) Addr {
	a := Addr{Base: []reg.Register{first}, S: stride}
	if m > 3 {
		a.S3 = build.GP64()
		build.LEAQ(operand.Mem{Base: stride, Index: stride, Scale: 2}, a.S3)
	}
	for q := 1; q*4 < m; q++ {
		b := build.GP64()
		build.LEAQ(operand.Mem{Base: a.Base[q-1], Index: stride, Scale: 4}, b)
		a.Base = append(a.Base, b)
	}
	return a
}

// At is row r's address plus disp.
func (a Addr) At(r, disp int) operand.Mem {
	b := a.Base[r/4]
	switch r % 4 {
	case 1:
		return operand.Mem{Base: b, Index: a.S, Scale: 1, Disp: disp}
	case 2:
		return operand.Mem{Base: b, Index: a.S, Scale: 2, Disp: disp}
	case 3:
		return operand.Mem{Base: b, Index: a.S3, Scale: 1, Disp: disp}
	}
	return operand.Mem{Base: b, Disp: disp}
}

// Advance moves every row on by n bytes (an immediate: U8 or U32).
func (a Addr) Advance(n operand.Constant) {
	for _, b := range a.Base {
		build.ADDQ(n, b)
	}
}

// Store emits the stores of one vector per row of a float matrix: f[r] at
// row + r·ldy (ldy in bytes), adding the values there first when the
// byte flag acc is not zero. The add path ends at label stored, the plain
// one starts at label store.
func Store[V reg.Register](store, stored string, ldy, row, acc reg.Register, f []V) {
	build.TESTB(acc, acc)
	build.JZ(operand.LabelRef(store))
	for r := range f {
		build.VADDPS(operand.Mem{Base: row}, f[r], f[r])
		build.VMOVUPS(f[r], operand.Mem{Base: row})
		if r+1 < len(f) {
			build.ADDQ(ldy, row)
		}
	}
	build.JMP(operand.LabelRef(stored))
	build.Label(store)
	for r := range f {
		build.VMOVUPS(f[r], operand.Mem{Base: row})
		if r+1 < len(f) {
			build.ADDQ(ldy, row)
		}
	}
	build.Label(stored)
}

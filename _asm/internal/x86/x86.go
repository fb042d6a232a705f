// Package x86 emits, through avo, the x86 instructions the Go assembler
// rejects (the VEX AVX-VNNI form of VPDPBUSD, VDPBF16PS, VCVTNE2PS2BF16, the AMX tile
// instructions) as BYTE lines
// with a mnemonic comment, computing the encodings from register numbers.
//
// The raw lines are invisible to avo's liveness analysis and register
// allocator, so a function that uses them must name its vector registers
// physically (reg.Y0, reg.Z3, ...) and allocate none virtually.
package x86

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/reg"
)

// VPDPBUSDVEX encodes {vex} vpdpbusd ymm(dst), ymm(src1), ymm(src2)
// (VEX.256.66.0F38.W0 50 /r): for each of the 8 dword lanes,
// dst += Σ_{j<4} u8(src1 byte 4i+j) · s8(src2 byte 4i+j), without
// saturation. Registers are 0…15.
func VPDPBUSDVEX(dst, src1, src2 int) []byte {
	for _, r := range []int{dst, src1, src2} {
		if r < 0 || r > 15 {
			panic(fmt.Sprintf("x86: VEX register ymm%d out of range", r))
		}
	}
	// 3-byte VEX: C4, R̄X̄B̄ m-mmmm (0F38 = 00010), W vvvv̄ L pp (W0, L1, 66 = 01).
	b1 := byte(0x02)
	if dst < 8 {
		b1 |= 0x80 // R̄
	}
	b1 |= 0x40 // X̄ (no index)
	if src2 < 8 {
		b1 |= 0x20 // B̄
	}
	b2 := byte((^src1&15)<<3) | 0x04 | 0x01
	modrm := byte(0xC0 | (dst&7)<<3 | src2&7)
	return []byte{0xC4, b1, b2, 0x50, modrm}
}

// VDPBF16PS encodes vdpbf16ps zmm(dst), zmm(src1), zmm(src2)
// (EVEX.512.F3.0F38.W0 52 /r): for each of the 16 f32 lanes,
// dst += src1.bf16[2i]·src2.bf16[2i] + src1.bf16[2i+1]·src2.bf16[2i+1].
// Registers are 0…31.
func VDPBF16PS(dst, src1, src2 int) []byte { return evex512F38(0x02, 0x52, dst, src1, src2) }

// VCVTNE2PS2BF16 encodes vcvtne2ps2bf16 zmm(dst), zmm(src1), zmm(src2)
// (EVEX.512.F2.0F38.W0 72 /r): dst.bf16[i] = bf16(src2.f32[i]) for i < 16
// and dst.bf16[16+i] = bf16(src1.f32[i]), rounded to nearest even.
// Registers are 0…31.
func VCVTNE2PS2BF16(dst, src1, src2 int) []byte { return evex512F38(0x03, 0x72, dst, src1, src2) }

// evex512F38 encodes a register-only EVEX.512.pp.0F38.W0 instruction
// (pp: 01 = 66, 10 = F3, 11 = F2) with ModRM reg = dst, vvvv = src1,
// rm = src2.
func evex512F38(pp, opcode byte, dst, src1, src2 int) []byte {
	for _, r := range []int{dst, src1, src2} {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("x86: EVEX register zmm%d out of range", r))
		}
	}
	// P0: R̄ X̄ B̄ R̄' 0 0 m m (0F38 = 10); register rm uses X for bit 4.
	p0 := byte(0x02)
	if dst&8 == 0 {
		p0 |= 0x80
	}
	if src2&16 == 0 {
		p0 |= 0x40
	}
	if src2&8 == 0 {
		p0 |= 0x20
	}
	if dst&16 == 0 {
		p0 |= 0x10
	}
	// P1: W vvvv̄ 1 pp (W0).
	p1 := byte((^src1&15)<<3) | 0x04 | pp
	// P2: z L'L b V̄' aaa (512-bit: L'L = 10).
	p2 := byte(0x40)
	if src1&16 == 0 {
		p2 |= 0x08
	}
	modrm := byte(0xC0 | (dst&7)<<3 | src2&7)
	return []byte{0x62, p0, p1, p2, opcode, modrm}
}

// Raw appends the bytes b to the active avo function as one line of BYTE
// directives with the mnemonic as a trailing comment, e.g.
//
//	BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xc2 // vdpbf16ps zmm0, zmm16, zmm18
//
// (an operand-less avo instruction whose opcode is the whole line).
func Raw(mnemonic string, b []byte) {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("BYTE $0x%02x", x)
	}
	build.Instruction(&ir.Instruction{Opcode: strings.Join(parts, "; ") + " // " + mnemonic})
}

// VPDPBUSDY emits {vex} vpdpbusd acc, u, s on physical ymm registers:
// acc.i32[i] += Σ_j u.u8[4i+j]·s.s8[4i+j].
func VPDPBUSDY(u, s, acc reg.Physical) {
	d, a, b := num(acc), num(u), num(s)
	Raw(fmt.Sprintf("{vex} vpdpbusd ymm%d, ymm%d, ymm%d", d, a, b), VPDPBUSDVEX(d, a, b))
}

// VDPBF16PSZ emits vdpbf16ps acc, a, b on physical zmm registers:
// acc.f32[i] += a.bf16[2i]·b.bf16[2i] + a.bf16[2i+1]·b.bf16[2i+1].
func VDPBF16PSZ(a, b, acc reg.Physical) {
	d, x, y := num(acc), num(a), num(b)
	Raw(fmt.Sprintf("vdpbf16ps zmm%d, zmm%d, zmm%d", d, x, y), VDPBF16PS(d, x, y))
}

// VCVTNE2PS2BF16Z emits vcvtne2ps2bf16 dst, hi, lo on physical zmm
// registers: dst.bf16[i] = bf16(lo.f32[i]), dst.bf16[16+i] = bf16(hi.f32[i])
// (round to nearest even), i < 16.
func VCVTNE2PS2BF16Z(lo, hi, dst reg.Physical) {
	d, a, b := num(dst), num(hi), num(lo)
	Raw(fmt.Sprintf("vcvtne2ps2bf16 zmm%d, zmm%d, zmm%d", d, a, b), VCVTNE2PS2BF16(d, a, b))
}

func num(r reg.Physical) int { return int(r.PhysicalIndex()) }

// ---- AMX (tile registers tmm0…tmm7) ----------------------------------------

// vex3 is a 3-byte VEX prefix for map 0F38, W0, L0 (128): r̄x̄b̄ are the
// complemented high bits of ModRM.reg, SIB.index and ModRM.rm/SIB.base;
// vvvv a register number (0 when unused: the field is its complement); pp 00 = none, 01 = 66, 10 = F3,
// 11 = F2.
func vex3(r, x, b bool, vvvv int, pp byte) []byte {
	b1 := byte(0x02)
	if !r {
		b1 |= 0x80
	}
	if !x {
		b1 |= 0x40
	}
	if !b {
		b1 |= 0x20
	}
	b2 := byte((^vvvv&15)<<3) | pp
	return []byte{0xC4, b1, b2}
}

// Mem is a general-purpose memory operand [Base + Index·Scale + Disp] with
// registers numbered 0…15 (rax = 0 … r15 = 15); Index < 0 means none.
type Mem struct {
	Base, Index, Scale int
	Disp               int32
}

func (m Mem) String() string {
	s := "[" + gpName(m.Base)
	if m.Index >= 0 {
		s += fmt.Sprintf("+%s*%d", gpName(m.Index), m.Scale)
	}
	if m.Disp != 0 {
		s += fmt.Sprintf("%+d", m.Disp)
	}
	return s + "]"
}

var gpNames = []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

func gpName(r int) string { return gpNames[r] }

// vexMem encodes a VEX.128.pp.0F38.W0 instruction with opcode op, ModRM.reg
// = reg (0…15), vvvv and the memory operand m; sib forces a SIB byte (the
// AMX tile loads and stores require one).
func vexMem(pp, op byte, reg, vvvv int, m Mem, sib bool) []byte {
	if m.Base < 0 || m.Base > 15 || m.Index > 15 || m.Index == 4 {
		panic(fmt.Sprintf("x86: bad memory operand %v", m))
	}
	if m.Index >= 0 || m.Base&7 == 4 {
		sib = true
	}
	var mod byte
	switch {
	case m.Disp == 0 && m.Base&7 != 5:
		mod = 0
	case m.Disp >= -128 && m.Disp <= 127:
		mod = 1
	default:
		mod = 2
	}
	out := vex3(reg&8 != 0, m.Index >= 0 && m.Index&8 != 0, m.Base&8 != 0, vvvv, pp)
	out = append(out, op)
	if sib {
		out = append(out, mod<<6|byte(reg&7)<<3|4)
		idx, ss := 4, byte(0)
		if m.Index >= 0 {
			idx = m.Index & 7
			switch m.Scale {
			case 1:
			case 2:
				ss = 1
			case 4:
				ss = 2
			case 8:
				ss = 3
			default:
				panic(fmt.Sprintf("x86: bad scale %d", m.Scale))
			}
		}
		out = append(out, ss<<6|byte(idx)<<3|byte(m.Base&7))
	} else {
		out = append(out, mod<<6|byte(reg&7)<<3|byte(m.Base&7))
	}
	switch mod {
	case 1:
		out = append(out, byte(int8(m.Disp)))
	case 2:
		d := uint32(m.Disp)
		out = append(out, byte(d), byte(d>>8), byte(d>>16), byte(d>>24))
	}
	return out
}

func checkTile(ts ...int) {
	for _, t := range ts {
		if t < 0 || t > 7 {
			panic(fmt.Sprintf("x86: tile register tmm%d out of range", t))
		}
	}
}

// LDTILECFG encodes ldtilecfg [m] (VEX.128.NP.0F38.W0 49 /0): load the
// 64-byte tile configuration.
func LDTILECFG(m Mem) []byte { return vexMem(0, 0x49, 0, 0, m, false) }

// TILERELEASE encodes tilerelease (VEX.128.NP.0F38.W0 49 C0): return the
// tile state to its initial (unconfigured) state.
func TILERELEASE() []byte { return []byte{0xC4, 0xE2, 0x78, 0x49, 0xC0} }

// TILEZERO encodes tilezero tmm(t) (VEX.128.F2.0F38.W0 49 11:rrr:000).
func TILEZERO(t int) []byte {
	checkTile(t)
	return []byte{0xC4, 0xE2, 0x7B, 0x49, byte(0xC0 | t<<3)}
}

// TILELOADD encodes tileloadd tmm(t), [base + index·scale + disp]
// (VEX.128.F2.0F38.W0 4B /r, SIB): row i of the tile is loaded from
// base + disp + i·index·scale.
func TILELOADD(t int, m Mem) []byte { checkTile(t); return vexMem(3, 0x4B, t, 0, m, true) }

// TILESTORED encodes tilestored [base + index·scale + disp], tmm(t)
// (VEX.128.F3.0F38.W0 4B /r, SIB).
func TILESTORED(m Mem, t int) []byte { checkTile(t); return vexMem(2, 0x4B, t, 0, m, true) }

// TDPBSUD encodes tdpbsud tmm(c), tmm(a), tmm(b) (VEX.128.F3.0F38.W0 5E,
// reg = c, rm = a, vvvv = b): c.i32[m][n] += Σ_{k,j<4} s8(a[m][4k+j]) ·
// u8(b[k][4n+j]). The three tiles must be distinct (#UD otherwise).
func TDPBSUD(c, a, b int) []byte { return tdp(2, c, a, b) }

// TDPBSSD encodes tdpbssd tmm(c), tmm(a), tmm(b) (VEX.128.F2.0F38.W0 5E):
// as TDPBSUD with b signed too.
func TDPBSSD(c, a, b int) []byte { return tdp(3, c, a, b) }

func tdp(pp byte, c, a, b int) []byte {
	checkTile(c, a, b)
	if c == a || c == b || a == b {
		panic(fmt.Sprintf("x86: tdpb* tmm%d, tmm%d, tmm%d: the tiles must be distinct", c, a, b))
	}
	v := vex3(false, false, false, b, pp)
	return append(v, 0x5E, byte(0xC0|c<<3|a))
}

// LDTILECFGM emits ldtilecfg [m].
func LDTILECFGM(m Mem) { Raw("ldtilecfg "+m.String(), LDTILECFG(m)) }

// TILERELEASEI emits tilerelease.
func TILERELEASEI() { Raw("tilerelease", TILERELEASE()) }

// TILEZEROT emits tilezero tmm(t).
func TILEZEROT(t int) { Raw(fmt.Sprintf("tilezero tmm%d", t), TILEZERO(t)) }

// TILELOADDT emits tileloadd tmm(t), [m].
func TILELOADDT(t int, m Mem) { Raw(fmt.Sprintf("tileloadd tmm%d, %v", t, m), TILELOADD(t, m)) }

// TILESTOREDT emits tilestored [m], tmm(t).
func TILESTOREDT(m Mem, t int) { Raw(fmt.Sprintf("tilestored %v, tmm%d", m, t), TILESTORED(m, t)) }

// TDPBSUDT emits tdpbsud tmm(c), tmm(a), tmm(b).
func TDPBSUDT(c, a, b int) {
	Raw(fmt.Sprintf("tdpbsud tmm%d, tmm%d, tmm%d", c, a, b), TDPBSUD(c, a, b))
}

// TDPBSSDT emits tdpbssd tmm(c), tmm(a), tmm(b).
func TDPBSSDT(c, a, b int) {
	Raw(fmt.Sprintf("tdpbssd tmm%d, tmm%d, tmm%d", c, a, b), TDPBSSD(c, a, b))
}

// GP is the number (0…15) of a physical general-purpose register.
func GP(r reg.Physical) int { return num(r) }

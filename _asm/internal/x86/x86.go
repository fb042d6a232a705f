// Package x86 emits, through avo, the x86 instructions the Go assembler
// rejects (the VEX AVX-VNNI form of VPDPBUSD, VDPBF16PS, VCVTNE2PS2BF16) as BYTE lines
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

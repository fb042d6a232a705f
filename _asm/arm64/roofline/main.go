//go:generate go run . -out ../../../roofline/peak_arm64.s

// Command roofline generates roofline's arm64 compute-ceiling
// microkernels: 24 independent chains of one instruction (enough to cover
// a 4-cycle latency on 4+ pipes) over registers 8…31, iters times.
package main

import (
	"flag"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// peak is one microkernel: its setup (the operand in register 0), whether
// its registers are NEON (V) or SVE (z), and the chain instruction of
// register r.
type peak struct {
	name, label string
	setup       func(f *a64.File)
	sve         bool
	chain       func(f *a64.File, r int)
}

// bf16One puts BF16 1.0 in both halves of R1.
func bf16One(f *a64.File) { f.OpC("BF16 1.0 in both halves", "MOVD $0x3f803f80, R1") }

var peaks = []peak{
	{"fmaNEON", "n", func(f *a64.File) {
		f.Op("FMOVS $1.0, F0")
		f.Op("VDUP V0.S[0], V0.S4")
	}, false, func(f *a64.File, r int) { f.Op("VFMLA V0.S4, V0.S4, V%d.S4", r) }},
	{"fmaSVE", "s", func(f *a64.File) {
		f.Word("ptrue p0.s")
		f.Word("fmov z0.s, #1.0")
	}, true, func(f *a64.File, r int) { f.Word("fmla z%d.s, p0/m, z0.s, z0.s", r) }},
	{"bf16DotNEON", "bd", func(f *a64.File) {
		bf16One(f)
		f.Op("VDUP R1, V0.S4")
	}, false, func(f *a64.File, r int) { f.Word("bfdot v%d.4s, v0.8h, v0.8h", r) }},
	{"bf16MMLANEON", "bm", func(f *a64.File) {
		bf16One(f)
		f.Op("VDUP R1, V0.S4")
	}, false, func(f *a64.File, r int) { f.Word("bfmmla v%d.4s, v0.8h, v0.8h", r) }},
	{"bf16DotSVE", "bs", func(f *a64.File) {
		bf16One(f)
		f.Word("dup z0.s, w1")
	}, true, func(f *a64.File, r int) { f.Word("bfdot z%d.s, z0.h, z0.h", r) }},
}

func main() {
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	f := a64.NewFile("arm64 && gc && !purego",
		"Compute-ceiling microkernels for arm64: 24 independent FMA chains",
		"(enough to cover a 4-cycle latency on 4+ FMA pipes), NEON and SVE; and",
		"24 chains of the FEAT_BF16 BFDOT and BFMMLA (WORD-encoded).")
	for _, p := range peaks {
		f.Func(p.name, "(iters int) float32", "$0-12")
		f.Op("MOVD iters+0(FP), R0")
		p.setup(f)
		if p.sve {
			f.ZeroZ(8, 24)
		} else {
			f.ZeroV(8, 24)
		}
		f.Op("CBZ R0, %sdone", p.label)
		f.Label(p.label + "loop")
		for r := 8; r < 32; r++ {
			p.chain(f, r)
		}
		f.Op("SUBS $1, R0, R0")
		f.Op("BNE %sloop", p.label)
		f.Label(p.label + "done")
		f.Op("FMOVS F31, ret+8(FP)") // one chain's result, so none is dead
		f.Op("RET")
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

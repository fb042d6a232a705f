//go:generate go run . -out ../../../internal/vmath/vmath_arm64.s

// Command vmath generates internal/vmath's arm64 assembly: the NEON exp
// (see vmath_arm64.go for the Go semantics), the range reduction and
// Cephes polynomial of the AVX2 exp, 2ⁿ built in the exponent bits.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The constants of exp, each broadcast into its own register (V16 up).
var (
	clampHi = float32(88.3)
	clampLo = float32(-87.3)
	log2e   = float32(1.44269504088896341)
	ln2hi   = float32(0.693359375)
	ln2lo   = float32(-2.12194440e-4)
	// the polynomial p0·r⁵ + … + p5 (Cephes expf), Horner from p0
	poly = []float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}
)

func main() {
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	f := a64.NewFile("arm64 && gc && !purego",
		"NEON exp (see vmath_arm64.go for the Go semantics): the range",
		"reduction and Cephes polynomial of expAVX2, 2ⁿ built in the exponent",
		"bits. Vector FMIN/FMAX/FMUL/FADD/FMLS/FRINTN/FCVTNS/ADD/SHL are",
		"WORD-encoded.")
	exp(f)
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// constant is one of exp's broadcast constants and its note.
type constant struct {
	v    float32
	name string
}

// Registers of exp's constants (expConsts), from V16: the clamp (hi, lo),
// log2(e), ln2 (hi, lo), the polynomial p0…p5, 1, then the exponent bias.
const (
	vConsts = 16
	vPoly   = vConsts + 5 // p0
)

// exp writes expNEON(dst, src []float32): dst[i] = exp(src[i]) for the
// first len(src)&^3 elements, four per iteration.
func exp(f *a64.File) {
	f.Func("expNEON", "(dst []float32, src []float32)", "$0-48")
	f.Op("MOVD dst_base+0(FP), R0")
	f.Op("MOVD src_base+24(FP), R1")
	f.Op("MOVD src_len+32(FP), R2")
	f.Op("LSR $2, R2, R2")
	f.Op("CBZ R2, done")
	one, bias := expConsts(f)

	f.Label("loop")
	f.Op("VLD1.P 16(R1), [V0.S4]")
	reduce(f)
	y := horner(f)
	f.Word("fadd v%d.4s, v%d.4s, v%d.4s", y, y, one)
	f.Word("fcvtns v1.4s, v1.4s") // 2ⁿ: (n + 127) << 23
	f.Word("add v1.4s, v1.4s, v%d.4s", bias)
	f.Word("shl v1.4s, v1.4s, #23")
	f.Word("fmul v%d.4s, v%d.4s, v1.4s", y, y)
	f.Op("VST1.P [V%d.S4], 16(R0)", y)
	f.Op("SUBS $1, R2, R2")
	f.Op("BNE loop")

	f.Label("done")
	f.Op("RET")
}

// expConsts broadcasts the constants into V16 up (see vConsts) and
// returns the registers of 1 and of the exponent bias.
func expConsts(f *a64.File) (one, bias int) {
	consts := []constant{{clampHi, "88.3"}, {clampLo, "-87.3"}, {log2e, "log2(e)"}, {ln2hi, "ln2 hi"}, {ln2lo, "ln2 lo"}}
	for i, p := range poly {
		consts = append(consts, constant{p, fmt.Sprintf("p%d", i)})
	}
	consts = append(consts, constant{1, "1"})
	for i, c := range consts {
		f.OpC(c.name, "MOVW $%#08x, R3", math.Float32bits(c.v))
		f.Op("VDUP R3, V%d.S4", vConsts+i)
	}
	bias = vConsts + len(consts)
	f.Op("MOVW $127, R3")
	f.Op("VDUP R3, V%d.S4", bias)
	return bias - 1, bias
}

// reduce clamps x (V0) and splits it: n = round(x·log2 e) in V1, r = x −
// n·ln2 in V0.
func reduce(f *a64.File) {
	f.Word("fmin v0.4s, v0.4s, v16.4s")
	f.Word("fmax v0.4s, v0.4s, v17.4s")
	f.Word("fmul v1.4s, v0.4s, v18.4s") // n = round(x·log2 e)
	f.Word("frintn v1.4s, v1.4s")
	f.Word("fmls v0.4s, v1.4s, v19.4s") // r = x − n·ln2 (two parts)
	f.Word("fmls v0.4s, v1.4s, v20.4s")
}

// horner evaluates the polynomial of r (V0), then r + y·r², alternating
// V2 and V3, and returns the register of the result.
func horner(f *a64.File) int {
	pv := func(i int) int { return vPoly + i } // register of p_i
	// y = p1 + p0·r, then y = p_i + y·r
	acc, next := 2, 3
	f.Op("VMOV V%d.B16, V%d.B16", pv(1), acc)
	f.OpC("y = p1 + p0·r", "VFMLA V%d.S4, V0.S4, V%d.S4", pv(0), acc)
	for i := 2; i < len(poly); i++ {
		f.Op("VMOV V%d.B16, V%d.B16", pv(i), next)
		f.OpC(fmt.Sprintf("y = p%d + y·r", i), "VFMLA V%d.S4, V0.S4, V%d.S4", acc, next)
		acc, next = next, acc
	}
	f.Word("fmul v4.4s, v0.4s, v0.4s") // r²
	f.Op("VMOV V0.B16, V%d.B16", next)
	f.OpC("y = r + y·r²", "VFMLA V%d.S4, V4.S4, V%d.S4", acc, next)
	return next
}

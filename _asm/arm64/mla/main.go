//go:generate go run . -isa neon -out ../../../kernels/mla/mla_neon_arm64.s

// Command mla generates kernels/mla's arm64 decode kernels at R = 512,
// DR = 64 (see mla_arm64.go for their Go semantics).
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ktune/ktune/_asm/internal/a64"
)

// The widths the kernels are specialised to: the latent rank R, the
// rotary width DR, a cache row R+DR floats.
const (
	R   = 512
	DR  = 64
	row = 4 * (R + DR) // bytes per cache row or query head
)

func main() {
	isa := flag.String("isa", "neon", "neon")
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	var f *a64.File
	switch *isa {
	case "neon":
		f = a64.NewFile("arm64 && gc && !purego",
			"NEON MLA decode kernels at R = 512, DR = 64 (see mla_arm64.go for",
			"their Go semantics): 4×4 score tiles, 4-head × 16-column latent",
			"accumulation. FADDP and vector FMUL are WORD-encoded.")
		scoresNEON(f)
		accumNEON(f)
	default:
		log.Fatalf("-isa %q: neon", *isa)
	}
	if err := f.WriteFile(*out); err != nil {
		log.Fatal(err)
	}
}

// quad is the register list of four consecutive vectors from V(first).
func quad(first int) string {
	return fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", first, first+1, first+2, first+3)
}

// zero clears V(first)…V(first+n-1).
func zero(f *a64.File, first, n int) {
	for v := first; v < first+n; v++ {
		f.Op("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
}

// scoresNEON writes mlaScoresNEON_576: s[h][j] = scale·q_h·k_j for 4
// heads × 4 keys at a time, the 576 dimensions 4 lanes at a time into
// V16–V31 (head i, key j in V(16+4i+j)), reduced by FADDP.
func scoresNEON(f *a64.File) {
	f.Func("mlaScoresNEON_576", "(q *float32, k *float32, s *float32, lds int, nh int, nk int, scale float32)", "$0-52")
	for _, a := range []string{"q+0(FP), R0", "k+8(FP), R1", "s+16(FP), R2", "lds+24(FP), R3", "nh+32(FP), R4", "nk+40(FP), R5"} {
		f.Op("MOVD %s", a)
	}
	f.Op("FMOVS scale+48(FP), F10")
	f.Op("VDUP V10.S[0], V10.S4")
	f.Op("LSL $2, R3, R3")
	f.OpC("4 rows of s", "LSL $2, R3, R21")
	f.Op("CBZ R4, sdone")
	f.Op("CBZ R5, sdone")

	f.Label("shloop")
	f.Op("MOVD R1, R7")
	f.Op("MOVD R5, R8")
	f.Op("MOVD R2, R9")
	f.Label("sjloop")
	zero(f, 16, 16)
	f.Op("MOVD R0, R10") // q rows R10–R13, k rows R14–R17
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", row, 9+i, 10+i)
	}
	f.Op("MOVD R7, R14")
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", row, 13+i, 14+i)
	}
	f.Op("MOVD $%d, R19", (R+DR)/4)
	f.Label("sdloop")
	for i := range 8 {
		f.Op("VLD1.P 16(R%d), [V%d.S4]", 10+i, i)
	}
	for i := range 4 {
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+j, i, 16+4*i+j)
		}
	}
	f.Op("SUBS $1, R19, R19")
	f.Op("BNE sdloop")
	f.Blank()
	f.Note("reduce each accumulator, scale, store s[h, j..j+3]")
	f.Op("MOVD R9, R20")
	for i := range 4 {
		a := 16 + 4*i
		f.Word("faddp v8.4s, v%d.4s, v%d.4s", a, a+1)
		f.Word("faddp v9.4s, v%d.4s, v%d.4s", a+2, a+3)
		f.Word("faddp v8.4s, v8.4s, v9.4s")
		f.Word("fmul v8.4s, v8.4s, v10.4s")
		f.Op("VST1 [V8.S4], (R20)")
		f.Op("ADD R3, R20, R20")
	}
	f.Op("ADD $16, R9, R9")
	f.Op("ADD $%d, R7, R7", 4*row)
	f.Op("SUBS $4, R8, R8")
	f.Op("BNE sjloop")
	f.Blank()
	f.Op("ADD $%d, R0, R0", 4*row)
	f.Op("ADD R21, R2, R2")
	f.Op("SUBS $4, R4, R4")
	f.Op("BNE shloop")
	f.Label("sdone")
	f.Op("RET")
}

// accumNEON writes mlaAccumNEON_576: z_h[c] = corr_h·z_h[c] + Σ_j
// pt[j][h]·v_j[c] over the R latent columns, 4 heads × 16 columns at a
// time (head i in V(16+4i)…V(19+4i)).
func accumNEON(f *a64.File) {
	f.Func("mlaAccumNEON_576", "(z *float32, pt *float32, v *float32, corr *float32, nh int, nk int, ldpt int)", "$0-56")
	for _, a := range []string{"z+0(FP), R0", "pt+8(FP), R1", "v+16(FP), R2", "corr+24(FP), R3", "nh+32(FP), R4", "nk+40(FP), R5", "ldpt+48(FP), R6"} {
		f.Op("MOVD %s", a)
	}
	f.Op("LSL $2, R6, R6")
	f.Op("CBZ R4, adone")

	f.Label("ahloop")
	f.Op("MOVD $0, R7")
	f.Op("MOVD R3, R8")
	for i := range 4 {
		f.Op("VLD1R.P 4(R8), [V%d.S4]", 12+i)
	}
	f.Label("adloop")
	zero(f, 16, 16)
	f.Op("ADD R7, R0, R9") // the 4 heads' z rows R9–R12
	for i := 1; i < 4; i++ {
		f.Op("ADD $%d, R%d, R%d", 4*R, 8+i, 9+i)
	}
	for i := range 4 {
		f.Op("VLD1 (R%d), %s", 9+i, quad(8))
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 12+i, 8+j, 16+4*i+j)
		}
	}
	f.Op("MOVD R1, R13")
	f.Op("ADD R7, R2, R14")
	f.Op("MOVD R5, R15")
	f.Op("CBZ R15, astore")
	f.Label("ajloop")
	f.Op("VLD1 (R14), %s", quad(0))
	f.Op("ADD $%d, R14, R14", row)
	f.Op("MOVD R13, R16")
	for i := range 4 {
		f.Op("VLD1R.P 4(R16), [V%d.S4]", 4+i)
	}
	f.Op("ADD R6, R13, R13")
	for i := range 4 {
		for j := range 4 {
			f.Op("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+i, j, 16+4*i+j)
		}
	}
	f.Op("SUBS $1, R15, R15")
	f.Op("BNE ajloop")
	f.Label("astore")
	for i := range 4 {
		f.Op("VST1 %s, (R%d)", quad(16+4*i), 9+i)
	}
	f.Op("ADD $64, R7, R7")
	f.Op("CMP $%d, R7", 4*R)
	f.Op("BNE adloop")
	f.Blank()
	f.Op("ADD $%d, R0, R0", 4*4*R)
	f.Op("ADD $16, R1, R1")
	f.Op("ADD $16, R3, R3")
	f.Op("SUBS $4, R4, R4")
	f.Op("BNE ahloop")
	f.Label("adone")
	f.Op("RET")
}

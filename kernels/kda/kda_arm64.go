//go:build arm64 && gc && !purego

// arm64 stubs and registration of the hand-written NEON and SVE KDA
// recurrences (the strip driver is shared with amd64: kda_strips_asm.go).
package kda

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// kdaStripsNEON_16 runs one KDA token on nstrips strips of 16 value
// columns of a K×lds row-major state s (k rows): per strip, see
// recurrentGeneric:
//
//	for i < k { p += kk[i]·(alpha[i]·S[i,strip]) }
//	u = beta·(v[strip] − p)
//	for i < k { S[i,strip] = alpha[i]·S[i,strip] + kk[i]·u; o[strip] = Σ qs[i]·S[i,strip] }
//
//go:noescape
func kdaStripsNEON_16(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, nstrips int)

// kdaStripsSVE is kdaStripsNEON_16 over columns [0, ncols) in strips of
// min(strip, 4·VL/32) columns, the last one narrower (predicated):
// vector-length agnostic, no Go tail.
//
//go:noescape
func kdaStripsSVE(s *float32, lds int, k int, alpha *float32, kk *float32, qs *float32, v *float32, beta float32, o *float32, ncols int, strip int)

// sveStrip is the strip parameter of the sve variant: the widths that fit
// in four vectors of this machine's SVE length (16 at 128 bits, up to 64
// from 512 bits).
func sveStrip() kernel.Param {
	lanes := cpu.Get().SVEBits / 32
	p := kernel.Param{Name: "strip", Doc: "value columns per L1-resident strip of the state (at most four SVE vectors)", Values: []int{16}, Default: 16}
	for _, w := range []int{32, 64} {
		if w <= 4*lanes {
			p.Values = append(p.Values, w)
			p.Default = 32
		}
	}
	return p
}

func init() {
	strip := kernel.Param{Name: "strip", Doc: "value columns per L1-resident strip of the state", Values: []int{16}, Default: 16}
	neon := recurrentAsm(map[int]stripsFn{16: kdaStripsNEON_16})
	for _, op := range []string{OpDecode, OpPrefill} {
		register(op, kernel.Variant{Name: "neon", Doc: "hand-written NEON recurrence over L1-resident 16-column value strips", Priority: 20,
			Requires: cpu.NewSet(cpu.ASIMD), Threaded: true, Params: []kernel.Param{strip}}, neon)
		register(op, kernel.Variant{Name: "sve", Doc: "hand-written SVE recurrence (vector-length agnostic) over L1-resident value strips, predicated tails", Priority: 25,
			Requires: cpu.NewSet(cpu.SVE), Threaded: true, Params: []kernel.Param{sveStrip()}}, recurrentCols(kdaStripsSVE))
	}
}

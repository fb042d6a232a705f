//go:generate go run . -isa avx512 -out ../../../kernels/gemm/gemm_vnni_amd64.s -stubs ../../../kernels/gemm/gemm_vnni_stubs_amd64.go -pkg gemm
//go:generate go run . -isa avxvnni -out ../../../kernels/gemm/gemm_avxvnni_amd64.s -stubs ../../../kernels/gemm/gemm_avxvnni_stubs_amd64.go -pkg gemm
//go:generate go run . -isa avx2 -out ../../../kernels/gemm/gemm_avx2int8_amd64.s -stubs ../../../kernels/gemm/gemm_avx2int8_stubs_amd64.go -pkg gemm

// Command vnni generates the int8-activation micro-kernels of kernels/gemm
// for the Q8, Q4, Q3, Q6, Q2 and Q5 panel formats of package quant: M activation rows
// against 16-row weight panels, one int32 dot product per (row, output,
// group of 32 k) by VPDPBUSD, flushed per group into f32 accumulators.
//
//	-isa avx512   vnni{Q8,Q4,Q4M,Q3,Q6,Q2,Q5}_{M}x16, M = 1…12: EVEX VPDPBUSD zmm with the
//	              activation dword broadcast from memory; one 64-byte line is
//	              the u8 operand for 16 rows × 4 k; and vnni{Q4,Q4M,Q3,Q6,Q2,Q5,Q3K}_1x16d, one
//	              row on two weight streams (two halves of the panels) at once.
//	-isa avxvnni  avxvnni{Q8,Q4,Q4M,Q3,Q6,Q2,Q5}_{M}x16, M = 1…4: {vex} vpdpbusd ymm
//	              (BYTE-encoded through internal/x86); a line is two ymm of
//	              8 rows, done as two passes over the panel (the second from cache).
//	-isa avx2     avx2i8{Q8,Q4,Q4M,Q3,Q6,Q2,Q5}_{M}x16, M = 1…4: the avxvnni kernels on
//	              AVX2 (no VNNI): vpmaddubsw pair sums (u8·s8 in int16, exact for
//	              weights < 64) added in int16 over a group and widened once by
//	              vpmaddwd (Q4, Q3, Q2; Q8 split into nibbles, u = 16·hi + lo, each
//	              summed so), over half a group (Q5), or widened per vpmaddubsw
//	              (Q6), each prefetching the next panel into L2; and the test twins
//	              avxvnniTwin{Q4,Q4M,Q3,Q6,Q2,Q5}_{M}x16 (each vpdpbusd as
//	              vpmaddubsw+vpmaddwd+vpaddd, otherwise the avxvnni kernels).
//
// The kernels share one contract, documented on each stub (see also
// kernels/gemm/gemm_vnni_amd64.go): the zero point z of the weights (128
// for Q8, 8 for Q4 without a min, 4 for Q3, 32 for Q6, 16 for Q5) is folded into aux = −z·Σxq, which
// initialises each group's int32 accumulator; the activations' group scale
// xs (same layout as aux) multiplies the converted accumulator; with a
// min, aux holds float32(xs·Σxq) and the kernel adds m·aux in f32; Q2
// (quant/q2.go) has the min −d·(c−1)/4 of its scale words' offset codes
// c: aux holds float32(xs·Σxq)/4 and the kernel subtracts d·(c−1)·aux.
//
// The K formats Q3K, Q4K, Q5K and Q6K (quant/kquant.go) have the value
// lines of Q3, Q4, Q5 and Q6 (unsigned u, zero point 0) in super-blocks of
// 8 groups behind a 256-byte header; their kernels (every isa, M as the
// others; the avx2 ones decode as Q3/Q4's int16 group sums, Q5's half
// groups and Q6's twins) walk the super-blocks in pairs of groups, take
// each group's scale d·sc and min dm·mc from the header (the 16 or 8 code
// bytes widened to dwords, sc their bits 0–5 and mc their bits 6–7 below
// the min nibble, by shifts; d and dm widened from f16), and flush as Q4
// with a min: aux holds float32(xs·Σxq), the kernel subtracts dm·mc·aux.
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ktune/ktune/_asm/internal/rows"
	"github.com/ktune/ktune/_asm/internal/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var isa = flag.String("isa", "avx512", "avx512, avxvnni or avx2")

// kind is a weight format.
type kind struct {
	name     string
	lines    int // 64-byte lines per group
	gb       int // group record bytes
	scaleOff int // offset of the 16 f16 scales in a group record
	hasMin   bool
	z        int  // zero point folded into aux (0 with a min)
	q2       bool // Q2: scale words (f16 scale, 4-bit offset code)
	// kq: a K format (quant/kquant.go): super-blocks of 8 groups, a
	// 256-byte header (6-bit scale and min codes per row and group, f16 d
	// and dm per row) before the groups' value lines (gb bytes each, the
	// base format's, no scales); w = (d·sc)·u − dm·mc.
	kq bool
}

// K format layout (quant/kquant.go).
const (
	kGroups   = 8   // groups per super-block
	kHeader   = 256 // header bytes per super-block record
	kMinOff   = 128 // [4][16]u8: the min codes' high nibbles
	kDOff     = 192 // [16]f16 d
	kDMOff    = 224 // [16]f16 dm
	kPairStep = 16  // the pair loop's index step (see kernelZ)
)

// sbBytes is a K format's super-block record size.
func (k kind) sbBytes() int { return kHeader + kGroups*k.gb }

// stride is the bytes of one panel per group: the group record, or for a
// K format its share of a super-block record.
func (k kind) stride() int {
	if k.kq {
		return k.sbBytes() / kGroups
	}
	return k.gb
}

var kinds = []kind{
	{name: "Q8", lines: 8, gb: 544, scaleOff: 512, z: 128},
	{name: "Q4", lines: 4, gb: 288, scaleOff: 256, z: 8},
	{name: "Q4M", lines: 4, gb: 320, scaleOff: 256, hasMin: true},
	{name: "Q3", lines: 3, gb: 224, scaleOff: 192, z: 4},
	{name: "Q6", lines: 6, gb: 416, scaleOff: 384, z: 32},
	{name: "Q2", lines: 2, gb: 160, scaleOff: 128, hasMin: true, q2: true},
	{name: "Q5", lines: 5, gb: 352, scaleOff: 320, z: 16},
	{name: "Q3K", lines: 3, gb: 192, kq: true},
	{name: "Q4K", lines: 4, gb: 256, kq: true},
	{name: "Q5K", lines: 5, gb: 320, kq: true},
	{name: "Q6K", lines: 6, gb: 384, kq: true},
}

const signature = "func(w *byte, np, ng int, xq *int8, ldx int, aux *int32, ldaux int, xs *float32, y *float32, ldy int, acc bool)"

func doc(name string, k kind, m, lanes int, extra ...string) {
	u := "u[p,g,i,j]"
	switch k.name {
	case "Q3":
		u = "u[p,g,i,j] (3 bits)"
	case "Q6":
		u = "u[p,g,i,j] (6 bits)"
	case "Q2":
		u = "u[p,g,i,j] (2 bits)"
	case "Q5":
		u = "u[p,g,i,j] (5 bits)"
	case "Q4", "Q4M":
		u = "u[p,g,i,j] (a nibble)"
	case "Q3K", "Q4K", "Q5K", "Q6K":
		u = fmt.Sprintf("u[p,g,i,j] (%s bits)", k.name[1:2])
	}
	dot := "Σ_{j<32} int32(" + u + ")·int32(xq[r·ldx+32g+j])"
	rowWord := "rows"
	if m == 1 {
		rowWord = "row"
	}
	lines := []string{
		fmt.Sprintf("%s computes %d activation %s against np consecutive %s panels", name, m, rowWord, k.name),
		fmt.Sprintf("(ng groups of %d bytes each) at w; xq rows are ldx bytes apart, y rows ldy floats:", k.gb),
		"",
		fmt.Sprintf("\tfor p < np, r < %d, i < 16:", m),
	}
	if k.kq {
		lines[1] = fmt.Sprintf("(ng/8 super-blocks of %d bytes each: a 256-byte header, then 8 groups of %d bytes)", k.sbBytes(), k.gb)
		lines = append(lines[:2], "at w; xq rows are ldx bytes apart, y rows ldy floats (ng a multiple of 8):", lines[2], lines[3])
	}
	if k.kq {
		lines = append(lines,
			"\t\tt := Σ_{g<ng} (s[p,g,i]·(xs[g·ldaux/4+r]·float32("+dot+"))",
			"\t\t\t− mn[p,g,i]·math.Float32frombits(uint32(aux[g·ldaux/4+r])))  // aux: float32(xs·Σxq) bits",
			"\t\t\t// s = d·sc, mn = dm·mc: the group's 6-bit codes, the super-block's f16 d, dm")
	} else if k.q2 {
		lines = append(lines,
			"\t\tt := Σ_{g<ng} (d[p,g,i]·(xs[g·ldaux/4+r]·float32("+dot+"))",
			"\t\t\t− d[p,g,i]·float32(c[p,g,i]−1)·math.Float32frombits(uint32(aux[g·ldaux/4+r])))",
			"\t\t\t// aux: float32(xs·Σxq)/4 bits; d = f16(h &^ 15), c = h & 15 of the scale word h")
	} else if k.hasMin {
		lines = append(lines,
			"\t\tt := Σ_{g<ng} (d[p,g,i]·(xs[g·ldaux/4+r]·float32("+dot+"))",
			"\t\t\t+ mn[p,g,i]·math.Float32frombits(uint32(aux[g·ldaux/4+r])))  // aux: float32(xs·Σxq) bits")
	} else {
		lines = append(lines,
			"\t\tt := Σ_{g<ng} d[p,g,i]·(xs[g·ldaux/4+r]·float32("+dot+" + aux[g·ldaux/4+r]))",
			fmt.Sprintf("\t\t\t// aux = −%d·Σxq: the weights' zero point; xs: the activations' group scales", k.z))
	}
	lines = append(lines,
		"\t\ty[r·ldy+16p+i] = t  // or += when acc",
		"",
		"with u the stored weights of panel p, d its f16 scales (and mn its mins): see package quant.",
	)
	if lanes == 8 {
		lines = append(lines, "The panel's two halves of 8 rows are computed one after the other.")
	}
	lines = append(lines, extra...)
	Doc(lines...)
}

// loadRows addresses the m activation rows at xq (stride ldx).
func loadRows(m int) rows.Addr {
	xp := Load(Param("xq"), GP64())
	if m == 1 {
		return rows.New(1, xp, nil)
	}
	return rows.New(m, xp, Load(Param("ldx"), GP64()))
}

// ---- AVX-512 ---------------------------------------------------------------

// prefetchDist is how far ahead (bytes) the zmm kernels prefetch the
// weight stream.
var prefetchDist = 2048

// stream is one weight stream of a zmm kernel: its record pointer wp (a K
// format's pair pointer vp), its per-row f32 accumulators f and, where
// registers allow, its super-block's widened d and dm.
type stream struct {
	wp, vp  Register
	f       []VecVirtual
	dK, dmK VecVirtual
}

// kernelZ generates vnni{k}_{m}x16, or with dual (m = 1) its two-stream
// twin vnni{k}_1x16d: the same computation on the np panels at w and, side
// by side group by group, on the np panels that follow them (panels
// np…2np−1 of the call, written to y + 16·np), so that one thread keeps
// two sequential streams in flight (one stream reads ~13% below the
// 4-stream read ceiling on the Zen 5 VM: 34–36 against 38–41 GB/s on one
// core; kernels/gemm's vnniZd lists the formats this speeds up).
func kernelZ(k kind, m int, dual bool) {
	name := fmt.Sprintf("vnni%s_%dx16", k.name, m)
	if dual {
		name += "d"
	}
	TEXT(name, NOSPLIT, signature)
	if dual {
		doc(name, k, m, 16, "",
			fmt.Sprintf("Two streams: the same on the np panels after them (panels np…2np−1, output at y + 16·np), group by group beside the first (vnni%s_1x16 on 2np panels).", k.name))
	} else {
		doc(name, k, m, 16)
	}
	wp := Load(Param("w"), GP64())
	np := Load(Param("np"), GP64())
	yp := Load(Param("y"), GP64())
	var mask, mask3, mask4 VecVirtual
	switch k.lines {
	case 4:
		mask = bcastZ(0x0f0f0f0f)
	case 3:
		mask, mask3 = bcastZ(0x07070707), bcastZ(0x03030303)
	case 6:
		mask, mask3, mask4 = bcastZ(0x3f3f3f3f), bcastZ(0x03030303), bcastZ(0x0f0f0f0f)
	case 2:
		// mask3: the scale word's f16 without its offset code
		mask, mask3 = bcastZ(0x03030303), bcastZ(0xfff0fff0)
	case 5:
		// mask: Q4's nibbles; mask3: bit 4 of each byte, the fifth bit
		mask, mask3 = bcastZ(0x0f0f0f0f), bcastZ(0x10101010)
	}

	Label(name + "_panel")
	// the second stream's record: wpB = wp + np·(panel bytes), panel
	// bytes = ng·stride() (np, ng: the arguments, not the counters)
	var wpB, vpB Register
	if dual {
		wpB = Load(Param("np"), GP64())
		pb := Load(Param("ng"), GP64())
		IMUL3Q(U32(k.stride()), pb, pb)
		IMULQ(pb, wpB)
		ADDQ(wp, wpB)
	}
	x := loadRows(m)
	ap := Load(Param("aux"), GP64())
	xsp := Load(Param("xs"), GP64())
	// las: ldaux, in a register but for the K kernels (which need two
	// more: with 12 rows the 15 would not do), which add it from memory.
	var las Op
	if k.kq {
		b, err := Param("ldaux").Resolve()
		if err != nil {
			log.Fatal(err)
		}
		las = b.Addr
	} else {
		las = Load(Param("ldaux"), GP64())
	}
	g := Load(Param("ng"), GP64())
	// A K format's kernel loops over super-blocks (g: ng/8 of them; wp at
	// the record), each a loop over 4 pairs of groups: q = 16·pair indexes
	// the header (the pair's scale bytes at wp + 2q, its min nibbles at
	// wp + 128 + q: the even group's the low ones), vp the pair's value
	// lines.
	var vp Register
	var q GPVirtual
	nsub := 1
	if k.kq {
		SHRQ(U8(3), g)
		vp, q = GP64(), GP64()
		nsub = 2
		if dual {
			vpB = GP64()
		}
	}
	// Where registers allow (the decode's M rows, the first 9 or so),
	// a K kernel keeps the super-block's widened d and dm (dK, dmK) and
	// the code masks 0x3f (m63) and 0x3c (m3c) in registers; otherwise it
	// widens d and dm per group and masks by shifts.
	var dK, dmK, m63, m3c VecVirtual
	if k.kq {
		nmask := map[int]int{3: 2, 4: 1, 5: 2, 6: 3}[k.lines]
		extra := 32 - 2*m - nmask - 7
		if extra >= 2 {
			dK, dmK = ZMM(), ZMM()
		}
		if extra >= 4 {
			m3c = bcastZ(0x3c3c3c3c)
			if k.lines == 6 {
				m63 = mask // 0x3f per byte
			} else {
				m63 = bcastZ(0x3f3f3f3f)
			}
		}
	}
	newF := func() []VecVirtual {
		f := make([]VecVirtual, m)
		for r := range f {
			f[r] = ZMM()
			VPXORD(f[r], f[r], f[r])
		}
		return f
	}
	streams := []stream{{wp: wp, vp: vp, f: newF(), dK: dK, dmK: dmK}}
	if dual {
		b := stream{wp: wpB, vp: vpB, f: newF()}
		if dK != nil {
			b.dK, b.dmK = ZMM(), ZMM()
		}
		streams = append(streams, b)
	}

	// one set of accumulators for both groups of a K pair (their zeroing
	// reads them as far as the register allocator knows)
	acc := make([]VecVirtual, m)
	for r := range acc {
		acc[r] = ZMM()
	}
	Label(name + "_group")
	if k.kq {
		XORL(q.As32(), q.As32())
		for _, s := range streams {
			LEAQ(Mem{Base: s.wp, Disp: kHeader}, s.vp)
			if s.dK != nil {
				VCVTPH2PS(Mem{Base: s.wp, Disp: kDOff}, s.dK)
				VCVTPH2PS(Mem{Base: s.wp, Disp: kDMOff}, s.dmK)
			}
		}
		Label(name + "_pair")
	}
	// body emits one group (e: which of a K pair) of one stream into its
	// accumulators s.f; the group's activations are shared by the streams.
	body := func(s stream, e int) {
		vb, vd := s.wp, 0 // the group's value lines: vb + vd
		if k.kq {
			vb, vd = s.vp, e*k.gb
		}
		wl := func(disp int) Mem { return Mem{Base: vb, Disp: vd + disp} }
		// software prefetch of the record prefetchDist bytes ahead: one stream
		// per thread does not keep enough lines in flight for DRAM otherwise.
		// A K super-block is prefetched as a stream of 8 records of
		// stride() = 32 + gb bytes each (the header's share with the
		// group's lines), group j's at wp + j·stride() = vp + 4q − 256 +
		// e·stride(): each line about prefetchDist ahead of its use. (A
		// header line per pair beside each group's own lines left the
		// last group's lines only 448 bytes ahead: decode ran ~10% slower.)
		if k.kq {
			for off := 0; off < k.stride(); off += 64 {
				PREFETCHT0(Mem{Base: s.vp, Index: q, Scale: 4, Disp: prefetchDist - kHeader + e*k.stride() + off})
			}
		} else {
			for off := 0; off < k.gb; off += 64 {
				PREFETCHT0(wl(prefetchDist + off))
			}
		}
		for r := range acc {
			if k.hasMin || k.kq {
				VPXORD(acc[r], acc[r], acc[r])
			} else {
				VPBROADCASTD(Mem{Base: ap, Disp: 4 * r}, acc[r])
			}
		}
		if k.lines == 8 {
			for i := 0; i < 8; i++ {
				w := ZMM()
				VMOVDQU32(wl(64*i), w)
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 4*i), w, acc[r])
				}
			}
		} else if k.lines == 3 {
			// Q3 (quant/q3.go): quads 2c, 2c+1 are bits 0–2 and 3–5 of line c;
			// quad 6+c the low bits 6–7 of line c (c < 2) and the high bit
			// 6+c of line 2, merged by a bit select under mask3.
			dots := func(w VecVirtual, quad int) {
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 4*quad), w, acc[r])
				}
			}
			l2 := ZMM()
			VMOVDQU32(wl(128), l2)
			for c := 0; c < 3; c++ {
				l := l2
				if c < 2 {
					l = ZMM()
					VMOVDQU32(wl(64*c), l)
				}
				w := ZMM()
				VPANDD(mask, l, w)
				dots(w, 2*c)
				w = ZMM()
				VPSRLW(U8(3), l, w)
				VPANDD(mask, w, w)
				dots(w, 2*c+1)
				if c < 2 {
					lo, hi := ZMM(), ZMM()
					VPSRLW(U8(6), l, lo)
					VPSRLW(U8(4+c), l2, hi)
					VPTERNLOGD(U8(0xe4), mask3, hi, lo) // lo = lo&mask3 | hi&^mask3
					VPANDD(mask, lo, lo)
					dots(lo, 6+c)
				}
			}
		} else if k.lines == 2 {
			// Q2 (quant/q2.go): quad 4c+h is bits 2h, 2h+1 of line c.
			for c := 0; c < 2; c++ {
				l := ZMM()
				VMOVDQU32(wl(64*c), l)
				for h := 0; h < 4; h++ {
					w := ZMM()
					if h == 0 {
						VPANDD(mask, l, w)
					} else {
						VPSRLW(U8(2*h), l, w)
						VPANDD(mask, w, w)
					}
					for r := 0; r < m; r++ {
						VPDPBUSD_BCST(x.At(r, 4*(4*c+h)), w, acc[r])
					}
				}
			}
		} else if k.lines == 5 {
			// Q5 (quant/q5.go): quads 2c and 2c+1 are Q4's nibbles of line c;
			// bit h of each byte of line 4 is quad h's fifth bit, moved to bit
			// 4 by one word shift (left 4−h or right h−4: no bit crosses into
			// bit 4 of another byte), kept by mask3 and merged by one
			// VPTERNLOGD with the nibble.
			hb := ZMM()
			VMOVDQU32(wl(256), hb)
			fifth := func(h int) VecVirtual {
				t := ZMM()
				switch {
				case h < 4:
					VPSLLW(U8(4-h), hb, t)
					VPANDD(mask3, t, t)
				case h == 4:
					VPANDD(mask3, hb, t)
				default:
					VPSRLW(U8(h-4), hb, t)
					VPANDD(mask3, t, t)
				}
				return t
			}
			dots := func(w VecVirtual, quad int) {
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 4*quad), w, acc[r])
				}
			}
			for c := 0; c < 4; c++ {
				l := ZMM()
				VMOVDQU32(wl(64*c), l)
				w := fifth(2 * c)
				VPTERNLOGD(U8(0xf8), mask, l, w) // w = w | l&mask
				dots(w, 2*c)
				VPSRLW(U8(4), l, l)
				w = fifth(2*c + 1)
				VPTERNLOGD(U8(0xf8), mask, l, w)
				dots(w, 2*c+1)
			}
		} else if k.lines == 6 {
			// Q6 (quant/q6.go): quad c < 6 is bits 0–5 of line c; quad 6+h
			// gathers bits 6–7 of lines 3h, 3h+1, 3h+2 as its bits 0–1, 2–3,
			// 4–5: three shifts, two bit selects (under mask3, then mask4)
			// and the 6-bit mask.
			dots := func(w VecVirtual, quad int) {
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 4*quad), w, acc[r])
				}
			}
			for c := 0; c < 6; c++ {
				w := ZMM()
				VPANDD(wl(64*c), mask, w)
				dots(w, c)
			}
			for h := 0; h < 2; h++ {
				lo, hi := ZMM(), ZMM()
				VPSRLW(U8(6), wl(64*(3*h)), lo)
				VPSRLW(U8(4), wl(64*(3*h+1)), hi)
				VPTERNLOGD(U8(0xe4), mask3, hi, lo) // lo = lo&mask3 | hi&^mask3
				hi = ZMM()
				VPSRLW(U8(2), wl(64*(3*h+2)), hi)
				VPTERNLOGD(U8(0xe4), mask4, hi, lo) // lo = lo&mask4 | hi&^mask4
				VPANDD(mask, lo, lo)
				dots(lo, 6+h)
			}
		} else {
			for c := 0; c < 4; c++ {
				lo, hi := ZMM(), ZMM()
				VMOVDQU32(wl(64*c), lo)
				VPSRLW(U8(4), lo, hi)
				VPANDD(mask, lo, lo)
				VPANDD(mask, hi, hi)
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 8*c), lo, acc[r])
				}
				for r := 0; r < m; r++ {
					VPDPBUSD_BCST(x.At(r, 8*c+4), hi, acc[r])
				}
			}
		}
		d := ZMM()
		var mn VecVirtual
		if k.kq {
			// s = d·sc, mn = dm·mc for this group's 16 rows: sc is bits 0–5
			// of its scale bytes, mc their bits 6–7 below the min nibble
			// (the low one for even groups), moved to bits 2–5 by shifts.
			even := e == 0 // the min nibble: low (even group) or high
			raw := ZMM()
			VPMOVZXBD(Mem{Base: s.wp, Index: q, Scale: 2, Disp: 16 * e}, raw)
			if m63 != nil {
				VPANDD(m63, raw, d)
			} else {
				VPSLLD(U8(26), raw, d)
				VPSRLD(U8(26), d, d)
			}
			VCVTDQ2PS(d, d)
			t := ZMM()
			if s.dK != nil {
				VMULPS(s.dK, d, d)
			} else {
				VCVTPH2PS(Mem{Base: s.wp, Disp: kDOff}, t)
				VMULPS(t, d, d)
			}
			VPSRLD(U8(6), raw, raw)
			VPMOVZXBD(Mem{Base: s.wp, Index: q, Scale: 1, Disp: kMinOff}, t)
			switch {
			case m3c != nil && even:
				VPSLLD(U8(2), t, t)
				VPTERNLOGD(U8(0xf8), m3c, t, raw) // raw = raw | t&m3c
			case m3c != nil:
				VPSRLD(U8(2), t, t)
				VPTERNLOGD(U8(0xf8), m3c, t, raw)
			case even:
				VPSLLD(U8(28), t, t)
				VPSRLD(U8(26), t, t)
				VPORD(t, raw, raw)
			default:
				VPSRLD(U8(4), t, t)
				VPSLLD(U8(2), t, t)
				VPORD(t, raw, raw)
			}
			VCVTDQ2PS(raw, raw)
			mn = ZMM()
			if s.dmK != nil {
				VMULPS(s.dmK, raw, mn)
			} else {
				VCVTPH2PS(Mem{Base: s.wp, Disp: kDMOff}, mn)
				VMULPS(mn, raw, mn)
			}
		} else if k.q2 {
			// d = f16(h &^ 15); mn = d·(c − 1) with c = h & 15 (the kernel
			// subtracts mn·aux, aux = xs·Σxq/4)
			dy := YMM()
			VPANDD(Mem{Base: s.wp, Disp: k.scaleOff}, mask3.AsY(), dy)
			VCVTPH2PS(dy, d)
			mn = ZMM()
			VPMOVZXWD(Mem{Base: s.wp, Disp: k.scaleOff}, mn)
			VPANDND(mn, mask3, mn) // mn = ^mask3 & h: the code c
			VCVTDQ2PS(mn, mn)
			VFMSUB213PS(d, d, mn) // mn = c·d − d
		} else {
			VCVTPH2PS(Mem{Base: s.wp, Disp: k.scaleOff}, d)
		}
		if k.hasMin && !k.q2 {
			mn = ZMM()
			VCVTPH2PS(Mem{Base: s.wp, Disp: k.scaleOff + 32}, mn)
		}
		// The flush: three ops per row and group beside its 8 VPDPBUSD.
		// Measured without the VMULPS (wrong results, a timing probe only;
		// Zen 4 VM, 1 thread, 3 alternating rounds): Q4 4096×2304 from L3,
		// 8 rows 335–352 → 374–384 GFLOP/s, m = 512 317–348 → 371–380.
		// Dropping it for good needs activation scales per 256 (ggml's
		// Q8_K), not per 32: an accuracy change, not a scheduling one, and
		// one the golden tiny model's budgets reject (q4 prompt logits
		// 0.2305 → 0.2649 against 0.253, q4k 0.1948 → 0.2386 against
		// 0.215; model's TestAccuracy, coarseGridCheck).
		for r := 0; r < m; r++ {
			VCVTDQ2PS(acc[r], acc[r])
			VMULPS_BCST(Mem{Base: xsp, Disp: 4 * r}, acc[r], acc[r])
			VFMADD231PS(acc[r], d, s.f[r])
			if k.kq {
				VFNMADD231PS_BCST(Mem{Base: ap, Disp: 4 * r}, mn, s.f[r])
			} else if k.q2 {
				VFNMADD231PS_BCST(Mem{Base: ap, Disp: 4 * r}, mn, s.f[r])
			} else if k.hasMin {
				VFMADD231PS_BCST(Mem{Base: ap, Disp: 4 * r}, mn, s.f[r])
			}
		}
		if !k.kq {
			ADDQ(U32(k.gb), s.wp)
		}
	}
	for e := 0; e < nsub; e++ {
		for _, s := range streams {
			body(s, e)
		}
		x.Advance(U8(32))
		ADDQ(las, ap)
		ADDQ(las, xsp)
	}
	if k.kq {
		for _, s := range streams {
			ADDQ(U32(2*k.gb), s.vp)
		}
		ADDQ(U8(kPairStep), q)
		CMPQ(q, U8(4*kPairStep))
		JNE(LabelRef(name + "_pair"))
		for _, s := range streams {
			ADDQ(U32(k.sbBytes()), s.wp)
		}
	}
	DECQ(g)
	JNZ(LabelRef(name + "_group"))

	storeRows(name, "", yp, ops(streams[0].f), addPS, storePS)
	if dual {
		yb := Load(Param("np"), GP64())
		SHLQ(U8(6), yb)
		ADDQ(yp, yb)
		storeRows(name, "B", yb, ops(streams[1].f), addPS, storePS)
	}
	ADDQ(U8(64), yp)
	DECQ(np)
	JNZ(LabelRef(name + "_panel"))
	VZEROUPPER()
	RET()
}

// bcastZ returns a zmm holding the dword v in every lane.
func bcastZ(v uint32) VecVirtual {
	t := GP32()
	MOVL(U32(v), t)
	z := ZMM()
	VPBROADCASTD(t, z)
	return z
}

// storeRows writes (acc: adds then writes) one vector per row at yp + r·ldy.
func storeRows(name, sfx string, yp Register, f []Op, add, store func(v Op, addr Mem)) {
	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	row := GP64()
	MOVQ(yp, row)
	a := Load(Param("acc"), GP8())
	TESTB(a, a)
	JZ(LabelRef(name + "_store" + sfx))
	for r := range f {
		add(f[r], Mem{Base: row})
		store(f[r], Mem{Base: row})
		if r+1 < len(f) {
			ADDQ(ldy, row)
		}
	}
	JMP(LabelRef(name + "_stored" + sfx))
	Label(name + "_store" + sfx)
	for r := range f {
		store(f[r], Mem{Base: row})
		if r+1 < len(f) {
			ADDQ(ldy, row)
		}
	}
	Label(name + "_stored" + sfx)
}

func addPS(v Op, addr Mem)   { VADDPS(addr, v, v) }
func storePS(v Op, addr Mem) { VMOVUPS(v, addr) }

func ops[T Op](vs []T) []Op {
	out := make([]Op, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// ---- AVX-VNNI (VEX, ymm) ---------------------------------------------------

// Physical ymm registers (the BYTE-encoded vpdpbusd needs fixed numbers).
var (
	yAcc  = []VecPhysical{Y0, Y1, Y2, Y3}
	yF    = []VecPhysical{Y4, Y5, Y6, Y7}
	yLo   = Y8
	yHi   = Y9
	yB    = []VecPhysical{Y10, Y11}
	yD    = Y12
	yMin  = Y13
	yMask = Y14
	yTmp  = Y15
)

// yMask3 is Q3's second mask (0x03 per byte), in yMin's place; yMask5
// Q5's (0x10 per byte, the fifth bit), likewise.
var yMask3, yMask5 = yMin, yMin

// The AVX2 kernels (yAVX2, avx2i8*) and the test twins (yTwin,
// avxvnniTwin*) do without AVX-VNNI. A twin is its avxvnni kernel with
// each {vex} vpdpbusd replaced by vpmaddubsw, vpmaddwd with ones and
// vpaddd, exact while every u8·s8 pair sum fits an int16 (u < 128: all but
// Q8), and otherwise instruction for instruction the same
// (TestAVXVNNITwinsMatch), so its exact tests check the avx_vnni kernels'
// decode, tiling and flushes on machines without AVX-VNNI; only tests call
// it. The AVX2 kernels of 2-, 3- and 4-bit weights add the int16 pair sums
// over the whole group instead (one vpaddw per row and k-quad, one
// vpmaddwd per group: |Σ| ≤ 8·2·15·128 = 30720, Q2's ≤ 8·2·3·128); Q8's split each weight
// into nibbles and do the same with each; Q5's add them over half a group
// (4 k-quads: |Σ| ≤ 4·2·31·128 = 31744; five would not fit) and widen
// twice per group; Q6's (6-bit: only two k-quads' sums would fit) are its
// twins under another name.
var cOnes16, cSixteens16, cNibbles, cFifths Mem

// yLo16 are the avx2 Q8 kernels' int16 sums of the low nibbles' products
// (free until the flush, which reuses yD and yTmp).
var yLo16 = []VecPhysical{Y12, Y13, Y14, Y15}

// yQ5Sum16 are the avx2 Q5 kernels' int16 sums of half a group, one per
// row: dead at the flush (which reuses yD and yTmp), and ordered so that
// with M ≤ 2 rows yMask and yMask5 keep their masks (with 3 yMask5's
// comes from memory, with 4 yMask's too).
var yQ5Sum16 = []VecPhysical{Y12, Y15, Y13, Y14}

func bcastY(v uint32, dst VecPhysical) {
	t := GP32()
	MOVL(U32(v), t)
	VMOVD(t, dst.AsX())
	VPBROADCASTD(dst.AsX(), dst)
}

// yMode is what kernelY emits.
type yMode int

const (
	yVNNI yMode = iota // avxvnni*: {vex} vpdpbusd
	yTwin              // avxvnniTwin*: each vpdpbusd as vpmaddubsw, vpmaddwd(ones), vpaddd (tests only)
	yAVX2              // avx2i8*: int16 sums over the group where they fit, else as yTwin
)

func kernelY(k kind, m int, mode yMode) {
	name := fmt.Sprintf("avxvnni%s_%dx16", k.name, m)
	switch mode {
	case yTwin:
		name = fmt.Sprintf("avxvnniTwin%s_%dx16", k.name, m)
	case yAVX2:
		name = fmt.Sprintf("avx2i8%s_%dx16", k.name, m)
	}
	// q8: nibble products summed in int16 (yAcc: hi, yLo16: lo); i16: the
	// products of 3- and 4-bit weights summed in int16 in yAcc. Both
	// widen once per group and add aux then.
	q8 := mode == yAVX2 && k.name == "Q8"
	i16 := mode == yAVX2 && (k.name == "Q4" || k.name == "Q4M" || k.name == "Q3" || k.q2 || k.name == "Q3K" || k.name == "Q4K")
	// q5: Q5's products summed in int16 over each half group (yQ5Sum16),
	// widened and added to yAcc (aux) twice per group.
	q5 := mode == yAVX2 && (k.name == "Q5" || k.name == "Q5K")
	TEXT(name, NOSPLIT, signature)
	switch {
	case q8:
		doc(name, k, m, 8, "", "AVX2 (no VNNI): each weight byte split into nibbles, u = 16·hi + lo, each",
			"nibble's products paired by vpmaddubsw and summed over the group's 8 lines in int16",
			"(exact: |Σ| ≤ 8·2·15·128 = 30720 < 2^15), then widened by vpmaddwd (16s for hi, ones",
			"for lo) and added to aux.")
	case i16:
		bound := "8·2·15·128 = 30720"
		if k.q2 {
			bound = "8·2·3·128 = 6144"
		}
		doc(name, k, m, 8, "", "AVX2 (no VNNI): the u8·s8 products paired by vpmaddubsw and summed over the",
			"group's 8 k-quads in int16 (exact: |Σ| ≤ "+bound+" < 2^15), widened once",
			"per group by vpmaddwd with ones.")
	case q5:
		doc(name, k, m, 8, "", "AVX2 (no VNNI): the u8·s8 products paired by vpmaddubsw and summed over",
			"half a group (4 k-quads) in int16 (exact: |Σ| ≤ 4·2·31·128 = 31744 < 2^15),",
			"widened by vpmaddwd with ones and added to aux, twice per group.")
	case mode == yAVX2:
		doc(name, k, m, 8, "", fmt.Sprintf("avxvnni%s_%dx16 on AVX2: vpmaddubsw, vpmaddwd with ones, vpaddd in place", k.name, m),
			"of each vpdpbusd (exact: u < 64, so no int16 pair sum saturates; 6-bit weights'",
			"int16 sums over a group could).")
	case mode == yTwin:
		doc(name, k, m, 8, "", fmt.Sprintf("Test twin of avxvnni%s_%dx16: vpmaddubsw, vpmaddwd, vpaddd in place", k.name, m),
			"of each vpdpbusd (AVX2; exact for these weights). Only tests call it.")
	default:
		doc(name, k, m, 8)
	}
	wp := Load(Param("w"), GP64())
	np := Load(Param("np"), GP64())
	yp := Load(Param("y"), GP64())
	switch k.lines {
	case 4:
		bcastY(0x0f0f0f0f, yMask)
	case 3:
		bcastY(0x07070707, yMask)
		bcastY(0x03030303, yMask3)
	case 6:
		bcastY(0x3f3f3f3f, yMask)
	case 2:
		bcastY(0x03030303, yMask)
	case 5:
		if !q5 || m < 4 {
			bcastY(0x0f0f0f0f, yMask)
		}
		if !q5 || m < 3 {
			bcastY(0x10101010, yMask5)
		}
	}
	// pb: a panel's bytes, ng·gb. The avx2 kernels prefetch the next
	// panel's records (see below).
	pf := mode == yAVX2
	var pb Register
	if pf {
		pb = Load(Param("ng"), GP64())
		IMUL3Q(U32(k.stride()), pb, pb)
	}
	Label(name + "_panel")
	for h := 0; h < 2; h++ {
		sfx := fmt.Sprint(h)
		x := loadRows(m)
		ap := Load(Param("aux"), GP64())
		xsp := Load(Param("xs"), GP64())
		// K formats: as kernelZ, super-blocks (g of them, wh − 32h at the
		// record) of 4 pairs of groups (q = 16·pair indexes the header,
		// vp the pair's value lines), ldaux added from memory.
		var las Op
		if k.kq {
			b, err := Param("ldaux").Resolve()
			if err != nil {
				log.Fatal(err)
			}
			las = b.Addr
		} else {
			las = Load(Param("ldaux"), GP64())
		}
		g := Load(Param("ng"), GP64())
		var vp Register
		var q GPVirtual
		nsub := 1
		if k.kq {
			SHRQ(U8(3), g)
			vp, q = GP64(), GP64()
			nsub = 2
		}
		wh := GP64()
		LEAQ(Mem{Base: wp, Disp: 32 * h}, wh)
		for r := 0; r < m; r++ {
			VPXOR(yF[r], yF[r], yF[r])
		}
		Label(name + "_group" + sfx)
		if k.kq {
			LEAQ(Mem{Base: wh, Disp: kHeader}, vp)
			XORL(q.As32(), q.As32())
			if pf {
				// the next panel's header: half of it per pass
				for j := 2 * h; j < 2*h+2; j++ {
					PREFETCHT1(Mem{Base: wh, Index: pb, Scale: 1, Disp: 64*j - 32*h})
				}
			}
			Label(name + "_pair" + sfx)
		}
		for e := 0; e < nsub; e++ {
			var vb Register = wh // the group's value lines: vb + vd (vb − 32h line-aligned)
			vd := 0
			if k.kq {
				vb, vd = vp, e*k.gb
			}
			if pf {
				// The second half-panel pass reads its lines from cache: without
				// help DRAM would idle through it. Each pass prefetches about
				// half of the next panel's group record, so the stream keeps
				// going through both passes: a line address every 64 bytes,
				// nl = ⌈gb/64⌉ of them (with the next record's, every line of
				// the stream), n0 in pass 0 and the rest in pass 1 (wh − 32h
				// is this group's record). Into L2: with PREFETCHT0 the next
				// panel evicted this one from L1 before its second pass, and
				// Q5's kernels ran no faster than without. (After the last
				// panel the addresses are past w: prefetches never fault.)
				nl := (k.gb + 63) / 64
				n0 := (nl + 1) / 2
				for j := h * n0; j < n0+h*(nl-n0); j++ {
					PREFETCHT1(Mem{Base: vb, Index: pb, Scale: 1, Disp: vd + 64*j - 32*h})
				}
			}
			for r := 0; r < m; r++ {
				if k.hasMin || k.kq || q8 || i16 {
					VPXOR(yAcc[r], yAcc[r], yAcc[r])
				} else {
					VPBROADCASTD(Mem{Base: ap, Disp: 4 * r}, yAcc[r])
				}
				if q8 {
					VPXOR(yLo16[r], yLo16[r], yLo16[r])
				}
			}
			nb := 0
			dot := func(w VecPhysical, r, disp int) {
				b := yB[nb%2]
				nb++
				VPBROADCASTD(x.At(r, disp), b)
				if i16 {
					VPMADDUBSW(b, w, b) // u8·s8 pair sums (int16)
					VPADDW(b, yAcc[r], yAcc[r])
					return
				}
				if mode != yVNNI {
					VPMADDUBSW(b, w, b) // u8·s8 pair sums (int16)
					VPMADDWD(cOnes16, b, b)
					VPADDD(b, yAcc[r], yAcc[r])
					return
				}
				x86.VPDPBUSDY(w, b, yAcc[r])
			}
			dots := func(w VecPhysical, quad int) {
				for r := 0; r < m; r++ {
					dot(w, r, 4*quad)
				}
			}
			line := func(c int) Mem { return Mem{Base: vb, Disp: vd + 64*c} }
			switch k.lines {
			case 8:
				if q8 {
					// u = 16·hi + lo: Σu·x = 16·Σhi·x + Σlo·x. yAcc holds the
					// hi sums and yLo16 the lo ones, in int16 lanes through
					// the group (each line adds pair sums within ±2·15·128);
					// the mask comes from memory, its register holds yLo16[2].
					for i := 0; i < 8; i++ {
						VMOVDQU(line(i), yLo)
						VPSRLW(U8(4), yLo, yHi)
						VPAND(cNibbles, yLo, yLo)
						VPAND(cNibbles, yHi, yHi)
						for r := 0; r < m; r++ {
							VPBROADCASTD(x.At(r, 4*i), yB[0])
							VPMADDUBSW(yB[0], yHi, yB[1])
							VPADDW(yB[1], yAcc[r], yAcc[r])
							VPMADDUBSW(yB[0], yLo, yB[0])
							VPADDW(yB[0], yLo16[r], yLo16[r])
						}
					}
					for r := 0; r < m; r++ {
						VPMADDWD(cSixteens16, yAcc[r], yAcc[r])
						VPMADDWD(cOnes16, yLo16[r], yLo16[r])
						VPADDD(yLo16[r], yAcc[r], yAcc[r])
						VPBROADCASTD(Mem{Base: ap, Disp: 4 * r}, yB[0])
						VPADDD(yB[0], yAcc[r], yAcc[r])
					}
					break
				}
				for i := 0; i < 8; i++ {
					VMOVDQU(line(i), yLo)
					dots(yLo, i)
				}
			case 3:
				// Q3 (quant/q3.go): quads 2c, 2c+1 are bits 0–2 and 3–5 of
				// line c; quad 6+c the bits 6–7 of line c (c < 2) below bit
				// 6+c of line 2 (word shifts: the masks drop what crosses
				// from the byte above).
				for c := 0; c < 3; c++ {
					VMOVDQU(line(c), yLo) // line 2 stays in yLo
					VPAND(yMask, yLo, yHi)
					dots(yHi, 2*c)
					VPSRLW(U8(3), yLo, yHi)
					VPAND(yMask, yHi, yHi)
					dots(yHi, 2*c+1)
				}
				for c := 0; c < 2; c++ {
					VMOVDQU(line(c), yHi)
					VPSRLW(U8(6), yHi, yHi)
					VPAND(yMask3, yHi, yHi) // bits 0–1
					VPSRLW(U8(4+c), yLo, yTmp)
					VPANDN(yTmp, yMask3, yTmp) // bit 2 (and above, dropped next)
					VPOR(yTmp, yHi, yHi)
					VPAND(yMask, yHi, yHi)
					dots(yHi, 6+c)
				}
			case 6:
				// Q6 (quant/q6.go): quad c < 6 is bits 0–5 of line c; quad
				// 6+h gathers bits 6–7 (~mask) of lines 3h, 3h+1, 3h+2 as its
				// bits 0–1, 2–3, 4–5 (masked first, so word shifts keep them
				// in their byte).
				for c := 0; c < 6; c++ {
					VPAND(line(c), yMask, yHi)
					dots(yHi, c)
				}
				for h := 0; h < 2; h++ {
					VPANDN(line(3*h), yMask, yHi)
					VPSRLW(U8(6), yHi, yHi)
					for t := 1; t < 3; t++ {
						VPANDN(line(3*h+t), yMask, yTmp)
						VPSRLW(U8(6-2*t), yTmp, yTmp)
						VPOR(yTmp, yHi, yHi)
					}
					dots(yHi, 6+h)
				}
			case 5:
				if q5 {
					q5AVX2(m, x, line, yAcc[:m])
					break
				}
				// Q5 (quant/q5.go): quads 2c, 2c+1 are Q4's nibbles of line
				// c; bit h of each byte of line 4 (in yTmp) is quad h's fifth
				// bit, moved to bit 4 by a word shift and kept by yMask5 (yD
				// is free until the flush).
				VMOVDQU(line(4), yTmp)
				fifth := func(h int) {
					switch {
					case h < 4:
						VPSLLW(U8(4-h), yTmp, yHi)
						VPAND(yMask5, yHi, yHi)
					case h == 4:
						VPAND(yMask5, yTmp, yHi)
					default:
						VPSRLW(U8(h-4), yTmp, yHi)
						VPAND(yMask5, yHi, yHi)
					}
				}
				for c := 0; c < 4; c++ {
					VMOVDQU(line(c), yLo)
					fifth(2 * c)
					VPAND(yMask, yLo, yD)
					VPOR(yD, yHi, yHi)
					dots(yHi, 2*c)
					fifth(2*c + 1)
					VPSRLW(U8(4), yLo, yLo)
					VPAND(yMask, yLo, yLo)
					VPOR(yLo, yHi, yHi)
					dots(yHi, 2*c+1)
				}
			case 2:
				// Q2 (quant/q2.go): quad 4c+h is bits 2h, 2h+1 of line c.
				for c := 0; c < 2; c++ {
					VMOVDQU(line(c), yLo)
					for h := 0; h < 4; h++ {
						if h == 0 {
							VPAND(yMask, yLo, yHi)
						} else {
							VPSRLW(U8(2*h), yLo, yHi)
							VPAND(yMask, yHi, yHi)
						}
						dots(yHi, 4*c+h)
					}
				}
			default:
				for c := 0; c < 4; c++ {
					VMOVDQU(line(c), yLo)
					VPSRLW(U8(4), yLo, yHi)
					VPAND(yMask, yLo, yLo)
					VPAND(yMask, yHi, yHi)
					dots(yLo, 2*c)
					dots(yHi, 2*c+1)
				}
			}
			if i16 {
				for r := 0; r < m; r++ {
					VPMADDWD(cOnes16, yAcc[r], yAcc[r])
					if !k.hasMin && !k.kq {
						VPBROADCASTD(Mem{Base: ap, Disp: 4 * r}, yB[0])
						VPADDD(yB[0], yAcc[r], yAcc[r])
					}
				}
			}
			// wh = wp + 32h: the half's 8 scales are 16h bytes into the scales.
			if k.kq {
				// yD = d·sc, yHi = dm·mc for the half's 8 rows (see kernelZ;
				// yLo, yHi are free here and the masks stay), from the
				// header at wh − 32h.
				hd := -32 * h
				VPMOVZXBD(Mem{Base: wh, Index: q, Scale: 2, Disp: hd + 8*h + 16*e}, yLo)
				VPSLLD(U8(26), yLo, yD)
				VPSRLD(U8(26), yD, yD)
				VCVTDQ2PS(yD, yD)
				VCVTPH2PS(Mem{Base: wh, Disp: hd + kDOff + 16*h}, yTmp)
				VMULPS(yTmp, yD, yD)
				VPSRLD(U8(6), yLo, yLo)
				VPMOVZXBD(Mem{Base: wh, Index: q, Scale: 1, Disp: hd + kMinOff + 8*h}, yHi)
				if e == 0 {
					VPSLLD(U8(28), yHi, yHi)
					VPSRLD(U8(26), yHi, yHi)
				} else {
					VPSRLD(U8(4), yHi, yHi)
					VPSLLD(U8(2), yHi, yHi)
				}
				VPOR(yHi, yLo, yLo)
				VCVTDQ2PS(yLo, yLo)
				VCVTPH2PS(Mem{Base: wh, Disp: hd + kDMOff + 16*h}, yHi)
				VMULPS(yHi, yLo, yHi)
			} else if k.q2 {
				// d = f16(h &^ 15); yMin = d·(c − 1) with c = h & 15 (the
				// kernel subtracts yMin·aux, aux = xs·Σxq/4)
				sw := Mem{Base: wh, Disp: k.scaleOff - 16*h}
				bcastY(0xfff0fff0, yTmp)
				VPAND(sw, yTmp.AsX(), yD.AsX())
				VCVTPH2PS(yD.AsX(), yD)
				VPMOVZXWD(sw, yMin)
				VPANDN(yMin, yTmp, yMin) // yMin = ^yTmp & h: the code c
				VCVTDQ2PS(yMin, yMin)
				VFMSUB213PS(yD, yD, yMin) // yMin = c·d − d
			} else {
				VCVTPH2PS(Mem{Base: wh, Disp: k.scaleOff - 16*h}, yD)
			}
			if k.hasMin && !k.q2 {
				VCVTPH2PS(Mem{Base: wh, Disp: k.scaleOff + 32 - 16*h}, yMin)
			}
			for r := 0; r < m; r++ {
				VCVTDQ2PS(yAcc[r], yAcc[r])
				VBROADCASTSS(Mem{Base: xsp, Disp: 4 * r}, yTmp)
				VMULPS(yTmp, yAcc[r], yAcc[r])
				VFMADD231PS(yAcc[r], yD, yF[r])
				if k.kq {
					VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
					VFNMADD231PS(yTmp, yHi, yF[r])
				} else if k.q2 {
					VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
					VFNMADD231PS(yTmp, yMin, yF[r])
				} else if k.hasMin {
					VBROADCASTSS(Mem{Base: ap, Disp: 4 * r}, yTmp)
					VFMADD231PS(yTmp, yMin, yF[r])
				}
			}
			if !k.kq {
				ADDQ(U32(k.gb), wh)
			}
			x.Advance(U8(32))
			ADDQ(las, ap)
			ADDQ(las, xsp)
		}
		if k.kq {
			ADDQ(U32(2*k.gb), vp)
			ADDQ(U8(kPairStep), q)
			CMPQ(q, U8(4*kPairStep))
			JNE(LabelRef(name + "_pair" + sfx))
			ADDQ(U32(k.sbBytes()), wh)
		}
		DECQ(g)
		JNZ(LabelRef(name + "_group" + sfx))

		storeRows(name, sfx, yp, ops(yF[:m]), addPS, storePS)
		ADDQ(U8(32), yp)
	}
	// Next panel: ng·gb bytes on.
	ng := Load(Param("ng"), GP64())
	IMUL3Q(U32(k.stride()), ng, ng)
	ADDQ(ng, wp)
	DECQ(np)
	JNZ(LabelRef(name + "_panel"))
	VZEROUPPER()
	RET()
}

// q5AVX2 emits the k-quads of one Q5 group half-panel for the avx2
// kernels: the decode of kernelY's Q5 case (Q4's nibbles of line c for
// quads 2c and 2c+1, bit h of line 4 moved to bit 4 for quad h), with
// line 4 in yB[0] and the masks in registers where yQ5Sum16 leaves them
// free (else from memory); each row's vpmaddubsw pair sums added in int16
// over quads 4t…4t+3 (yQ5Sum16[r]), then widened by vpmaddwd with ones
// and added to acc[r]. yB[1] takes the activation broadcasts and one
// temporary.
func q5AVX2(m int, x rows.Addr, line func(int) Mem, acc []VecPhysical) {
	var nib, five Op = yMask, yMask5
	if m >= 4 {
		nib = cNibbles
	}
	if m >= 3 {
		five = cFifths
	}
	hb, b := yB[0], yB[1]
	VMOVDQU(line(4), hb)
	fifth := func(h int) { // yHi = bit h of each byte of hb, at bit 4
		switch {
		case h < 4:
			VPSLLW(U8(4-h), hb, yHi)
			VPAND(five, yHi, yHi)
		case h == 4:
			VPAND(five, hb, yHi)
		default:
			VPSRLW(U8(h-4), hb, yHi)
			VPAND(five, yHi, yHi)
		}
	}
	dots := func(quad int) { // the products of yHi (quad's weights)
		for r := 0; r < m; r++ {
			s := yQ5Sum16[r]
			VPBROADCASTD(x.At(r, 4*quad), b)
			if quad%4 == 0 {
				VPMADDUBSW(b, yHi, s) // u8·s8 pair sums (int16)
			} else {
				VPMADDUBSW(b, yHi, b)
				VPADDW(b, s, s)
			}
			if quad%4 == 3 {
				VPMADDWD(cOnes16, s, s)
				VPADDD(s, acc[r], acc[r])
			}
		}
	}
	for c := 0; c < 4; c++ {
		VMOVDQU(line(c), yLo)
		fifth(2 * c)
		VPAND(nib, yLo, b)
		VPOR(b, yHi, yHi)
		dots(2 * c)
		fifth(2*c + 1)
		VPSRLW(U8(4), yLo, yLo)
		VPAND(nib, yLo, yLo)
		VPOR(yLo, yHi, yHi)
		dots(2*c + 1)
	}
}

func main() {
	flag.Parse()
	ConstraintExpr("amd64,gc,!purego")
	switch *isa {
	case "avx512":
		for _, k := range kinds {
			for m := 1; m <= 12; m++ {
				kernelZ(k, m, false)
			}
			if !k.kq && k.name != "Q8" || k.name == "Q3K" {
				kernelZ(k, 1, true) // the formats it speeds up (kernels/gemm: vnniZd)
			}
		}
	case "avxvnni":
		for _, k := range kinds {
			for m := 1; m <= 4; m++ {
				kernelY(k, m, yVNNI)
			}
		}
	case "avx2":
		cOnes16 = GLOBL("ones16", RODATA|NOPTR)
		for i := 0; i < 32; i += 4 {
			DATA(i, U32(0x00010001))
		}
		cSixteens16 = GLOBL("sixteens16", RODATA|NOPTR)
		for i := 0; i < 32; i += 4 {
			DATA(i, U32(0x00100010))
		}
		cNibbles = GLOBL("nibbles", RODATA|NOPTR)
		for i := 0; i < 32; i += 4 {
			DATA(i, U32(0x0f0f0f0f))
		}
		cFifths = GLOBL("fifths", RODATA|NOPTR)
		for i := 0; i < 32; i += 4 {
			DATA(i, U32(0x10101010))
		}
		for _, k := range kinds {
			for m := 1; m <= 4; m++ {
				kernelY(k, m, yAVX2)
			}
		}
		for _, k := range kinds {
			if k.name == "Q8" {
				continue // Q8: u up to 255, vpmaddubsw saturates
			}
			for m := 1; m <= 4; m++ {
				kernelY(k, m, yTwin)
			}
		}
	default:
		log.Fatalf("unknown -isa %q", *isa)
	}
	Generate()
}

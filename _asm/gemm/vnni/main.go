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

// doc emits the doc comment of kernel name (m rows; lanes: 16, or 8 for
// the ymm kernels' two half-panels), with the extra lines at its end.
func doc(name string, k kind, m, lanes int, extra ...string) {
	dot := "Σ_{j<32} int32(" + uDesc(k) + ")·int32(xq[r·ldx+32g+j])"
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
	lines = append(lines, docSum(k, dot)...)
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

// uDesc is the doc comment's name of the stored weights.
func uDesc(k kind) string {
	switch k.name {
	case "Q3":
		return "u[p,g,i,j] (3 bits)"
	case "Q6":
		return "u[p,g,i,j] (6 bits)"
	case "Q2":
		return "u[p,g,i,j] (2 bits)"
	case "Q5":
		return "u[p,g,i,j] (5 bits)"
	case "Q4", "Q4M":
		return "u[p,g,i,j] (a nibble)"
	case "Q3K", "Q4K", "Q5K", "Q6K":
		return fmt.Sprintf("u[p,g,i,j] (%s bits)", k.name[1:2])
	}
	return "u[p,g,i,j]"
}

// docSum is the doc comment's formula of a row's output t, given the
// group's int32 dot product dot.
func docSum(k kind, dot string) []string {
	switch {
	case k.kq:
		return []string{
			"\t\tt := Σ_{g<ng} (s[p,g,i]·(xs[g·ldaux/4+r]·float32(" + dot + "))",
			"\t\t\t− mn[p,g,i]·math.Float32frombits(uint32(aux[g·ldaux/4+r])))  // aux: float32(xs·Σxq) bits",
			"\t\t\t// s = d·sc, mn = dm·mc: the group's 6-bit codes, the super-block's f16 d, dm"}
	case k.q2:
		return []string{
			"\t\tt := Σ_{g<ng} (d[p,g,i]·(xs[g·ldaux/4+r]·float32(" + dot + "))",
			"\t\t\t− d[p,g,i]·float32(c[p,g,i]−1)·math.Float32frombits(uint32(aux[g·ldaux/4+r])))",
			"\t\t\t// aux: float32(xs·Σxq)/4 bits; d = f16(h &^ 15), c = h & 15 of the scale word h"}
	case k.hasMin:
		return []string{
			"\t\tt := Σ_{g<ng} (d[p,g,i]·(xs[g·ldaux/4+r]·float32(" + dot + "))",
			"\t\t\t+ mn[p,g,i]·math.Float32frombits(uint32(aux[g·ldaux/4+r])))  // aux: float32(xs·Σxq) bits"}
	}
	return []string{
		"\t\tt := Σ_{g<ng} d[p,g,i]·(xs[g·ldaux/4+r]·float32(" + dot + " + aux[g·ldaux/4+r]))",
		fmt.Sprintf("\t\t\t// aux = −%d·Σxq: the weights' zero point; xs: the activations' group scales", k.z)}
}

// loadRows addresses the m activation rows at xq (stride ldx).
func loadRows(m int) rows.Addr {
	xp := Load(Param("xq"), GP64())
	if m == 1 {
		return rows.New(1, xp, nil)
	}
	return rows.New(m, xp, Load(Param("ldx"), GP64()))
}

// cursors are the activation side of one pass over the groups: the rows
// x, the aux and xs pointers, their step las (ldaux: in a register, but
// the K kernels, which need two more registers (with 12 rows the 15 would
// not do), add it from memory), the group count g and, for a K format,
// the pair cursors. A K format's kernel loops over super-blocks (g: ng/8
// of them; wp at the record), each a loop over 4 pairs of groups: q =
// 16·pair indexes the header (the pair's scale bytes at wp + 2q, its min
// nibbles at wp + 128 + q: the even group's the low ones), vp the pair's
// value lines.
type cursors struct {
	x       rows.Addr
	ap, xsp Register
	las     Op
	g       Register
	vp      Register
	q       GPVirtual
	nsub    int // groups per loop iteration: 2 (a K pair) or 1
}

// loadCursors loads a pass's cursors.
func loadCursors(k kind, m int) cursors {
	c := cursors{x: loadRows(m), nsub: 1}
	c.ap = Load(Param("aux"), GP64())
	c.xsp = Load(Param("xs"), GP64())
	if k.kq {
		b, err := Param("ldaux").Resolve()
		if err != nil {
			log.Fatal(err)
		}
		c.las = b.Addr
	} else {
		c.las = Load(Param("ldaux"), GP64())
	}
	c.g = Load(Param("ng"), GP64())
	if k.kq {
		SHRQ(U8(3), c.g)
		c.vp, c.q = GP64(), GP64()
		c.nsub = 2
	}
	return c
}

// advance moves the activation cursors on by a group.
func (c cursors) advance() {
	c.x.Advance(U8(32))
	ADDQ(c.las, c.ap)
	ADDQ(c.las, c.xsp)
}

// loopEnd closes the group loop (labels name+"_group"+sfx and, for a K
// format, name+"_pair"+sfx): a K format's value cursors vps move on by a
// pair, and after its 4 pairs the records wps by a super-block.
func (c cursors) loopEnd(name, sfx string, k kind, vps, wps []Register) {
	if k.kq {
		for _, vp := range vps {
			ADDQ(U32(2*k.gb), vp)
		}
		ADDQ(U8(kPairStep), c.q)
		CMPQ(c.q, U8(4*kPairStep))
		JNE(LabelRef(name + "_pair" + sfx))
		for _, wp := range wps {
			ADDQ(U32(k.sbBytes()), wp)
		}
	}
	DECQ(c.g)
	JNZ(LabelRef(name + "_group" + sfx))
}

// storeRows writes (acc: adds then writes) one vector per row at yp + r·ldy.
func storeRows[V Register](name, sfx string, yp Register, f []V) {
	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	row := GP64()
	MOVQ(yp, row)
	a := Load(Param("acc"), GP8())
	rows.Store(name+"_store"+sfx, name+"_stored"+sfx, ldy, row, a, f)
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
		avx2Kernels()
	default:
		log.Fatalf("unknown -isa %q", *isa)
	}
	Generate()
}

// avx2Kernels emits the avx2 file: its constants, the avx2i8 kernels and
// the test twins.
func avx2Kernels() {
	cOnes16 = table32("ones16", 0x00010001)
	cSixteens16 = table32("sixteens16", 0x00100010)
	cNibbles = table32("nibbles", 0x0f0f0f0f)
	cFifths = table32("fifths", 0x10101010)
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
}

// table32 emits the 32-byte read-only table name of the dword v.
func table32(name string, v uint32) Mem {
	t := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 32; i += 4 {
		DATA(i, U32(v))
	}
	return t
}

//go:build amd64 && gc && !purego

// amd64 registration and driver of the generated AVX-512 VNNI kernels of
// the GGUF formats (gemm_gguf_avx512_amd64.s, _asm/gemm/gguf): a matrix's
// ggml blocks read in place, row by row, against the activations ggufPrep
// lays out per unit of 256 values.

package gemm

import (
	"unsafe"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// ggufKernel is the signature of every generated GGUF kernel.
type ggufKernel func(w *byte, nrows int, rowBytes int, units int, tail int, xa *byte, ldx int, y *float32, ldy int, acc bool)

// ggufMaxM is the most activation rows one kernel call computes.
const ggufMaxM = 8

// ggufZ[type][M] is the AVX-512 kernel for M activation rows.
var ggufZ = map[gguf.Type][ggufMaxM + 1]ggufKernel{
	gguf.TypeQ8_0:   {nil, ggufZQ8_0_1, ggufZQ8_0_2, ggufZQ8_0_3, ggufZQ8_0_4, ggufZQ8_0_5, ggufZQ8_0_6, ggufZQ8_0_7, ggufZQ8_0_8},
	gguf.TypeQ4_0:   {nil, ggufZQ4_0_1, ggufZQ4_0_2, ggufZQ4_0_3, ggufZQ4_0_4, ggufZQ4_0_5, ggufZQ4_0_6, ggufZQ4_0_7, ggufZQ4_0_8},
	gguf.TypeQ4_1:   {nil, ggufZQ4_1_1, ggufZQ4_1_2, ggufZQ4_1_3, ggufZQ4_1_4, ggufZQ4_1_5, ggufZQ4_1_6, ggufZQ4_1_7, ggufZQ4_1_8},
	gguf.TypeQ5_0:   {nil, ggufZQ5_0_1, ggufZQ5_0_2, ggufZQ5_0_3, ggufZQ5_0_4, ggufZQ5_0_5, ggufZQ5_0_6, ggufZQ5_0_7, ggufZQ5_0_8},
	gguf.TypeQ5_1:   {nil, ggufZQ5_1_1, ggufZQ5_1_2, ggufZQ5_1_3, ggufZQ5_1_4, ggufZQ5_1_5, ggufZQ5_1_6, ggufZQ5_1_7, ggufZQ5_1_8},
	gguf.TypeIQ4_NL: {nil, ggufZIQ4NL_1, ggufZIQ4NL_2, ggufZIQ4NL_3, ggufZIQ4NL_4, ggufZIQ4NL_5, ggufZIQ4NL_6, ggufZIQ4NL_7, ggufZIQ4NL_8},
	gguf.TypeMXFP4:  {nil, ggufZMXFP4_1, ggufZMXFP4_2, ggufZMXFP4_3, ggufZMXFP4_4, ggufZMXFP4_5, ggufZMXFP4_6, ggufZMXFP4_7, ggufZMXFP4_8},
	gguf.TypeQ2_K:   {nil, ggufZQ2K_1, ggufZQ2K_2, ggufZQ2K_3, ggufZQ2K_4, ggufZQ2K_5, ggufZQ2K_6, ggufZQ2K_7, ggufZQ2K_8},
	gguf.TypeQ3_K:   {nil, ggufZQ3K_1, ggufZQ3K_2, ggufZQ3K_3, ggufZQ3K_4, ggufZQ3K_5, ggufZQ3K_6, ggufZQ3K_7, ggufZQ3K_8},
	gguf.TypeQ4_K:   {nil, ggufZQ4K_1, ggufZQ4K_2, ggufZQ4K_3, ggufZQ4K_4, ggufZQ4K_5, ggufZQ4K_6, ggufZQ4K_7, ggufZQ4K_8},
	gguf.TypeQ5_K:   {nil, ggufZQ5K_1, ggufZQ5K_2, ggufZQ5K_3, ggufZQ5K_4, ggufZQ5K_5, ggufZQ5K_6, ggufZQ5K_7, ggufZQ5K_8},
	gguf.TypeQ6_K:   {nil, ggufZQ6K_1, ggufZQ6K_2, ggufZQ6K_3, ggufZQ6K_4, ggufZQ6K_5, ggufZQ6K_6, ggufZQ6K_7, ggufZQ6K_8},
	gguf.TypeIQ4_XS: {nil, ggufZIQ4XS_1, ggufZIQ4XS_2, ggufZIQ4XS_3, ggufZIQ4XS_4, ggufZIQ4XS_5, ggufZIQ4XS_6, ggufZIQ4XS_7, ggufZIQ4XS_8},
}

// ggufDecZ[type] decodes one weight row for the tile kernels.
var ggufDecZ = map[gguf.Type]func(w *byte, units int, tail int, dst *byte){
	gguf.TypeQ8_0:   ggufDecZQ8_0,
	gguf.TypeQ4_0:   ggufDecZQ4_0,
	gguf.TypeQ4_1:   ggufDecZQ4_1,
	gguf.TypeQ5_0:   ggufDecZQ5_0,
	gguf.TypeQ5_1:   ggufDecZQ5_1,
	gguf.TypeIQ4_NL: ggufDecZIQ4NL,
	gguf.TypeMXFP4:  ggufDecZMXFP4,
	gguf.TypeQ2_K:   ggufDecZQ2K,
	gguf.TypeQ3_K:   ggufDecZQ3K,
	gguf.TypeQ4_K:   ggufDecZQ4K,
	gguf.TypeQ5_K:   ggufDecZQ5K,
	gguf.TypeQ6_K:   ggufDecZQ6K,
	gguf.TypeIQ4_XS: ggufDecZIQ4XS,
}

// ggufTileZ[flush16][min] is the tile kernel: 8 decoded weight rows
// against a tile of 16 activation rows.
var ggufTileZ = [2][2]func(wd *byte, ldw int, units int, tail int, act *byte, out *float32){
	{ggufTileZ32, ggufTileZ32M}, {ggufTileZ16, ggufTileZ16M}}

// The decoded row (ggufDecZ*), per unit of 256 values: the values as
// signed bytes, then per sub-block of 16 its f32 scale, f32 min and int32
// −128·Σv (the generator, _asm/gemm/gguf, documents it).
const ggufDecUnit = 448

// ggufPrepZ prepares the activations for the row kernels (M ≤ ggufMaxM)
// or, for more rows, in tiles of 16 for the tile kernels.
func ggufPrepZ(a *args) {
	t, _ := quant.GGUFType(a.w.DType)
	if _, _, ok := ggufUnits(t, a.k); !ok {
		return
	}
	if a.m <= ggufMaxM {
		ggufPrep(a)
		return
	}
	ggufTilePrep(a, ggufSubs16(t))
}

// ggufTilesZ computes rows [r0, r1) by the tile kernels: 8 weight rows
// decoded into the worker's scratch (L1: 8 × K/256 × 448 bytes), then
// each tile of 16 activation rows against them, the 8×16 results put
// into y. The decode is shared by every tile, the tiles' activations by
// every 8 rows.
func ggufTilesZ(a *args, t gguf.Type, units, tail, r0, r1, worker int) {
	nu := units
	if tail > 0 {
		nu++
	}
	ldw := nu * ggufDecUnit
	buf := a.scratch(worker, tmpKernel, 128+tileRows*ldw/4)
	out := buf[:128]
	dec := unsafe.Slice((*byte)(unsafe.Pointer(&buf[128])), tileRows*ldw)
	t2, _ := quant.GGUFType(a.w.DType)
	kern := ggufTileZ[b2i(ggufSubs16(t2))][b2i(ggufHasMin(t2))]
	ng := a.k / quant.GroupK
	tiles := (a.m + ggufTileRows - 1) / ggufTileRows
	rb := a.w.RowBytes()
	decode := ggufDecZ[t]
	for i0 := r0; i0 < r1; i0 += tileRows {
		n := min(tileRows, r1-i0)
		for i := 0; i < tileRows; i++ {
			d := dec[i*ldw : (i+1)*ldw]
			if i < n {
				decode(&a.w.Data[(i0+i)*rb], units, tail, &d[0])
			} else {
				clear(d)
			}
		}
		for tl := 0; tl < tiles; tl++ {
			kern(&dec[0], ldw, units, 2*tail, &a.pre.gt[tl*ng*ggufTileGroup], &out[0])
			rows := min(ggufTileRows, a.m-tl*ggufTileRows)
			for i := 0; i < n; i++ {
				for r := 0; r < rows; r++ {
					a.put(tl*ggufTileRows+r, i0+i, out[i*ggufTileRows+r])
				}
			}
		}
	}
}

// tileRows is the weight rows of one tile kernel call.
const tileRows = 8

// ggufPanelsZ is the panelFn of gguf_avx512_vnni: the rows of panels
// [p0, p1) in one call per tile of at most ggufMaxM activation rows (the
// rows, a few tens of KiB, stay in L2 from one tile to the next).
func ggufPanelsZ(a *args, p0, p1, worker int, prm kernel.Values) {
	t, units, tail, r0, r1, ok := ggufPanelRows(a, p0, p1, worker, prm)
	if !ok {
		return
	}
	if a.m > ggufMaxM {
		ggufTilesZ(a, t, units, tail, r0, r1, worker)
		return
	}
	ks := ggufZ[t]
	ggufRowCalls(a, ks[:], ggufUnitBytes, units, tail, r0, r1)
}

// ggufPanelRows is the head of a GGUF panelFn: the weight type, the row's
// units and tail chunks and the weight rows [r0, r1) of panels [p0, p1);
// ok is false where nothing is left to do: no rows, or a row the kernels
// cannot take (ggufUnits: a length not a multiple of 64, the tiny test
// models' 96), which it has run by the portable int8 variant.
func ggufPanelRows(a *args, p0, p1, worker int, prm kernel.Values) (t gguf.Type, units, tail, r0, r1 int, ok bool) {
	t, _ = quant.GGUFType(a.w.DType)
	units, tail, ok = ggufUnits(t, a.k)
	if !ok || a.pre == nil {
		panelsGGUFInt8(a, p0, p1, worker, prm)
		return t, 0, 0, 0, 0, false
	}
	r0, r1 = panelRows(a, p0, p1)
	return t, units, tail, r0, r1, r0 < r1
}

// ggufRowCalls runs rows [r0, r1) by the row kernels ks (ks[M] for M
// activation rows, M < len(ks)), one call per tile of the activation
// rows, whose prepared units are unitBytes each.
func ggufRowCalls(a *args, ks []ggufKernel, unitBytes, units, tail, r0, r1 int) {
	rb := a.w.RowBytes()
	ld := units * unitBytes
	if tail > 0 {
		ld += unitBytes
	}
	maxM := len(ks) - 1
	for t0 := 0; t0 < a.m; t0 += maxM {
		mt := min(maxM, a.m-t0)
		ks[mt](&a.w.Data[r0*rb], r1-r0, rb, units, tail, &a.pre.gg[t0*ld], ld, &a.y[t0*a.ldy+r0-a.ycol], a.ldy, a.acc)
	}
}

// ggufZF[type][M] is the f32 kernel of a float format for M activation
// rows (k a multiple of 32).
var ggufZF = map[gguf.Type][ggufMaxM + 1]func(w *byte, nrows int, rowBytes int, k int, x *float32, ldx int, y *float32, ldy int, acc bool){
	gguf.TypeF32:  {nil, ggufZFF32_1, ggufZFF32_2, ggufZFF32_3, ggufZFF32_4, ggufZFF32_5, ggufZFF32_6, ggufZFF32_7, ggufZFF32_8},
	gguf.TypeF16:  {nil, ggufZFF16_1, ggufZFF16_2, ggufZFF16_3, ggufZFF16_4, ggufZFF16_5, ggufZFF16_6, ggufZFF16_7, ggufZFF16_8},
	gguf.TypeBF16: {nil, ggufZFBF16_1, ggufZFBF16_2, ggufZFBF16_3, ggufZFBF16_4, ggufZFBF16_5, ggufZFBF16_6, ggufZFBF16_7, ggufZFBF16_8},
}

// ggufPanelsZF is the panelFn of gguf_avx512 (f32, f16 and bf16 rows):
// each row widened 16 values at a time and multiplied into at most
// ggufMaxM activation rows per call; a row length that is not a multiple
// of 32 runs the portable variant.
func ggufPanelsZF(a *args, p0, p1, worker int, prm kernel.Values) {
	if a.k%32 != 0 {
		panelsGGUF(a, p0, p1, worker, prm)
		return
	}
	t, _ := quant.GGUFType(a.w.DType)
	ks := ggufZF[t]
	r0, r1 := panelRows(a, p0, p1)
	if r0 >= r1 {
		return
	}
	rb := a.w.RowBytes()
	for t0 := 0; t0 < a.m; t0 += ggufMaxM {
		mt := min(ggufMaxM, a.m-t0)
		ks[mt](&a.w.Data[r0*rb], r1-r0, rb, a.k, &a.x[t0*a.kp], a.kp, &a.y[t0*a.ldy+r0-a.ycol], a.ldy, a.acc)
	}
}

func init() {
	register(allOps, kernel.Variant{Name: "gguf_avx512", Doc: "generated AVX-512 on the file's f32, f16 and bf16 rows: widened 16 at a time, f32 FMA",
		Priority: 30, DTypes: []kernel.DType{kernel.GGUFF32, kernel.GGUFF16, kernel.GGUFBF16},
		Requires: cpu.NewSet(cpu.AVX512F), Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actF32, panels: ggufPanelsZF, grain: 4})
	register(allOps, kernel.Variant{Name: "gguf_avx512_vnni", Doc: "generated AVX-512 VNNI on the file's blocks: weights unpacked per 64 values, VPDPBUSD against int8 activations laid out per type",
		Priority: 40, DTypes: ggufIntDTypes, Class: kernel.ClassInt8Act,
		Requires: cpu.NewSet(cpu.AVX512F, cpu.AVX512BW, cpu.AVX512VL, cpu.AVX512VNNI), Threaded: true,
		Params: []kernel.Param{grainParam}},
		&impl{act: actInt8, panels: ggufPanelsZ, grain: 4, prep: ggufPrepZ})
}

package gemm

// Exact checks of the int8-activation kernels of the K formats
// (quant/kquant.go). Their per-group flush,
//
//	f = fma(xs·float32(Σ xq·u), d·sc, f);  f = fma(−float32(xs·Σxq), dm·mc, f)
//
// is not exact in f32 at K's magnitudes (a 6-bit scale code times a
// 6-bit weight times a group of s8 activations is already near 2²⁴), so
// these tests compare with a Go model of that arithmetic, each product
// and fused add rounded once to f32 as the kernels do (kModel): exactly,
// for any codes, values and f16 d, dm.

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// kExactModel reports whether v's K kernels follow kModel's order of
// operations (the amd64 assembly variants; the Go ones, generic_int8 and
// the reference, do not fuse and are checked by TestKShapes).
func kExactModel(v *kernel.Variant) bool { return runtime.GOARCH == "amd64" && v.Requires != 0 }

// kIntMatrix is a K matrix whose stored values, codes and f16 d, dm are
// known: u [Np][Kp], sc and mc [Np][groups], d and dm [Np][super-blocks]
// (the f16 values, widened).
type kIntMatrix struct {
	w            *quant.Matrix
	u            [][]int32
	sc, mc       [][]int32
	d, dm        [][]float32
	n, k, groups int
}

// setKNibble stores u (0…15) at row i, group element j of a Q4 value
// record (the nibble kValues reads).
func setKNibble(rec []byte, i, j, u int) {
	off, sh := (j/8)*quant.LineBytes+4*i+j%4, uint(4*(j%8/4))
	rec[off] = rec[off]&^(15<<sh) | byte(u&15)<<sh
}

// newKIntMatrix fills every stored value, padding included, and every
// code: random (d, dm random f16 in [2⁻⁸, 2)), or with max every value and
// code at its maximum (u = 2ᵇ−1, sc = mc = 63) and d = dm = 1.
func newKIntMatrix(t *testing.T, r *rand.Rand, dt kernel.DType, n, k int, max bool) *kIntMatrix {
	t.Helper()
	w, err := quant.New(dt, n, k, false)
	if err != nil {
		t.Fatal(err)
	}
	top := map[kernel.DType]int32{kernel.Q3K: 7, kernel.Q4K: 15, kernel.Q5K: 31, kernel.Q6K: 63}[dt]
	groups := w.Kp / quant.GroupK
	supers := w.Kp / quant.SuperK
	km := &kIntMatrix{w: w, n: n, k: k, groups: groups}
	rnd := func(hi int32) int32 {
		if max {
			return hi
		}
		return r.Int32N(hi + 1)
	}
	f16 := func() uint16 {
		if max {
			return half.F32ToF16(1)
		}
		return half.F32ToF16(float32(r.Float64()*2 + 1.0/256))
	}
	sbBytes := quant.KSuperBytes(dt)
	for p := 0; p < w.Panels(); p++ {
		panel := w.Panel(p)
		for i := 0; i < quant.PanelRows; i++ {
			row := p*quant.PanelRows + i
			km.u = append(km.u, make([]int32, w.Kp))
			km.sc = append(km.sc, make([]int32, groups))
			km.mc = append(km.mc, make([]int32, groups))
			km.d = append(km.d, make([]float32, supers))
			km.dm = append(km.dm, make([]float32, supers))
			for s := 0; s < supers; s++ {
				sb := panel[s*sbBytes:]
				dh, mh := f16(), f16()
				binary.LittleEndian.PutUint16(sb[192+2*i:], dh)
				binary.LittleEndian.PutUint16(sb[224+2*i:], mh)
				km.d[row][s], km.dm[row][s] = half.F16ToF32(dh), half.F16ToF32(mh)
				for j := 0; j < quant.KGroups; j++ {
					g := s*quant.KGroups + j
					sc, mc := rnd(63), rnd(63)
					km.sc[row][g], km.mc[row][g] = sc, mc
					sb[16*j+i] = byte(sc) | byte(mc&3)<<6
					off, sh := 128+16*(j/2)+i, uint(4*(j%2))
					sb[off] = sb[off]&^(15<<sh) | byte(mc>>2)<<sh
					rec := quant.KGroup(dt, panel, g)
					for jj := 0; jj < quant.GroupK; jj++ {
						u := rnd(top)
						km.u[row][g*quant.GroupK+jj] = u
						switch dt {
						case kernel.Q3K:
							setQ3(rec, i, jj, int(u))
						case kernel.Q4K:
							setKNibble(rec, i, jj, int(u))
						case kernel.Q5K:
							setQ5(rec, i, jj, int(u))
						default:
							setQ6(rec, i, jj, int(u))
						}
					}
				}
			}
		}
	}
	// the layout as package quant reads it
	for _, row := range []int{0, w.Np - 1} {
		p, i := row/quant.PanelRows, row%quant.PanelRows
		for g := 0; g < groups; g++ {
			sc, mc := quant.KCodes(dt, w.Panel(p), i, g)
			d, dm := quant.KSuper(dt, w.Panel(p), i, g)
			if int32(sc) != km.sc[row][g] || int32(mc) != km.mc[row][g] || d != km.d[row][g/quant.KGroups] || dm != km.dm[row][g/quant.KGroups] {
				t.Fatalf("%s row %d group %d: quant reads sc=%d mc=%d d=%v dm=%v, stored %d %d %v %v", dt, row, g,
					sc, mc, d, dm, km.sc[row][g], km.mc[row][g], km.d[row][g/quant.KGroups], km.dm[row][g/quant.KGroups])
			}
		}
	}
	return km
}

// fma32 is a·b + c rounded once to f32 (as VFMADD231PS).
func fma32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(256).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(256).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(256).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// kModel is the K kernels' result for activation row xq (Kp values),
// its group scales xs and sums xsum, output column c (before any
// accumulation into y): per group, in order,
//
//	f = fma(float32(Σ xq·u)·xs, d·sc, f);  f = fma(−xs·float32(Σxq), dm·mc, f)
func (km *kIntMatrix) kModel(c int, xq []int8, xs []float32, xsum []int32) float32 {
	var f float32
	for g := 0; g < km.groups; g++ {
		var dot int32
		for j := 0; j < quant.GroupK; j++ {
			dot += int32(xq[g*quant.GroupK+j]) * km.u[c][g*quant.GroupK+j]
		}
		s := km.d[c][g/quant.KGroups] * float32(km.sc[c][g])
		mn := km.dm[c][g/quant.KGroups] * float32(km.mc[c][g])
		aux := xs[g] * float32(xsum[g])
		f = fma32(float32(dot)*xs[g], s, f)
		f = fma32(-aux, mn, f)
	}
	return f
}

// kExactShapes are exactShapes' M and N with K across super-blocks.
var kExactShapes = func() [][3]int {
	var s [][3]int
	ms := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 25}
	ks := []int{256, 1, 300, 513, 32, 777, 257}
	ns := []int{16, 17, 40, 1}
	for i, m := range ms {
		for j, k := range ks {
			s = append(s, [3]int{m, ns[(i+j)%len(ns)], k})
		}
	}
	return s
}()

// sampledK says whether the exact K tests run shape si of kExactShapes in
// format di of kDTypes: as sampled, and in short mode under the race
// detector or emulation one format per shape, cycled (the native test
// stage runs every format at every shape).
func sampledK(si, di int) bool {
	if testing.Short() && (raceOn || os.Getenv("KTUNE_TEST_EXEC") != "") {
		return sampled(si) && (si/3)%len(kDTypes) == di
	}
	return sampled(si)
}

// checkKPanels runs im (an int8act panel driver) under each configuration
// on K matrices of each format at kExactShapes: random codes, values and
// activations (the whole s8 range), and every value and code at its
// maximum against all-127 and all −128 activations; group scales xs
// random; overwriting and accumulating into y. It requires kModel's
// outputs exactly.
func checkKPanels(t *testing.T, im *impl, cfgs []kernel.Config, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for di, dt := range kDTypes {
		for si, sh := range kExactShapes {
			if !sampledK(si, di) {
				continue
			}
			m, n, k := sh[0], sh[1], sh[2]
			for _, extreme := range []int8{0, 127, -128} {
				mx := newKIntMatrix(t, r, dt, n, k, extreme != 0)
				kp := mx.w.Kp
				g := kp / quant.GroupK
				xq := make([]int8, m*kp)
				xsum := make([]int32, m*g)
				xs := make([]float32, m*g)
				for i := 0; i < m; i++ {
					for j := 0; j < k; j++ {
						x := int8(r.IntN(256) - 128)
						if extreme != 0 {
							x = extreme
						}
						if i == 1 && extreme == 0 { // a zero row
							x = 0
						}
						xq[i*kp+j] = x
						xsum[i*g+j/quant.GroupK] += int32(x)
					}
				}
				for i := range xs {
					xs[i] = float32(r.Float64()*0.02 + 1e-4)
				}
				want := make([]float32, m*n)
				for i := 0; i < m; i++ {
					for c := 0; c < n; c++ {
						want[i*n+c] = mx.kModel(c, xq[i*kp:(i+1)*kp], xs[i*g:(i+1)*g], xsum[i*g:(i+1)*g])
					}
				}
				what := fmt.Sprintf("%s x=%d m=%d n=%d k=%d", dt, extreme, m, n, k)
				for _, cfg := range cfgs {
					for _, acc := range []bool{false, true} {
						y := make([]float32, m*n)
						for i := range y {
							y[i] = float32(i % 7)
						}
						a := &args{m: m, n: n, k: k, kp: kp, w: mx.w, y: y, ldy: n, acc: acc,
							xq: xq, xs: xs, xsum: xsum, ws: &workspace{}}
						im.run(a, cfg)
						for i := range y {
							w := want[i]
							if acc {
								w = float32(i%7) + w
							}
							if y[i] != w {
								t.Fatalf("%s %v acc=%v: y[%d,%d] = %v, want %v", what, cfg, acc, i/n, i%n, y[i], w)
							}
						}
					}
				}
			}
		}
	}
}

// checkKRun goes through Run (activation quantization included) for each
// K format at kExactShapes, gemv and gemm: random activations (a zero row
// and a zero group among them) quantized as Run does, and kModel on the
// quantized rows, exactly.
func checkKRun(t *testing.T, v *kernel.Variant, r *rand.Rand) {
	t.Helper()
	for di, dt := range kDTypes {
		for si, sh := range kExactShapes {
			if !sampledK(si, di) {
				continue
			}
			m, n, k := sh[0], sh[1], sh[2]
			mx := newKIntMatrix(t, r, dt, n, k, si%5 == 4)
			kp := mx.w.Kp
			g := kp / quant.GroupK
			x := make([]float32, m*k)
			for i := 0; i < m; i++ {
				if i == m/2 {
					continue // zero row
				}
				for j := 0; j < k; j++ {
					x[i*k+j] = float32(r.NormFloat64())
				}
				if i == m-1 && k > quant.GroupK {
					clear(x[i*k : i*k+quant.GroupK]) // and a zero group
				}
			}
			xq := make([]int8, m*kp)
			xs := make([]float32, m*g)
			xsum := make([]int32, m*g)
			for i := 0; i < m; i++ {
				quantizeRowGeneric(xq[i*kp:(i+1)*kp], xs[i*g:(i+1)*g], xsum[i*g:(i+1)*g], x[i*k:(i+1)*k])
			}
			for _, op := range allOps[:2] {
				y := make([]float32, m*n)
				vo, _ := kernel.Lookup(op + "/" + v.Name)
				Run(kernel.Choice{Variant: vo, Config: vo.DefaultConfig(nil, 2)}, y, x, mx.w, m, false)
				for i := 0; i < m; i++ {
					for c := 0; c < n; c++ {
						want := mx.kModel(c, xq[i*kp:(i+1)*kp], xs[i*g:(i+1)*g], xsum[i*g:(i+1)*g])
						if got := y[i*n+c]; got != want {
							t.Fatalf("%s %s m=%d n=%d k=%d: y[%d,%d] = %v, want %v", op, dt, m, n, k, i, c, got, want)
						}
					}
				}
			}
		}
	}
}

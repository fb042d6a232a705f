package gemm

// Exact checks of the int8- and BF16-activation variants: with unit
// scales and integer data every product and partial sum is an integer
// below 2²⁴, so the f32 outputs must equal the integer dot products
// exactly, whatever the variant's tiling, threads or accumulation order.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// intMatrix is a Q8/Q4 matrix with unit scales, stored weights u (offset
// binary for Q8, nibbles for Q4) for every padded row and k, and a per
// (row, group) integer min for Q4 with a min; for Q2 mins holds the
// offset codes c (w = u − (c−1)/4: every sum a multiple of 1/4, still
// exact in f32).
type intMatrix struct {
	w      *quant.Matrix
	u      [][]int32 // [Np][Kp] stored values
	mins   [][]int32 // [Np][groups] (HasMin)
	zp     int32     // zero point: 128 (Q8), 8 (Q4), 0 (min)
	n, k   int
	hasMin bool
	q2     bool
	// K formats (gemm_k_exact_test.go): w = ksc·u − kDM·kmc per (row, group)
	ksc, kmc [][]int32
}

// newIntMatrix fills every stored weight, padding included (the padded k
// must not contribute), with random values or with the maximum when max.
func newIntMatrix(t *testing.T, r *rand.Rand, dt kernel.DType, n, k int, hasMin, max bool) *intMatrix {
	t.Helper()
	w, err := quant.New(dt, n, k, hasMin)
	if err != nil {
		t.Fatal(err)
	}
	im := &intMatrix{w: w, n: n, k: k, hasMin: w.HasMin}
	top := int32(255)
	im.zp = 128
	if dt == kernel.Q4 {
		top, im.zp = 15, 8
		if w.HasMin {
			im.zp = 0
		}
	}
	if dt == kernel.Q3 {
		top, im.zp = 7, quant.Q3Zero
	}
	if dt == kernel.Q6 {
		top, im.zp = 63, quant.Q6Zero
	}
	if dt == kernel.Q5 {
		top, im.zp = 31, quant.Q5Zero
	}
	if dt == kernel.Q2 {
		top, im.zp, im.q2 = 3, 0, true
	}
	if quant.IsK(dt) {
		top, im.zp = map[kernel.DType]int32{kernel.Q3K: 7, kernel.Q4K: 15, kernel.Q5K: 31, kernel.Q6K: 63}[dt], 0
	}
	groups := w.Kp / quant.GroupK
	im.u = make([][]int32, w.Np)
	im.mins = make([][]int32, w.Np)
	for i := range im.u {
		im.u[i] = make([]int32, w.Kp)
		for j := range im.u[i] {
			im.u[i][j] = top
			if !max {
				im.u[i][j] = r.Int32N(top + 1)
			}
		}
		im.mins[i] = make([]int32, groups)
		for g := range im.mins[i] {
			im.mins[i][g] = r.Int32N(17) - 8
			if im.q2 {
				im.mins[i][g] = r.Int32N(16)
			}
		}
	}
	if quant.IsK(dt) {
		im.fillK(r, max)
		return im
	}
	one := half.F32ToF16(1)
	gb := w.GroupBytes()
	for p := 0; p < w.Panels(); p++ {
		panel := w.Panel(p)
		for g := 0; g < groups; g++ {
			rec := panel[g*gb:]
			for i := 0; i < quant.PanelRows; i++ {
				row := im.u[p*quant.PanelRows+i][g*quant.GroupK:]
				if dt == kernel.Q8 {
					for j := 0; j < quant.GroupK; j++ {
						rec[(j/4)*quant.LineBytes+4*i+j%4] = byte(row[j])
					}
					binary.LittleEndian.PutUint16(rec[8*quant.LineBytes+2*i:], one)
					continue
				}
				if dt == kernel.Q3 {
					for j := 0; j < quant.GroupK; j++ {
						setQ3(rec, i, j, int(row[j]))
					}
					binary.LittleEndian.PutUint16(rec[quant.Q3Lines*quant.LineBytes+2*i:], one)
					continue
				}
				if dt == kernel.Q2 {
					for j := 0; j < quant.GroupK; j++ {
						setQ2(rec, i, j, int(row[j]))
					}
					c := uint16(im.mins[p*quant.PanelRows+i][g])
					binary.LittleEndian.PutUint16(rec[quant.Q2Lines*quant.LineBytes+2*i:], one|c)
					continue
				}
				if dt == kernel.Q5 {
					for j := 0; j < quant.GroupK; j++ {
						setQ5(rec, i, j, int(row[j]))
					}
					binary.LittleEndian.PutUint16(rec[quant.Q5Lines*quant.LineBytes+2*i:], one)
					continue
				}
				if dt == kernel.Q6 {
					for j := 0; j < quant.GroupK; j++ {
						setQ6(rec, i, j, int(row[j]))
					}
					binary.LittleEndian.PutUint16(rec[quant.Q6Lines*quant.LineBytes+2*i:], one)
					continue
				}
				for c := 0; c < 4; c++ {
					for j := 0; j < 4; j++ {
						rec[c*quant.LineBytes+4*i+j] = byte(row[8*c+j]) | byte(row[8*c+4+j])<<4
					}
				}
				binary.LittleEndian.PutUint16(rec[4*quant.LineBytes+2*i:], one)
				if w.HasMin {
					m := half.F32ToF16(float32(im.mins[p*quant.PanelRows+i][g]))
					binary.LittleEndian.PutUint16(rec[4*quant.LineBytes+2*quant.PanelRows+2*i:], m)
				}
			}
		}
	}
	return im
}

// dot is the exact Σ_k x[k]·w[row,k] over the logical K.
func (im *intMatrix) dot(row int, x []int32) float64 { return im.dotRange(row, x, 0, im.k) }

// dotScaled is Σ_g xs[g]·(Σ_{k in group g} x[k]·w[row,k]).
func (im *intMatrix) dotScaled(row int, x []int32, xs []float32) float64 {
	var s float64
	for g, sc := range xs {
		s += float64(sc) * float64(im.dotRange(row, x, g*quant.GroupK, min(g*quant.GroupK+quant.GroupK, im.k)))
	}
	return s
}

func (im *intMatrix) dotRange(row int, x []int32, k0, k1 int) float64 {
	var s int64 // Q2: 4× the sum, 4w = 4u − c + 1
	for k := k0; k < k1; k++ {
		w := int64(im.u[row][k] - im.zp)
		if im.ksc != nil {
			w = int64(im.ksc[row][k/quant.GroupK]*im.u[row][k] - kDM*im.kmc[row][k/quant.GroupK])
		}
		if im.hasMin {
			w += int64(im.mins[row][k/quant.GroupK])
		}
		if im.q2 {
			w = 4*w - int64(im.mins[row][k/quant.GroupK]) + 1
		}
		s += w * int64(x[k])
	}
	if im.q2 {
		return float64(s) / 4
	}
	return float64(s)
}

func int8Variants(t *testing.T) []*kernel.Variant {
	var vs []*kernel.Variant
	for _, v := range kernel.Variants(OpGEMV) {
		if v.Class == kernel.ClassInt8Act && v.Available() {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		t.Fatal("no int8act variant available (generic_int8 always is)")
	}
	return vs
}

// configs is the default configuration plus every value of each
// non-grain parameter, at 1 and 2 threads.
func configs(v *kernel.Variant) []kernel.Config {
	base := v.DefaultConfig(nil, 1)
	out := []kernel.Config{base, v.DefaultConfig(nil, 2)}
	for _, p := range v.Params {
		if p.Name == "grain" {
			continue
		}
		for _, x := range p.Values {
			c := kernel.Config{Threads: 1 + len(out)%2, Params: base.Params.Clone()}
			c.Params[p.Name] = x
			out = append(out, c)
		}
	}
	return out
}

var exactShapes = func() [][3]int {
	var s [][3]int
	ms := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 25}
	ks := []int{32, 64, 96, 128, 160, 33, 100, 1}
	ns := []int{16, 17, 40, 1}
	for i, m := range ms {
		for j, k := range ks {
			s = append(s, [3]int{m, ns[(i+j)%len(ns)], k})
		}
	}
	return s
}()

// emulatedPortable reports whether a sweep skips v under an emulator in
// -short mode (CI's qemu stage, KTUNE_TEST_EXEC set): a portable (pure-Go)
// variant, which runs the same Go code natively in the test stage, and a
// variant without SVE in every model but the no-SVE one
// (kerneltest.RepeatUnderEmulation).
func emulatedPortable(v *kernel.Variant) bool {
	return testing.Short() && os.Getenv("KTUNE_TEST_EXEC") != "" && v.Requires == 0 || kerneltest.RepeatUnderEmulation(v)
}

// sampled reports whether case i of an exhaustive sweep runs: always,
// but under the race detector in -short mode (CI's race stage, which
// looks for data races, not for wrong sums; the test stage runs every
// case) only every third, so the sweeps still cross each shape family.
func sampled(i int) bool {
	return !(raceOn && testing.Short()) || i%3 == 0
}

// shapeThreads is the thread counts the shape sweeps (TestKShapes,
// TestQ5Shapes, TestQ2Shapes) run their case number seed at: 1, 2, 3 and
// 7; in short mode under emulation one of them, cycled by seed, and under
// the race detector one of 2, 3 and 7 (a split the detector can see), the
// test stage running them all.
func shapeThreads(seed uint64) []int {
	all := []int{1, 2, 3, 7}
	switch {
	case testing.Short() && raceOn:
		return all[1+seed%3 : 2+seed%3]
	case testing.Short() && os.Getenv("KTUNE_TEST_EXEC") != "":
		return all[seed%4 : seed%4+1]
	}
	return all
}

// TestInt8PanelsExact drives each int8act variant's panel kernel with
// hand-made int8 activations over the whole s8 range (−128 included, which
// quantizeRow never produces), group scales xs of 1 or 2 and unit weight
// scales, and compares the
// outputs with the exact integer dot products.
func TestInt8PanelsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, v := range int8Variants(t) {
		if emulatedPortable(v) {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			im := implOf(v)
			for _, dt := range []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K} {
				if !slices.Contains(v.DTypes, dt) {
					continue
				}
				for _, hasMin := range []bool{false, true} {
					if hasMin && dt != kernel.Q4 {
						continue
					}
					for si, sh := range exactShapes {
						if !sampled(si) {
							continue
						}
						m, n, k := sh[0], sh[1], sh[2]
						for _, extreme := range []int8{0, 127, -128} {
							if quant.IsK(dt) && extreme != 0 && k > quant.GroupK {
								continue // top codes, weights and activations: one group reaches 2²⁴ (kExactBound)
							}
							mx := newIntMatrix(t, r, dt, n, k, hasMin, extreme != 0)
							kp := mx.w.Kp
							g := kp / quant.GroupK
							xq := make([]int8, m*kp)
							xi := make([][]int32, m)
							for i := 0; i < m; i++ {
								xi[i] = make([]int32, kp)
								for j := 0; j < k; j++ {
									x := int8(r.IntN(256) - 128)
									if extreme != 0 {
										x = extreme
									}
									if i == 1 { // a zero row
										x = 0
									}
									xq[i*kp+j], xi[i][j] = x, int32(x)
								}
							}
							xsum := make([]int32, m*g)
							for i := 0; i < m; i++ {
								for j := 0; j < kp; j++ {
									xsum[i*g+j/quant.GroupK] += int32(xq[i*kp+j])
								}
							}
							xs := make([]float32, m*g) // group scales 1 or 2: still exact
							for i := range xs {
								xs[i] = float32(1 + r.IntN(2))
								if quant.IsK(dt) && extreme != 0 {
									xs[i] = 1
								}
							}
							checkPanelsExact(t, im, v, mx, m, xq, xi, xs, xsum, fmt.Sprintf("%s min=%v x=%d", dt, hasMin, extreme))
						}
					}
				}
			}
			// The K formats (if v serves them), against the model of their
			// kernels' arithmetic (gemm_k_exact_test.go).
			if slices.Contains(v.DTypes, kernel.Q4K) && kExactModel(v) {
				checkKPanels(t, im, configs(v), 31)
			}
		})
	}
}

// checkPanelsExact runs im's panel kernels (every configuration of v, with
// and without accumulation) on prepared int8 activations — xq [m×Kp], its
// integer copy xi, group scales xs and sums xsum [m×groups] — and requires
// the exact group-scaled integer dot products.
func checkPanelsExact(t *testing.T, im *impl, v *kernel.Variant, mx *intMatrix, m int, xq []int8, xi [][]int32, xs []float32, xsum []int32, what string) {
	t.Helper()
	n, k, kp := mx.n, mx.k, mx.w.Kp
	g := kp / quant.GroupK
	// the exact products, once for every configuration (under an emulator
	// the float64 sums cost ten times the kernels)
	exact := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for c := 0; c < n; c++ {
			exact[i*n+c] = mx.dotScaled(c, xi[i], xs[i*g:(i+1)*g])
			if mx.ksc != nil && mx.kExactBound(c, xi[i], xs[i*g:(i+1)*g])+7 >= 1<<24 {
				t.Fatalf("%s m=%d n=%d k=%d: y[%d,%d] not exact in f32 (kExactBound)", what, m, n, k, i, c)
			}
		}
	}
	for _, cfg := range configs(v) {
		for _, acc := range []bool{false, true} {
			y := make([]float32, m*n)
			for i := range y {
				y[i] = float32(i % 7)
			}
			a := &args{m: m, n: n, k: k, kp: kp, w: mx.w, y: y, ldy: n, acc: acc,
				xq: xq, xs: xs, xsum: xsum, ws: &workspace{}}
			im.run(a, cfg)
			for i := 0; i < m; i++ {
				for c := 0; c < n; c++ {
					want := exact[i*n+c]
					if acc {
						want += float64((i*n + c) % 7)
					}
					if got := float64(y[i*n+c]); got != want {
						t.Fatalf("%s m=%d n=%d k=%d %v acc=%v: y[%d,%d] = %v, want %v", what, m, n, k, cfg, acc, i, c, got, want)
					}
				}
			}
		}
	}
}

// TestInt8RunExact goes through Run (activation quantization included):
// integer activations with a ±127 in every non-zero group quantize exactly
// (scale 1), and an all-zero group or row has scale 0.
func TestInt8RunExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, v := range int8Variants(t) {
		t.Run(v.Name, func(t *testing.T) {
			for _, dt := range []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K} {
				if !slices.Contains(v.DTypes, dt) {
					continue
				}
				for _, sh := range exactShapes {
					m, n, k := sh[0], sh[1], sh[2]
					mx := newIntMatrix(t, r, dt, n, k, dt == kernel.Q4 && m%2 == 1, false)
					x := make([]float32, m*k)
					xi := make([][]int32, m)
					for i := 0; i < m; i++ {
						xi[i] = make([]int32, k)
						if i == m/2 {
							continue // zero row
						}
						for j := range xi[i] {
							xi[i][j] = r.Int32N(255) - 127
						}
						for g0 := 0; g0 < k; g0 += quant.GroupK { // a ±127 in every group
							xi[i][g0+r.IntN(min(quant.GroupK, k-g0))] = 127 * (1 - 2*int32(i%2))
						}
						if i == m-1 && k > quant.GroupK {
							clear(xi[i][:quant.GroupK]) // and a zero group
						}
						for j, q := range xi[i] {
							x[i*k+j] = float32(q)
						}
					}
					for _, op := range allOps[:2] {
						y := make([]float32, m*n)
						vo, _ := kernel.Lookup(op + "/" + v.Name)
						Run(kernel.Choice{Variant: vo, Config: vo.DefaultConfig(nil, 2)}, y, x, mx.w, m, false)
						for i := 0; i < m; i++ {
							for c := 0; c < n; c++ {
								if mx.ksc != nil && mx.kExactBound(c, xi[i], kOnes[:mx.w.Kp/quant.GroupK]) >= 1<<24 {
									t.Fatalf("%s %s m=%d n=%d k=%d: y[%d,%d] not exact in f32 (kExactBound)", op, dt, m, n, k, i, c)
								}
								if got, want := float64(y[i*n+c]), mx.dot(c, xi[i]); got != want {
									t.Fatalf("%s %s m=%d n=%d k=%d: y[%d,%d] = %v, want %v", op, dt, m, n, k, i, c, got, want)
								}
							}
						}
					}
				}
			}
			if slices.Contains(v.DTypes, kernel.Q4K) && kExactModel(v) {
				checkKRun(t, v, r)
			}
		})
	}
}

// TestBF16Exact: small integers are exact in BF16, and so are their
// products and sums, so bf16act variants must match exactly too.
func TestBF16Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	kerneltest.ForEachVariant(t, OpGEMV, func(t *testing.T, v *kernel.Variant) {
		if v.Class != kernel.ClassBF16Act {
			t.Skip("not bf16act")
		}
		for _, sh := range exactShapes {
			m, n, k := sh[0], sh[1], sh[2]+sh[0]%2 // odd K too
			w, err := quant.New(kernel.BF16, n, k, false)
			if err != nil {
				t.Fatal(err)
			}
			wi := make([][]int32, w.Np)
			for i := range wi {
				wi[i] = make([]int32, w.Kp)
				for j := range wi[i] {
					wi[i][j] = r.Int32N(33) - 16 // the padded k too
					p, ii := i/quant.PanelRows, i%quant.PanelRows
					off := 2 * ((j/2)*2*quant.PanelRows + 2*ii + j%2)
					binary.LittleEndian.PutUint16(w.Panel(p)[off:], half.F32ToBF16(float32(wi[i][j])))
				}
			}
			x := make([]float32, m*k)
			for i := range x {
				x[i] = float32(r.IntN(255) - 127)
			}
			for _, cfg := range configs(v) {
				y := make([]float32, m*n)
				Run(kernel.Choice{Variant: v, Config: cfg}, y, x, w, m, false)
				for i := 0; i < m; i++ {
					for c := 0; c < n; c++ {
						var want int64
						for j := 0; j < k; j++ {
							want += int64(wi[c][j]) * int64(x[i*k+j])
						}
						if got := float64(y[i*n+c]); got != float64(want) {
							t.Fatalf("m=%d n=%d k=%d %v: y[%d,%d] = %v, want %d", m, n, k, cfg, i, c, got, want)
						}
					}
				}
			}
		}
	})
}

// TestQuantizeRowISAs compares quantizeRow with the generic code under
// every ISA mask (AVX-512, AVX2, none), on lengths around the vector and
// group widths and on rounding ties.
func TestQuantizeRowISAs(t *testing.T) {
	masks := [][]cpu.Feature{nil, {cpu.AVX512F}, {cpu.AVX512F, cpu.AVX2}}
	r := rand.New(rand.NewPCG(17, 18))
	var rows [][]float32
	for _, k := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 100, 127, 129, 255, 2304, 4097} {
		x := make([]float32, k)
		kerneltest.FillNormal(r, x, 0, 3)
		rows = append(rows, x, make([]float32, k)) // and an all-zero row
		ties := make([]float32, k)                 // amax = 127 per group: x·inv = x exactly, .5 ties round to even
		for i := range ties {
			ties[i] = float32(r.IntN(254)-127) + 0.5
			if i%32 == 31 || i == k-1 {
				ties[i] = -127 // each group's max, the last one in the Go tail
			}
		}
		rows = append(rows, ties)
		big := slices.Clone(x)
		big[k/2] = float32(math.Copysign(1e30, float64(big[k/2])))
		rows = append(rows, big)
	}
	for _, mask := range masks {
		t.Run(fmt.Sprint("disable=", mask), func(t *testing.T) {
			defer cpu.Disable(mask...)()
			for _, x := range rows {
				k := len(x)
				kp := quant.PaddedK(kernel.Q8, k)
				q, q2 := make([]int8, kp), make([]int8, kp)
				sums, sums2 := make([]int32, kp/32), make([]int32, kp/32)
				s, s2 := make([]float32, kp/32), make([]float32, kp/32)
				for i := range q2 {
					q2[i] = 99 // must be overwritten (padding cleared)
				}
				quantizeRowGeneric(q, s, sums, x)
				quantizeRow(q2, s2, sums2, x)
				if !slices.Equal(s, s2) || !slices.Equal(q, q2) || !slices.Equal(sums, sums2) {
					t.Fatalf("k=%d: got s=%v q=%v sums=%v\nwant s=%v q=%v sums=%v", k, s2, q2, sums2, s, q, sums)
				}
			}
		})
	}
}

// TestVariantsMasked re-checks the variants against the reference with
// AVX-512 masked off (avx_vnni and the AVX2 paths take over), with the
// VNNI features masked (the VNNI variants must vanish from the defaults;
// avx2_int8 may take their place)
// and with the BF16 features masked (avx512_bf16, neon_bf16). A mask of
// features the machine does not have changes nothing and is skipped.
func TestVariantsMasked(t *testing.T) {
	shapes := []kernel.Shape{kernel.MakeShape(shapeKeys, 1, 33, 100), kernel.MakeShape(shapeKeys, 9, 17, 64),
		kernel.MakeShape(shapeKeys, 20, 40, 160)}
	for _, mask := range [][]cpu.Feature{{cpu.AVX512F}, {cpu.AVX512VNNI, cpu.AVXVNNI}, {cpu.AVX512BF16}, {cpu.BF16}} {
		t.Run(fmt.Sprint("disable=", mask), func(t *testing.T) {
			if cpu.Get().Effective.Intersect(cpu.NewSet(mask...)) == 0 {
				t.Skipf("%v: not present", mask)
			}
			defer cpu.Disable(mask...)()
			for _, op := range allOps {
				for _, v := range kernel.Variants(op) {
					if v.Reference {
						continue
					}
					if v.Requires.Intersect(cpu.NewSet(mask...)) != 0 {
						if v.Available() {
							t.Errorf("%s available with %v masked", v.ID(), mask)
						}
						continue
					}
					if !v.Available() {
						continue
					}
					for _, dt := range panelFormats(v.DTypes) {
						kerneltest.CheckVariant(t, v, dt, shapes, 1, 1)
					}
				}
				for _, dt := range weightDTypes {
					if d := kernel.Default(op, dt, kernel.ClassInt8Act, kernel.ClassBF16Act, kernel.ClassF32); d != nil &&
						d.Requires.Intersect(cpu.NewSet(mask...)) != 0 {
						t.Errorf("default %s for %s needs masked %v", d.ID(), dt, mask)
					}
				}
			}
		})
	}
}

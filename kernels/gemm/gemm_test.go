package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

func TestMain(m *testing.M) { kerneltest.Main(m, "gemm") }

func testShapes(op string) []kernel.Shape {
	ms := []int{1, 2, 3, 7, 8, 9, 64, 513}
	nk := [][2]int{{1, 1}, {17, 33}, {16, 32}, {33, 100}, {31, 257}, {48, 64}}
	if testing.Short() {
		ms = []int{1, 3, 8, 65}
		nk = [][2]int{{17, 33}, {33, 100}, {16, 64}}
	}
	if op == OpGEMV {
		ms = []int{1, 2, 3, 4, 7, 8}
	}
	var out []kernel.Shape
	for _, m := range ms {
		for _, s := range nk {
			if m > 64 && s[0]*s[1] > 4000 {
				continue // keep the float64 reference cheap
			}
			out = append(out, kernel.MakeShape(shapeKeys, m, s[0], s[1]))
		}
	}
	return out
}

// TestVariants checks every variant of every op and dtype against the
// reference (seeds 1 and 2: Q4 with and without a min); gateup under its
// error model (dotCheck), the others at the class tolerance.
func TestVariants(t *testing.T) {
	for _, op := range allOps {
		t.Run(op, func(t *testing.T) {
			kerneltest.ForEachVariant(t, op, func(t *testing.T, v *kernel.Variant) {
				for _, dt := range panelFormats(v.DTypes) {
					t.Run(string(dt), func(t *testing.T) {
						for _, seed := range []uint64{1, 2} {
							if op == OpGateUp {
								checkGateUpVariant(t, v, dt, seed)
								continue
							}
							kerneltest.CheckVariant(t, v, dt, testShapes(op), 2, seed)
						}
					})
				}
			})
		})
	}
}

// checkGateUpVariant is kerneltest.CheckVariant for gateup (the default
// configuration and the first two of the space at every test shape), each
// output through dotCheck.
func checkGateUpVariant(t *testing.T, v *kernel.Variant, dt kernel.DType, seed uint64) {
	t.Helper()
	checkGateUpShapes(t, v, dt, seed, testShapes(OpGateUp))
}

// checkGateUpShapes is checkGateUpVariant at the given shapes.
func checkGateUpShapes(t *testing.T, v *kernel.Variant, dt kernel.DType, seed uint64, shapes []kernel.Shape) {
	t.Helper()
	for _, s := range shapes {
		cfgs := []kernel.Config{v.DefaultConfig(s, 1)}
		for i, vals := range v.Space(s) {
			if i >= 2 {
				break
			}
			cfgs = append(cfgs, kernel.Config{Threads: 1, Params: vals})
		}
		for _, cfg := range cfgs {
			p, want := sharedProblem(t, OpGateUp, s, dt, seed)
			got, err := kernel.RunOutput(v, p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := dotCheck(p, v.Class, got, want); err != nil {
				t.Errorf("%s at %s dtype=%s seed=%d %v: %v", v.ID(), s, dt, seed, cfg.Params, err)
			}
		}
	}
}

// TestRunGuards calls Run on guard-padded, misaligned buffers, with and
// without accumulation, and multithreaded.
func TestRunGuards(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	kerneltest.ForEachVariant(t, OpGEMV, func(t *testing.T, v *kernel.Variant) {
		for _, dt := range panelFormats(v.DTypes) {
			for _, sh := range [][3]int{{1, 33, 70}, {3, 20, 64}, {8, 100, 33}} {
				m, n, k := sh[0], sh[1], sh[2]
				w := make([]float32, n*k)
				kerneltest.FillNormal(r, w, 0, 0.2)
				wm, err := quant.Quantize(dt, w, n, k, dt == kernel.Q4)
				if err != nil {
					t.Fatal(err)
				}
				for threads := 1; threads <= 2; threads++ {
					for align := 0; align < 4; align += 3 {
						x, y := kerneltest.NewGuarded(m*k, align), kerneltest.NewGuarded(m*n, 3-align)
						kerneltest.FillNormal(r, x.Data(), 0, 1)
						kerneltest.FillNormal(r, y.Data(), 0, 1)
						y0 := append([]float32(nil), y.Data()...)
						want := make([]float32, m*n)
						ref := kernel.Reference(OpGEMV)
						Run(kernel.Choice{Variant: ref, Config: ref.DefaultConfig(nil, 1)}, want, x.Data(), wm, m, false)
						for i := range want {
							want[i] += y0[i]
						}
						Run(kernel.Choice{Variant: v, Config: v.DefaultConfig(nil, threads)}, y.Data(), x.Data(), wm, m, true)
						label := fmt.Sprintf("%s %d×%d×%d threads=%d acc", dt, m, n, k, threads)
						kerneltest.Close(t, label, y.Data(), want, kernel.LookupOp(OpGEMV).Tol(v.Class, nil))
						x.CheckGuards(t)
						y.CheckGuards(t)
					}
				}
			}
		}
	})
}

func TestQuantizeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{1, 31, 32, 33, 100, 2304} {
		kp := quant.PaddedK(kernel.Q8, k)
		g := kp / 32
		x := make([]float32, k)
		kerneltest.FillNormal(r, x, 0, 2)
		if k > 64 {
			x[40] = 1000 // an outlier: only its group's grid may coarsen
			clear(x[64:96])
		}
		q, s, sums := make([]int8, kp), make([]float32, g), make([]int32, g)
		q2, s2, sums2 := make([]int8, kp), make([]float32, g), make([]int32, g)
		quantizeRowGeneric(q, s, sums, x)
		quantizeRow(q2, s2, sums2, x)
		if fmt.Sprint(s) != fmt.Sprint(s2) || fmt.Sprint(q) != fmt.Sprint(q2) || fmt.Sprint(sums) != fmt.Sprint(sums2) {
			t.Errorf("k=%d: vector quantization differs from the generic one", k)
		}
		for i, v := range x {
			sg := s[i/32]
			var amax float32
			for _, u := range x[i/32*32 : min(i/32*32+32, k)] {
				amax = max(amax, float32(math.Abs(float64(u))))
			}
			if sg != amax/127 {
				t.Fatalf("k=%d group %d: scale %v, want max|x_g|/127 = %v", k, i/32, sg, amax/127)
			}
			if d := v - sg*float32(q[i]); d > sg/2*1.0001 || d < -sg/2*1.0001 {
				t.Fatalf("k=%d i=%d: %v quantized to %d·%v", k, i, v, q[i], sg)
			}
		}
		for gi := range sums {
			var want int32
			for _, v := range q[gi*32 : gi*32+32] {
				want += int32(v)
			}
			if sums[gi] != want {
				t.Fatalf("k=%d group %d: sum %d, want %d", k, gi, sums[gi], want)
			}
		}
		for _, v := range q[k:] {
			if v != 0 {
				t.Fatalf("k=%d: padding not zero: %v", k, q[k:])
			}
		}
	}
}

// FuzzGEMM checks every candidate of gemm.gemv and gemm.gemm at fuzzed
// shapes, dtypes and seeds with dotCheck (the dot-product error model, and
// the class's exact activation rounding). testdata/fuzz/FuzzGEMM keeps the
// inputs that failed the plain relative RMS (see TestFuzzCrashers).
func FuzzGEMM(f *testing.F) {
	f.Add(uint8(1), uint8(17), uint8(33), uint64(1), uint8(0))
	f.Add(uint8(9), uint8(16), uint8(64), uint64(2), uint8(3))
	f.Add(uint8(3), uint8(1), uint8(1), uint64(3), uint8(2))
	f.Fuzz(func(t *testing.T, m, n, k uint8, seed uint64, dtSel uint8) {
		if m == 0 || n == 0 || k == 0 {
			return
		}
		dt := weightDTypes[int(dtSel)%len(weightDTypes)]
		s := kernel.MakeShape(shapeKeys, int(m%40)+1, int(n), int(k))
		for _, op := range []string{OpGEMV, OpGEMM} {
			fuzzOne(t, op, dt, s, seed)
		}
	})
}

// panelFormats drops the GGUF formats from ds: their rows are whole ggml
// blocks, so the shapes of the panel formats' tests (k = 33, 100, …) do
// not fit them; TestGGUFVariants checks them at shapes that do.
func panelFormats(ds []kernel.DType) []kernel.DType {
	var out []kernel.DType
	for _, dt := range ds {
		if !quant.IsGGUF(dt) {
			out = append(out, dt)
		}
	}
	return out
}

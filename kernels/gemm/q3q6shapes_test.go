package gemm

import (
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// testQ3Q6Shapes runs the named variants' kernels for the given formats
// (Q3 and Q6, or Q2, or Q5, which take the same dot-product checks) at awkward
// shapes against the reference with the dot-product error model (as
// TestQ3Shapes does), beyond the default configuration: M = 1…13 (the
// one-row panel kernels, the row tiles and, past 8, the f32 variants'
// gemm regime), N not a multiple of the 16-row panel, K not a multiple of
// 256 (nor of the 32-k group, but for 32 and 288), at 1, 2, 3 and 7
// threads, for gemv, gemm and gateup (-short: one op and thread count per
// shape, in turn), each non-grain parameter (mr, nb) cycled through its
// values. The architectures' tests call it with their variants.
func testQ3Q6Shapes(t *testing.T, variants []string, dts ...kernel.DType) {
	nks := [][2]int{{1, 1}, {17, 33}, {40, 95}, {33, 288}, {63, 257}, {16, 32}}
	if testing.Short() {
		nks = nks[:5]
	}
	for _, name := range variants {
		t.Run(name, func(t *testing.T) {
			v, err := kernel.Lookup(OpGEMV + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			kerneltest.Features(t, v.Requires)
			for _, dt := range dts {
				if !slices.Contains(v.DTypes, dt) {
					t.Fatalf("%s does not list %s", v.ID(), dt)
				}
				seed := uint64(11)
				for m := 1; m <= 13; m++ {
					for i, nk := range nks {
						s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
						turn := m + i
						if testing.Short() {
							op := allOps[turn%len(allOps)]
							checkShapeCycled(t, op, name, dt, s, seed, []int{1, 2, 3, 7}[turn%4], turn)
						} else {
							for _, op := range allOps {
								for _, threads := range []int{1, 2, 3, 7} {
									checkShapeCycled(t, op, name, dt, s, seed, threads, turn)
								}
							}
						}
						seed++
					}
				}
			}
		})
	}
}

// checkShapeCycled runs one variant (by name) of op on one problem at the
// given threads, each non-grain parameter at its value number turn (mod
// its count), and checks it against the reference.
func checkShapeCycled(t *testing.T, op, name string, dt kernel.DType, s kernel.Shape, seed uint64, threads, turn int) {
	t.Helper()
	v, err := kernel.Lookup(op + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	p, want := sharedProblem(t, op, s, dt, seed)
	cfg := v.DefaultConfig(s, threads)
	for _, prm := range v.Params {
		if prm.Name != "grain" && len(prm.Values) > 0 {
			cfg.Params[prm.Name] = prm.Values[turn%len(prm.Values)]
		}
	}
	checkShapeConfig(t, v, dt, s, seed, cfg, want, p)
}

// checkShapeConfig runs variant v at cfg on the problem p (made with
// seed) and checks it against the reference output want.
func checkShapeConfig(t *testing.T, v *kernel.Variant, dt kernel.DType, s kernel.Shape, seed uint64, cfg kernel.Config, want []float32, p *problem) {
	t.Helper()
	threads := cfg.Threads
	got, err := kernel.RunOutput(v, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := dotCheck(p, v.Class, got, want); err != nil {
		t.Errorf("%s at %s dtype=%s seed=%d threads=%d %v: %v", v.ID(), s, dt, seed, threads, cfg.Params, err)
	}
}

//go:build arm64 && gc && !purego

package gemm

import (
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// armQ3Q6Variants are the arm64 variants with Q3 and Q6 kernels.
var armQ3Q6Variants = []string{"neon_dotprod", "sve_dotprod"}

// TestQ3Q6ShapesARM64 runs the arm64 Q3 and Q6 kernels at awkward shapes
// against the reference with the dot-product error model (as TestQ3Shapes
// does), over more than the default configuration: M = 1…13 (below,
// at and above the nb block), N not a multiple of the 16-row panel, K
// not a multiple of 256 (nor of the 32-k group, but for 32), at 1, 2, 3
// and 7 threads, for gemv, gemm and gateup (-short: one op and thread
// count per shape, in turn), with panel blocks nb of 1 and 4 beside the
// default.
func TestQ3Q6ShapesARM64(t *testing.T) {
	nks := [][2]int{{1, 1}, {17, 33}, {40, 95}, {33, 288}, {63, 257}, {16, 32}}
	if testing.Short() {
		nks = nks[:5]
	}
	for _, name := range armQ3Q6Variants {
		t.Run(name, func(t *testing.T) {
			v, err := kernel.Lookup(OpGEMV + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			kerneltest.Features(t, v.Requires)
			for _, dt := range []kernel.DType{kernel.Q3, kernel.Q6} {
				if !slices.Contains(v.DTypes, dt) {
					t.Fatalf("%s does not list %s", v.ID(), dt)
				}
				seed := uint64(7)
				for m := 1; m <= 13; m++ {
					for i, nk := range nks {
						s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
						nb := []int{0, 1, 4}[(m+2*i)%3]
						if testing.Short() { // one op and thread count per shape, in turn
							op := []string{OpGEMV, OpGEMM, OpGateUp}[(m+i)%3]
							checkARMShape(t, op, name, dt, s, seed, []int{1, 2, 3, 7}[(m+i)%4], nb)
						} else {
							for _, op := range allOps {
								for _, threads := range []int{1, 2, 3, 7} {
									checkARMShape(t, op, name, dt, s, seed, threads, nb)
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

// checkARMShape runs one variant (by name) of op on one problem at the
// given threads and nb (0: the default) and checks it against the
// reference.
func checkARMShape(t *testing.T, op, name string, dt kernel.DType, s kernel.Shape, seed uint64, threads, nb int) {
	t.Helper()
	o := kernel.LookupOp(op)
	v, err := kernel.Lookup(op + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kernel.ReferenceOutput(o, s, dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.NewProblem(s, dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := v.DefaultConfig(s, threads)
	if nb > 0 {
		cfg.Params["nb"] = nb
	}
	if op == OpGateUp { // silu(g)·u: the op's tolerance (dotCheck models a plain X·Wᵀ)
		if _, err := kernel.VerifyOn(v, p, cfg, want); err != nil {
			t.Errorf("%s at %s dtype=%s seed=%d threads=%d %v: %v", v.ID(), s, dt, seed, threads, cfg.Params, err)
		}
		return
	}
	got, err := kernel.RunOutput(v, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := dotCheck(p.(*problem), v.Class, got, want); err != nil {
		t.Errorf("%s at %s dtype=%s seed=%d threads=%d %v: %v", v.ID(), s, dt, seed, threads, cfg.Params, err)
	}
}

// TestFastQ6ARM64: on arm64, GGUF fast mode packs Q6_K as Q6 where the
// NEON dot product or SVE serves it, and not once both are masked.
func TestFastQ6ARM64(t *testing.T) {
	fast := func() bool { return cpu.Has(cpu.ASIMDDP) || cpu.Has(cpu.SVE) }
	if got, want := quant.FastQ6(), fast(); got != want {
		t.Errorf("FastQ6() = %v with asimddp %v, sve %v", got, cpu.Has(cpu.ASIMDDP), cpu.Has(cpu.SVE))
	}
	for _, f := range []cpu.Feature{cpu.ASIMDDP, cpu.SVE} {
		restore := cpu.Disable(f)
		if got, want := quant.FastQ6(), fast(); got != want {
			t.Errorf("FastQ6() = %v with %v disabled (want %v)", got, f, want)
		}
		restore()
	}
	defer cpu.Disable(cpu.ASIMDDP, cpu.SVE)()
	if quant.FastQ6() {
		t.Error("FastQ6() with asimddp and sve disabled")
	}
}

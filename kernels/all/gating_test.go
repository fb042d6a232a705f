package all_test

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// TestAvailableVariantsRun: every available variant of every op runs, on
// each dtype it serves, at the op's first TestThreadCountIdentity shape on
// 2 threads, and agrees with the reference within its class tolerance. It
// skips nothing under an emulator: a qemu model whose sweeps repeat
// another model's (kerneltest.RepeatUnderEmulation: CI's A64FX, whose SVE
// is the 512-bit model's) still runs each variant its CPU is said to have,
// so a variant gated on wrongly (an instruction the CPU lacks: SIGILL) or
// not at all (KTUNE_REQUIRE lists a feature it needs) fails here.
func TestAvailableVariantsRun(t *testing.T) {
	if _, err := kerneltest.Required(); err != nil {
		t.Fatal(err)
	}
	for _, op := range kernel.Ops() {
		dims, ok := threadShapes[op.Name]
		if !ok || len(dims) == 0 {
			t.Fatalf("%s has no shapes in threadShapes", op.Name)
		}
		base := kernel.MakeShape(op.ShapeKeys, dims[0]...)
		for _, v := range kernel.Variants(op.Name) {
			if v.Reference {
				continue
			}
			if !v.Available() {
				t.Run(v.ID(), func(t *testing.T) { kerneltest.Variant(t, v.ID()) })
				continue
			}
			for _, dt := range v.DTypes {
				if !op.Serves(dt) {
					continue
				}
				s := ggufShape(op, base, dt)
				if _, err := kernel.Verify(v, s, dt, 1, v.DefaultConfig(s, 2), nil); err != nil {
					t.Errorf("%s dtype=%s: %v", v.ID(), dt, err)
				}
			}
		}
	}
}

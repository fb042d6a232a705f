package kerneltest

import (
	"os"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// RepeatUnderEmulation reports whether testing v here repeats what another
// of CI's qemu models already tests: in -short mode under an emulator
// (KTUNE_TEST_EXEC set), a variant that does not use SVE (NEON, dot
// product, i8mm, BF16, pure Go) runs the same arm64 code whatever the SVE
// vector length, so it is tested in the model without SVE
// (KTUNE_EXPECT_SVE_BITS 0) alone, not again in the SVE models (128, 256,
// 512, 2048 bits, A64FX); and in a model that CI marks KTUNE_GATING_ONLY
// (A64FX, whose SVE is 512 bits like the max model's at 512, which runs
// the same SVE code), every variant repeats. Such a model still checks its
// gating: which variants are available, and that each runs
// (kernels/all's TestAvailableVariantsRun skips nothing). Native runs and
// long mode test every variant everywhere.
func RepeatUnderEmulation(v *kernel.Variant) bool {
	if !testing.Short() || os.Getenv("KTUNE_TEST_EXEC") == "" {
		return false
	}
	if os.Getenv("KTUNE_GATING_ONLY") != "" {
		return true
	}
	if v.Requires.Has(cpu.SVE) {
		return false
	}
	switch os.Getenv("KTUNE_EXPECT_SVE_BITS") {
	case "", "0":
		return false
	}
	return true
}

// SkipRepeatUnderEmulation skips the test of an available variant v when
// RepeatUnderEmulation(v).
func SkipRepeatUnderEmulation(t *testing.T, v *kernel.Variant) {
	t.Helper()
	if v.Available() && RepeatUnderEmulation(v) {
		t.Skip("the same code as in another qemu model, which tests it (kerneltest.RepeatUnderEmulation)")
	}
}

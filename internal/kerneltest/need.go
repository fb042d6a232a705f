package kerneltest

import (
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// Variant returns the registered variant id ("family.op/name") for a test
// that drives it directly. Not registered fails the test (the list of
// what each architecture must register is kernels/all's
// expectedVariants); unavailable skips it, unless KTUNE_REQUIRE covers the
// variant's requirements and no test mask removed them: then it fails.
func Variant(t testing.TB, id string) *kernel.Variant {
	t.Helper()
	v, err := kernel.Lookup(id)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !v.Available() {
		skipUnlessRequired(t, v.ID(), v.Requires)
	}
	return v
}

// Features skips the test unless the effective CPU features include fs,
// the same way: a failure when KTUNE_REQUIRE covers fs and no test mask
// removed them.
func Features(t testing.TB, fs cpu.Set) {
	t.Helper()
	if !cpu.HasAll(fs) {
		skipUnlessRequired(t, "this test", fs)
	}
}

// skipUnlessRequired skips a test of what (needing fs, unavailable) or
// fails it where KTUNE_REQUIRE says fs must be there. A mask set inside
// the test process (cpu.Disable) excuses it; KTUNE_MAX_ISA/KTUNE_DISABLE
// do not: Main refuses them beside a KTUNE_REQUIRE they contradict.
func skipUnlessRequired(t testing.TB, what string, fs cpu.Set) {
	t.Helper()
	req, err := Required()
	if err != nil {
		t.Fatal(err)
	}
	info := cpu.Get()
	missing := fs.Minus(info.Effective)
	if req.HasAll(fs) && missing.Intersect(info.Masked) == 0 {
		t.Fatalf("%s is required (KTUNE_REQUIRE=%s) but unavailable: missing %s", what, req, missing)
	}
	t.Skipf("%s needs %s (missing %s)", what, fs, missing)
}

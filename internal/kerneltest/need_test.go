package kerneltest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/testexec"
)

// With KTUNE_KERNELTEST_CHILD set, this binary is the child of
// TestRequireAgainstMask: Main must refuse before any test runs.
func TestMain(m *testing.M) {
	if os.Getenv("KTUNE_KERNELTEST_CHILD") != "" {
		Main(m)
	}
	os.Exit(m.Run())
}

// recorder stands in for a test: it records Fatalf and Skipf.
type recorder struct {
	testing.TB
	mu             sync.Mutex
	fatal, skipped string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(f string, a ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(f, a...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Fatal(a ...any) { r.Fatalf("%s", fmt.Sprint(a...)) }
func (r *recorder) Skipf(f string, a ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprintf(f, a...)
	r.mu.Unlock()
	runtime.Goexit()
}

func record(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); fn(r) }()
	<-done
	return r
}

func TestVariantNotRegisteredFails(t *testing.T) {
	r := record(t, func(tb testing.TB) { Variant(tb, "gemm.gemv/avx1024") })
	if r.fatal == "" {
		t.Fatal("an unregistered variant did not fail the test")
	}
}

// A feature set this machine lacks skips, and fails once KTUNE_REQUIRE
// names it (Required reads the environment at each call).
func TestFeaturesRequired(t *testing.T) {
	var lacking cpu.Set
	for _, f := range []cpu.Set{cpu.AMX, cpu.NewSet(cpu.SVE), cpu.NewSet(cpu.AVX512F), cpu.NewSet(cpu.AVX2)} {
		if !cpu.HasAll(f) {
			lacking = f
			break
		}
	}
	if lacking == 0 {
		t.Skip("this machine has every feature tried")
	}
	t.Setenv("KTUNE_REQUIRE", "")
	if r := record(t, func(tb testing.TB) { Features(tb, lacking) }); r.skipped == "" || r.fatal != "" {
		t.Errorf("missing %s without KTUNE_REQUIRE: skipped %q, fatal %q", lacking, r.skipped, r.fatal)
	}
	t.Setenv("KTUNE_REQUIRE", lacking.String())
	if r := record(t, func(tb testing.TB) { Features(tb, lacking) }); r.fatal == "" {
		t.Errorf("missing %s with KTUNE_REQUIRE=%s: not a failure (skipped %q)", lacking, os.Getenv("KTUNE_REQUIRE"), r.skipped)
	}
}

// KTUNE_REQUIRE naming a feature KTUNE_MAX_ISA masks off is refused:
// otherwise the required variant's failure would turn into a skip.
func TestRequireAgainstMask(t *testing.T) {
	if !cpu.Get().Hardware.Has(cpu.AVX512F) {
		t.Skip("needs a machine with avx512f to mask it off")
	}
	cmd := testexec.Self("-test.run=^$")
	cmd.Env = append(os.Environ(), "KTUNE_KERNELTEST_CHILD=1", "KTUNE_REQUIRE=avx512f", "KTUNE_MAX_ISA=avx2")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "mask off") {
		t.Fatalf("KTUNE_REQUIRE=avx512f with KTUNE_MAX_ISA=avx2 was not refused: %v\n%s", err, out)
	}
}

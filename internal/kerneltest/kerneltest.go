// Package kerneltest runs every kernel variant of an op through the same
// test (crypto/internal/cryptotest style), with guard-padded buffers,
// awkward sizes and named tolerances.
//
// KTUNE_REQUIRE=avx512f,avx512_vnni,... turns a skip into a failure: a
// variant whose requirements are all in that list must be available, and
// every listed feature must be present on the machine. CI sets it to the
// features its machine really has, so a variant that silently stops being
// selected fails the build.
package kerneltest

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/benchconf"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
)

// Required parses KTUNE_REQUIRE (empty set when unset).
func Required() (cpu.Set, error) {
	s, err := cpu.ParseSet(os.Getenv("KTUNE_REQUIRE"))
	if err != nil {
		return 0, fmt.Errorf("KTUNE_REQUIRE: %v", err)
	}
	return s, nil
}

// Main is a TestMain body: it logs the machine and the registered variants
// of the package's ops (families), checks KTUNE_REQUIRE against the
// hardware, then runs the tests.
func Main(m *testing.M, families ...string) {
	// KTUNE_TEST_POOL_SIZE sizes the default pool: a child a test re-runs
	// with it checks thread splits over more workers than the machine has
	// CPUs (the extra workers park)
	if n, err := strconv.Atoi(os.Getenv("KTUNE_TEST_POOL_SIZE")); err == nil && n > 0 {
		pool.SetDefaultSize(n)
	}
	info := cpu.Get()
	fmt.Fprintf(os.Stderr, "kerneltest: %s, fingerprint %s, effective %s\n", info.Brand, info.Fingerprint(), info.Effective)
	for _, o := range kernel.Ops() {
		if !inFamilies(o, families) {
			continue
		}
		var avail, not []string
		for _, v := range kernel.Variants(o.Name) {
			if v.Available() {
				avail = append(avail, v.Name)
			} else {
				not = append(not, v.Name+"(needs "+v.Requires.String()+")")
			}
		}
		fmt.Fprintf(os.Stderr, "kerneltest: %s: using %s; unavailable: %s\n", o.Name, strings.Join(avail, " "), strings.Join(not, " "))
	}
	req, err := Required()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kerneltest:", err)
		os.Exit(2)
	}
	hw := info.Hardware
	if !info.AMXPermission {
		hw = hw.Minus(cpu.AMX)
	}
	if missing := req.Minus(hw); missing != 0 {
		fmt.Fprintf(os.Stderr, "kerneltest: KTUNE_REQUIRE names %s, which this machine does not have\n", missing)
		os.Exit(2)
	}
	// a mask from the environment would turn a required variant's failure
	// into a skip: the two contradict each other
	if masked := req.Intersect(info.Masked); masked != 0 {
		fmt.Fprintf(os.Stderr, "kerneltest: KTUNE_REQUIRE names %s, which KTUNE_MAX_ISA/KTUNE_DISABLE mask off (%s): drop one of them\n", masked, info.Mask)
		os.Exit(2)
	}
	if f := flag.Lookup("test.bench"); f != nil {
		flag.Parse()
		if f.Value.String() != "" {
			benchconf.Write(os.Stdout)
		}
	}
	os.Exit(m.Run())
}

func inFamilies(o *kernel.Op, families []string) bool {
	if len(families) == 0 {
		return true
	}
	for _, f := range families {
		if o.Family() == f {
			return true
		}
	}
	return false
}

// ForEachVariant runs fn as a subtest for every variant registered for op:
// the available ones by priority, then the reference. An unavailable
// variant is skipped, unless KTUNE_REQUIRE covers its requirements and no
// test mask (cpu.Disable) removed them: then it fails. So is a variant
// whose test here repeats another qemu model's (RepeatUnderEmulation).
func ForEachVariant(t *testing.T, op string, fn func(t *testing.T, v *kernel.Variant)) {
	t.Helper()
	vs := kernel.Variants(op)
	if len(vs) == 0 {
		t.Fatalf("no variants registered for %s", op)
	}
	if kernel.Reference(op) == nil {
		t.Fatalf("%s has no reference variant", op)
	}
	if _, err := Required(); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Available() {
				skipUnlessRequired(t, v.ID(), v.Requires)
			}
			SkipRepeatUnderEmulation(t, v)
			fn(t, v)
		})
	}
}

// CheckVariant verifies v against the op's reference at each shape, for
// the default configuration and every configuration of v's space (up to
// maxConfigs per shape, 0 for all), with the given seed.
func CheckVariant(t *testing.T, v *kernel.Variant, dt kernel.DType, shapes []kernel.Shape, maxConfigs int, seed uint64) {
	t.Helper()
	op := kernel.LookupOp(v.Op)
	if op == nil {
		t.Fatalf("%s: op not registered", v.ID())
	}
	for _, s := range shapes {
		want, err := ReferenceOutput(op, s, dt, seed)
		if err != nil {
			t.Fatalf("reference at %s: %v", s, err)
		}
		cfgs := []kernel.Config{v.DefaultConfig(s, 1)}
		for i, vals := range v.Space(s) {
			if maxConfigs > 0 && i >= maxConfigs {
				break
			}
			cfgs = append(cfgs, kernel.Config{Threads: 1, Params: vals})
		}
		for _, cfg := range cfgs {
			if _, err := kernel.Verify(v, s, dt, seed, cfg, want); err != nil {
				t.Error(err)
			}
		}
	}
}

// Sizes straddle vector widths and tiles: use them for lengths and rows.
var Sizes = []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 127, 128, 129, 255, 257, 513}

// ShortSizes is a subset for -short runs and slow references.
var ShortSizes = []int{1, 3, 8, 17, 33, 64, 65, 129}

// Rand returns a deterministic generator for a seed.
func Rand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// FillNormal fills x with N(mean, std²) draws.
func FillNormal(r *rand.Rand, x []float32, mean, std float64) {
	for i := range x {
		x[i] = float32(mean + std*r.NormFloat64())
	}
}

// Guarded is a slice placed inside a larger allocation at an unaligned
// offset, with NaN guard cells on both sides (gonum guardVector style):
// CheckGuards finds any write outside the slice.
type Guarded struct {
	full []float32
	off  int
	n    int
}

const guardLen = 17

// NewGuarded allocates n elements at offset align (in elements, 0..3 makes
// the data 4-, 8- or 12-byte misaligned against a 16-byte boundary).
func NewGuarded(n, align int) *Guarded {
	g := &Guarded{full: make([]float32, n+2*guardLen+align), off: guardLen + align, n: n}
	for i := range g.full {
		g.full[i] = float32(math.NaN())
	}
	for i := range g.Data() {
		g.Data()[i] = 0
	}
	return g
}

// Data is the usable slice (capacity clipped so appends cannot reach the guards).
func (g *Guarded) Data() []float32 { return g.full[g.off : g.off+g.n : g.off+g.n] }

// CheckGuards fails t if a guard cell was written.
func (g *Guarded) CheckGuards(t testing.TB) {
	t.Helper()
	for i, x := range g.full {
		if i >= g.off && i < g.off+g.n {
			continue
		}
		if !math.IsNaN(float64(x)) {
			t.Errorf("guard cell %d (data at %d..%d) overwritten with %v", i, g.off, g.off+g.n, x)
			return
		}
	}
}

// Close compares got with want at a tolerance and fails t on NaN or excess.
func Close(t testing.TB, label string, got, want []float32, tol kernel.Tolerance) kernel.Diff {
	t.Helper()
	d, err := kernel.Compare(got, want, tol)
	if err != nil {
		t.Errorf("%s: %v", label, err)
	}
	return d
}

// DotCompare measures got against want, the reference's values of dot
// products y_i = Σ_k a_ik·b_ik, under the error model of a K-long dot
// product (scale from DotScales, floor from DotFloor or nil), and returns
// an error, as kernel.Compare does, on a NaN or an infinity in got, a
// length mismatch, or a Diff outside tol:
//
//	RelRMS = sqrt(Σ_i e_i² / Σ_i ρ_i²),  MaxRel = max_i (|e_i| − f_i)⁺ / ρ_i,  e_i = got_i − want_i.
//
// ρ_i is the size of y_i's error, not of y_i: an output whose terms nearly
// cancel (|y_i| ≪ ρ_i) carries the same absolute error as any other, and
// kernel.Compare's ‖e‖/‖y‖ over a few such outputs is arbitrarily large.
// On the kernels' random problems (a i.i.d. of zero mean, independent of
// b) E[ρ_i²] = E[y_i²], so over many outputs RelRMS is kernel.Compare's
// figure and the class tolerances keep their meaning. MaxRel is per
// output, stricter than kernel.Compare's max|e|/max|y|; f_i is the f32
// rounding of intermediates larger than the terms a·b (DotFloor), which
// only matters where ρ_i is near 0. An output with ρ_i = 0 must be within
// f_i of want; when every ρ_i is 0, RelRMS is 0 if each is, else +Inf.
func DotCompare(got, want []float32, scale, floor []float64, tol kernel.Tolerance) (kernel.Diff, error) {
	var d kernel.Diff
	if len(got) != len(want) || len(scale) != len(want) || (floor != nil && len(floor) != len(want)) {
		return d, fmt.Errorf("length %d, want %d (%d scales, %d floors)", len(got), len(want), len(scale), len(floor))
	}
	var num, den, beyond float64 // beyond: Σ ((|e_i|−f_i)⁺)²
	at := 0                      // the largest (|e_i|−f_i)⁺/ρ_i
	for i := range got {
		g, w, s := float64(got[i]), float64(want[i]), scale[i]
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return d, fmt.Errorf("non-finite output %v at %d (want %v)", g, i, w)
		}
		e := math.Abs(g - w)
		num += e * e
		den += s * s
		over := e
		if floor != nil {
			over = max(0, e-floor[i])
		}
		beyond += over * over
		r := math.Inf(1)
		switch {
		case s > 0:
			r = over / s
		case over == 0:
			r = 0
		}
		if r > d.MaxRel || math.IsNaN(r) {
			d.MaxRel, at = r, i
		}
		if e > d.MaxAbs || math.IsNaN(e) {
			d.MaxAbs, d.At = e, i
		}
	}
	switch {
	case den > 0:
		d.RelRMS = math.Sqrt(num / den)
	case beyond > 0: // every ρ zero: only errors beyond the floors count
		d.RelRMS = math.Inf(1)
	}
	if !(d.RelRMS <= tol.RelRMS && d.MaxRel <= tol.MaxRel) {
		return d, fmt.Errorf("dot-product error model: rel RMS %.3g (tol %.3g), max rel %.3g (tol %.3g) at %d: got %v want %v, ρ %.3g",
			d.RelRMS, tol.RelRMS, d.MaxRel, tol.MaxRel, at, got[at], want[at], scale[at])
	}
	return d, nil
}

// DotFloor returns, for each output y[r·n+c] of an a [m,k] by bᵀ [k,n]
// product, a bound on the f32 rounding of a kernel that sums
// intermediates of size a_rj·t_cj rather than a_rj·b_cj:
//
//	f_rc = 4·2⁻²⁴·√k·sqrt(Σ_j a_rj²·t_cj²)
//
// A quantized weight is often used as its stored integer and a zero point
// (Q8: d·(u−128), Q4: d·(u−8), or d·u + min), so the kernel rounds sums
// of a·d·u and of a·d·128 even where b = 0; t is the size of those
// intermediates (the family knows its formats). The rounding error of a
// k-term f32 sum of terms of RMS τ has a standard deviation of about
// 2⁻²⁴·k·τ/2.45, so f is about ten of them. On the random problems f_rc/ρ_rc
// is ~1e-7·√k·(t/|b|): below the f32 tolerances except where ρ_rc ≈ 0 (a
// row of zero weights gives y = 0 in float64 and ~1e-7 in f32).
func DotFloor(a []float32, t []float64, m, n, k int) []float64 {
	out := make([]float64, m*n)
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			var s float64
			for j, v := range t[c*k : (c+1)*k] {
				x := float64(a[r*k+j]) * v
				s += x * x
			}
			out[r*n+c] = 4 * 0x1p-24 * math.Sqrt(float64(k)) * math.Sqrt(s)
		}
	}
	return out
}

// DotScales returns ρ for each output y[r·n+c] = Σ_k a[r·k+j]·b[c·k+j] of
// an a [m,k] by bᵀ [k,n] product whose activations a are rounded, by some
// accuracy classes, per group of group values along k:
//
//	ρ_rc² = Σ_j b_cj² · g_rj²,  g_rj² = the mean of a_r² over j's group.
//
// Every way a kernel's y differs from the float64 reference is one error
// per term, bounded by |b_cj| times a multiple of its group's activation
// size: f32 rounding of products and sums and BF16 rounding of a_rj are
// relative to |a_rj| ≤ √group·g_rj; int8 rounding of a_rj to its group's
// grid is at most half a step, max|a_group|/254 ≤ √group/254·g_rj, even
// for an a_rj far below the group's largest. The errors are independent
// with zero mean, so their sum's standard deviation is a class constant
// times ρ. (With g_rj = |a_rj|, σ² = Σ a²·b², the int8 error of a small
// a_rj in a group with a large one is unbounded relative to it.)
func DotScales(a, b []float32, m, n, k, group int) []float64 {
	g2 := make([]float64, m*k) // g_rj²
	for r := 0; r < m; r++ {
		for lo := 0; lo < k; lo += group {
			hi := min(lo+group, k)
			var s float64
			for _, v := range a[r*k+lo : r*k+hi] {
				s += float64(v) * float64(v)
			}
			for j := lo; j < hi; j++ {
				g2[r*k+j] = s / float64(hi-lo)
			}
		}
	}
	out := make([]float64, m*n)
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			var s float64
			for j, v := range b[c*k : (c+1)*k] {
				s += float64(v) * float64(v) * g2[r*k+j]
			}
			out[r*n+c] = math.Sqrt(s)
		}
	}
	return out
}

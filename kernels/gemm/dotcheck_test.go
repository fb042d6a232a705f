package gemm

// The fuzz check of a Y = X·Wᵀ output: the dot-product error model of
// kerneltest.DotCompare against the float64 reference, and, for the
// classes that round activations, the exact rounding against a reference
// on the rounded activations.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// dotScales are kerneltest.DotScales for p's outputs (w dequantized; the
// activation groups of the int8act class).
func dotScales(p *problem) []float64 {
	return kerneltest.DotScales(p.x, p.w.Dequantize(), p.m, p.n, p.k, quant.GroupK)
}

// dotFloors are kerneltest.DotFloor for p's outputs, with the size t of
// what a kernel may multiply an activation by for each weight w: w itself
// (F32, BF16), or its stored integer and zero point, |d·u| + |d·z| ≤
// |w| + 2|d·z| (Q8: z = 128; Q4: z = 8; Q4 with a min m: |m| ≤ max|w| +
// 15d over the group, since m = w − d·u for each w of it; Q2: the min
// −d·t, |t| ≤ 3.5; the K formats: the group's min m = dm·mc itself,
// |s·u| ≤ |w| + |m|).
func dotFloors(p *problem) []float64 { return dotFloorsOf(p, p.w, p.w.Dequantize()) }

// dotFloorsOf is dotFloors for the weights wm of p (gateup's gate or up),
// dequantized as w.
func dotFloorsOf(p *problem, wm *quant.Matrix, w []float32) []float64 {
	t := make([]float64, len(w))
	for c := 0; c < p.n; c++ {
		for lo := 0; lo < p.k; lo += quant.GroupK {
			hi := min(lo+quant.GroupK, p.k)
			row := w[c*p.k+lo : c*p.k+hi]
			var zero, d float64 // |d·z| or the bound on |m|; the group's scale
			if p.dt == kernel.Q8 || p.dt == kernel.Q4 || p.dt == kernel.Q3 || p.dt == kernel.Q6 || p.dt == kernel.Q5 || p.dt == kernel.Q2 {
				d = math.Abs(float64(wm.Scale(c, lo/quant.GroupK)))
			}
			switch {
			case quant.IsK(p.dt):
				_, mn := quant.KScaleMin(p.dt, wm.Panel(c/quant.PanelRows), c%quant.PanelRows, lo/quant.GroupK)
				zero = math.Abs(float64(mn))
			case p.dt == kernel.Q3:
				zero = quant.Q3Zero * d
			case p.dt == kernel.Q6:
				zero = quant.Q6Zero * d
			case p.dt == kernel.Q5:
				zero = quant.Q5Zero * d
			case p.dt == kernel.Q2:
				zero = 3.5 * d
			case p.dt == kernel.Q8:
				zero = 128 * d
			case p.dt == kernel.Q4 && !wm.HasMin:
				zero = 8 * d
			case p.dt == kernel.Q4:
				var wmax float64
				for _, v := range row {
					wmax = max(wmax, math.Abs(float64(v)))
				}
				zero = wmax + 15*d
			}
			for j, v := range row {
				t[c*p.k+lo+j] = math.Abs(float64(v)) + 2*zero
			}
		}
	}
	return kerneltest.DotFloor(p.x, t, p.m, p.n, p.k)
}

// roundedActs returns p's activations [m, k] as class cls rounds them
// before the dot products: int8 with one scale per group of 32
// (quantizeRowGeneric, the Go definition the vector quantizers must
// match), BF16 to nearest even; nil for f32.
func roundedActs(p *problem, cls kernel.Class) []float64 {
	out := make([]float64, p.m*p.k)
	kp := quant.PaddedK(kernel.Q8, p.k)
	for r := 0; r < p.m; r++ {
		x := p.x[r*p.k : (r+1)*p.k]
		switch cls {
		case kernel.ClassInt8Act:
			q, s, sums := make([]int8, kp), make([]float32, kp/quant.GroupK), make([]int32, kp/quant.GroupK)
			quantizeRowGeneric(q, s, sums, x)
			for j := range x {
				out[r*p.k+j] = float64(q[j]) * float64(s[j/quant.GroupK])
			}
		case kernel.ClassBF16Act:
			for j, v := range x {
				out[r*p.k+j] = float64(half.BF16ToF32(half.F32ToBF16(v)))
			}
		default:
			return nil
		}
	}
	return out
}

// dotRef is the float64 Y = X·Wᵀ over acts [m, k] and p's dequantized
// weights, rounded to f32.
func dotRef(p *problem, acts []float64) []float32 { return dotRefOn(p, acts, p.w.Dequantize()) }

// dotRefOn is dotRef on the dequantized weights w.
func dotRefOn(p *problem, acts []float64, w []float32) []float32 {
	y := make([]float32, p.m*p.n)
	for i, v := range dotProducts(p, acts, w) {
		y[i] = float32(v)
	}
	return y
}

// dotCheck checks got, the output of a variant of class cls on p, against
// want, the op's reference output on p:
//   - under the dot-product error model (kerneltest.DotCompare) within
//     the class tolerance, which is what the class costs;
//   - for int8act and bf16act, also within the f32 tolerance against the
//     reference on the activations rounded as the class defines it: the
//     kernel adds nothing to that rounding but f32 arithmetic. (The class
//     tolerance alone admits damage up to its size: 1% noise on an int8act
//     output, whose rounding costs ~0.5%, is inside its 2%.)
//
// For gateup (y = silu(g)·u) the same, on gateupBounds.
func dotCheck(p *problem, cls kernel.Class, got, want []float32) error {
	return boundsOf(p, cls).check(got, want)
}

// errModel is the part of dotCheck's bounds on p that no class changes:
// each output's scale and floor under the dot-product error model, and the
// dequantized weights (the gate's and the up's for gateup) the rounded
// references are computed on. A shared case computes it once for every
// class (boundsOf). For gateup's y = silu(g)·u, g and u two dot products
// over the same activations, each output's scale and floor are first-order
// propagations of the two products' (ρ_y = |silu′(g)·u|·ρ_g + |silu(g)|·ρ_u,
// the same for the floors, g and u the float64 products); then, as for the
// others, the class tolerance against the float64 reference and the f32
// tolerance against silu(g)·u on the activations rounded as the class
// defines it. (kernel.Verify's plain relative RMS over the outputs, which
// TestVariants used for gateup, is no stable statistic on a few outputs.)
type errModel struct {
	sc, fl []float64
	w, wu  []float32
	of     string
}

func newErrModel(p *problem) *errModel {
	e := &errModel{w: p.w.Dequantize(), of: "the reference"}
	if p.op != OpGateUp {
		e.sc = kerneltest.DotScales(p.x, e.w, p.m, p.n, p.k, quant.GroupK)
		e.fl = dotFloorsOf(p, p.w, e.w)
		return e
	}
	e.wu, e.of = p.wu.Dequantize(), "silu(g)·u"
	sg := kerneltest.DotScales(p.x, e.w, p.m, p.n, p.k, quant.GroupK)
	su := kerneltest.DotScales(p.x, e.wu, p.m, p.n, p.k, quant.GroupK)
	fg, fu := dotFloorsOf(p, p.w, e.w), dotFloorsOf(p, p.wu, e.wu)
	acts := make([]float64, len(p.x))
	for i, v := range p.x {
		acts[i] = float64(v)
	}
	g, u := dotProducts(p, acts, e.w), dotProducts(p, acts, e.wu)
	e.sc, e.fl = make([]float64, len(g)), make([]float64, len(g))
	for i := range g {
		s := 1 / (1 + math.Exp(-g[i]))
		dg, du := math.Abs(s*(1+g[i]*(1-s))*u[i]), math.Abs(g[i]*s)
		e.sc[i] = dg*sg[i] + du*su[i]
		e.fl[i] = dg*fg[i] + du*fu[i]
	}
	return e
}

// bounds are e's for class cls on p: the class tolerance, and for the
// classes that round activations the ideal output on the rounded
// activations (y, or silu(g)·u for gateup).
func (e *errModel) bounds(p *problem, cls kernel.Class) *bounds {
	b := &bounds{sc: e.sc, fl: e.fl, tol: kernel.LookupOp(p.op).Tol(cls, p.shape), of: e.of, cls: cls, shape: p.shape, op: p.op}
	r := roundedActs(p, cls)
	switch {
	case r == nil:
	case p.op != OpGateUp:
		b.rounded = dotRefOn(p, r, e.w)
	default:
		g, u := dotProducts(p, r, e.w), dotProducts(p, r, e.wu)
		b.rounded = make([]float32, len(g))
		for i := range g {
			b.rounded[i] = float32(g[i] / (1 + math.Exp(-g[i])) * u[i])
		}
	}
	return b
}

// bounds are what dotCheck holds an output to, computed
// from the problem and the class alone: each output's scale and floor
// (kerneltest.DotCompare), the class tolerance, and for the classes that
// round activations the ideal output on the rounded activations (held to
// the f32 tolerance).
type bounds struct {
	sc, fl  []float64
	tol     kernel.Tolerance
	rounded []float32
	cls     kernel.Class
	shape   kernel.Shape
	op      string
	of      string // what rounded is, for the message
}

func (b *bounds) check(got, want []float32) error {
	if _, err := kerneltest.DotCompare(got, want, b.sc, b.fl, b.tol); err != nil {
		return fmt.Errorf("vs the float64 reference: %v", err)
	}
	if b.rounded != nil {
		if _, err := kerneltest.DotCompare(got, b.rounded, b.sc, b.fl, kernel.LookupOp(b.op).Tol(kernel.ClassF32, b.shape)); err != nil {
			return fmt.Errorf("vs %s on %s-rounded activations: %v", b.of, b.cls, err)
		}
	}
	return nil
}

// dotProducts is the float64 acts [m, k] · wᵀ (w [n, k] row-major).
func dotProducts(p *problem, acts []float64, w []float32) []float64 {
	y := make([]float64, p.m*p.n)
	for r := 0; r < p.m; r++ {
		for c := 0; c < p.n; c++ {
			var t float64
			for j, wv := range w[c*p.k : (c+1)*p.k] {
				t += acts[r*p.k+j] * float64(wv)
			}
			y[r*p.n+c] = t
		}
	}
	return y
}

// fuzzOne runs every candidate of op and dtype at s (threads 2) through
// dotCheck.
func fuzzOne(t *testing.T, op string, dt kernel.DType, s kernel.Shape, seed uint64) {
	t.Helper()
	o := kernel.LookupOp(op)
	want, err := kernel.ReferenceOutput(o, s, dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range kernel.Candidates(op, dt, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
		p, err := o.NewProblem(s, dt, seed)
		if err != nil {
			t.Fatal(err)
		}
		cfg := v.DefaultConfig(s, 2)
		got, err := kernel.RunOutput(v, p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := dotCheck(p.(*problem), v.Class, got, want); err != nil {
			t.Errorf("%s at %s dtype=%s seed=%d %v: %v", v.ID(), s, dt, seed, cfg.Params, err)
		}
	}
}

// TestFuzzCrashers: the inputs that failed FuzzGEMM (testdata/fuzz/FuzzGEMM
// holds them as seeds). The first three failed kernel.Verify's plain
// relative RMS: their few outputs nearly cancel, ‖y‖ is far below ‖ρ‖
// (what K terms of their size give), and the plain figure divided the same
// absolute error by it. The fourth failed a first error model that scaled
// each term's error by |a·b| (σ² = Σ a²·b²): at k = 2 an activation far
// below its group's largest is rounded by int8 to half a step of that
// largest, an error unbounded relative to its own size. The fifth has a
// weight row of three zeros: ρ = 0 and y = 0 in float64, but the AVX
// kernels sum a·d·u and a·d·8 (Q4's zero point) in f32 and give 7.4e-8,
// which DotFloor admits. Under DotScales' ρ and DotFloor every variant
// passes, and each equals the reference on its class's rounded activations
// to f32 precision: no kernel was wrong.
func TestFuzzCrashers(t *testing.T) {
	for _, c := range []struct {
		op      string
		m, n, k int
		dt      kernel.DType
		seed    uint64
	}{
		{OpGEMV, 1, 4, 105, kernel.BF16, 167}, // avx512_bf16: rel RMS 0.0102 (tol 0.01)
		{OpGEMV, 1, 2, 156, kernel.Q4, 19},    // int8 variants: rel RMS 0.0208 (tol 0.02)
		{OpGEMV, 3, 1, 114, kernel.Q8, 90},    // int8 variants: rel RMS 0.0355 (tol 0.02)
		{OpGEMV, 17, 25, 2, kernel.Q4, 0},     // int8 variants under σ: max rel 0.27 (tol 0.1)
		{OpGEMV, 2, 223, 3, kernel.Q4, 22},    // avx512, avx2 (f32) without a floor: 7.4e-8 where ρ = 0
	} {
		s := kernel.MakeShape(shapeKeys, c.m, c.n, c.k)
		o := kernel.LookupOp(c.op)
		want, err := kernel.ReferenceOutput(o, s, c.dt, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range kernel.Candidates(c.op, c.dt, []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act}) {
			p, err := o.NewProblem(s, c.dt, c.seed)
			if err != nil {
				t.Fatal(err)
			}
			got, err := kernel.RunOutput(v, p, v.DefaultConfig(s, 2))
			if err != nil {
				t.Fatal(err)
			}
			sc := dotScales(p.(*problem))
			var yy, ss float64
			for i := range want {
				yy += float64(want[i]) * float64(want[i])
				ss += sc[i] * sc[i]
			}
			old, _ := kernel.Compare(got, want, kernel.Tolerance{RelRMS: math.Inf(1), MaxRel: math.Inf(1)})
			d, _ := kerneltest.DotCompare(got, want, sc, dotFloors(p.(*problem)), kernel.Tolerance{RelRMS: math.Inf(1), MaxRel: math.Inf(1)})
			t.Logf("%s %s %s seed %d: ‖y‖/‖ρ‖ = %.3f; plain rel RMS %.3g, dot-model rel RMS %.3g, max rel %.3g (class %s tol %.3g)",
				v.ID(), s, c.dt, c.seed, math.Sqrt(yy/ss), old.RelRMS, d.RelRMS, d.MaxRel, v.Class, o.Tol(v.Class, s).RelRMS)
			if err := dotCheck(p.(*problem), v.Class, got, want); err != nil {
				t.Errorf("%s: %v", v.ID(), err)
			}
		}
	}
}

// TestDotCheckCatchesPlants: the ideal output of a kernel of each class
// (the reference on the class's rounded activations) passes dotCheck, and
// each planted error in it fails, on the crashers' shapes (few, nearly
// cancelling outputs) and on wider ones, for every dtype and class.
func TestDotCheckCatchesPlants(t *testing.T) {
	shapes := [][3]int{{1, 4, 105}, {1, 2, 156}, {3, 1, 114}, {1, 1, 33}, {5, 37, 100}, {16, 64, 256}}
	for _, sh := range shapes {
		s := kernel.MakeShape(shapeKeys, sh[0], sh[1], sh[2])
		for _, dt := range weightDTypes {
			classes := []kernel.Class{kernel.ClassF32}
			switch dt {
			case kernel.Q8, kernel.Q4:
				classes = append(classes, kernel.ClassInt8Act)
			case kernel.BF16:
				classes = append(classes, kernel.ClassBF16Act)
			}
			for seed := uint64(1); seed <= 3; seed++ {
				pr, err := kernel.LookupOp(OpGEMV).NewProblem(s, dt, seed)
				if err != nil {
					t.Fatal(err)
				}
				p := pr.(*problem)
				want := dotRef(p, truncatedActs(p, p.k))
				for _, cls := range classes {
					good := want
					if acts := roundedActs(p, cls); acts != nil {
						good = dotRef(p, acts)
					}
					if err := dotCheck(p, cls, good, want); err != nil {
						t.Errorf("%s %s %s seed %d: the ideal output fails: %v", s, dt, cls, seed, err)
					}
					for _, pl := range plants {
						if err := dotCheck(p, cls, pl.fn(p, good), want); err == nil {
							t.Errorf("%s %s %s seed %d: %s passes", s, dt, cls, seed, pl.name)
						} else if seed == 1 && testing.Verbose() {
							t.Logf("%s %s %s: %s: %v", s, dt, cls, pl.name, err)
						}
					}
				}
			}
		}
	}
}

// plant is a deliberately wrong output for p, from the right one.
type plant struct {
	name string
	fn   func(p *problem, good []float32) []float32
}

var plants = []plant{
	{"NaN in one output", func(p *problem, good []float32) []float32 {
		out := append([]float32(nil), good...)
		out[len(out)/2] = float32(math.NaN())
		return out
	}},
	{"+1% relative Gaussian noise", func(p *problem, good []float32) []float32 {
		r := rand.New(rand.NewPCG(uint64(len(good)), 5))
		out := append([]float32(nil), good...)
		for i := range out {
			out[i] *= float32(1 + 0.01*r.NormFloat64())
		}
		return out
	}},
	// wrong but fast: the last k term skipped (a tail loop that stops one
	// short), or the last group of 32 skipped
	{"last k term dropped", func(p *problem, good []float32) []float32 {
		return truncatedRef(p, p.k-1)
	}},
	{"last group of 32 (or the partial one) dropped", func(p *problem, good []float32) []float32 {
		return truncatedRef(p, (p.k-1)/quant.GroupK*quant.GroupK)
	}},
	// wrong but fast: int8 activations with one scale per row (as ggml's
	// Q8_0 per block of the whole row), a coarser grid than the class's
	{"int8 activations with one scale per row", func(p *problem, good []float32) []float32 {
		acts := make([]float64, p.m*p.k)
		for r := 0; r < p.m; r++ {
			x := p.x[r*p.k : (r+1)*p.k]
			var amax float64
			for _, v := range x {
				amax = max(amax, math.Abs(float64(v)))
			}
			for j, v := range x {
				if amax > 0 {
					acts[r*p.k+j] = math.RoundToEven(float64(v)*127/amax) * amax / 127
				}
			}
		}
		return dotRef(p, acts)
	}},
}

// truncatedRef is the reference over the first kk terms only.
func truncatedRef(p *problem, kk int) []float32 { return dotRef(p, truncatedActs(p, kk)) }

// truncatedActs are p's activations with those past kk zeroed.
func truncatedActs(p *problem, kk int) []float64 {
	acts := make([]float64, p.m*p.k)
	for r := 0; r < p.m; r++ {
		for j := 0; j < kk; j++ {
			acts[r*p.k+j] = float64(p.x[r*p.k+j])
		}
	}
	return acts
}

// TestGateUpCheckCatchesPlants: dotCheck passes silu(g)·u computed on
// the class's rounded activations and fails a NaN, 1% noise, the last k
// term dropped from both products, and gate and up swapped, at small and
// larger shapes, f32 and int8act, for Q8, Q4 and Q4K weights.
func TestGateUpCheckCatchesPlants(t *testing.T) {
	for _, sh := range [][3]int{{1, 31, 257}, {1, 16, 64}, {3, 7, 100}, {4, 64, 512}} {
		s := kernel.MakeShape(shapeKeys, sh[0], sh[1], sh[2])
		for _, dt := range []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q4K} {
			for seed := uint64(1); seed <= 2; seed++ {
				pr, err := kernel.LookupOp(OpGateUp).NewProblem(s, dt, seed)
				if err != nil {
					t.Fatal(err)
				}
				p := pr.(*problem)
				wg, wu := p.w.Dequantize(), p.wu.Dequantize()
				gu := func(acts []float64, wg, wu []float32, k int) []float32 {
					cut := func(w []float32) []float32 { // the first k terms of each row
						out := make([]float32, len(w))
						for c := 0; c < p.n; c++ {
							copy(out[c*p.k:c*p.k+k], w[c*p.k:c*p.k+k])
						}
						return out
					}
					g, u := dotProducts(p, acts, cut(wg)), dotProducts(p, acts, cut(wu))
					y := make([]float32, len(g))
					for i := range g {
						y[i] = float32(g[i] / (1 + math.Exp(-g[i])) * u[i])
					}
					return y
				}
				exact := make([]float64, len(p.x))
				for i, v := range p.x {
					exact[i] = float64(v)
				}
				want := gu(exact, wg, wu, p.k)
				for _, cls := range []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act} {
					acts := exact
					if r := roundedActs(p, cls); r != nil {
						acts = r
					}
					good := gu(acts, wg, wu, p.k)
					if err := dotCheck(p, cls, good, want); err != nil {
						t.Errorf("%s %s %s seed %d: the ideal output fails: %v", s, dt, cls, seed, err)
					}
					noisy := append([]float32(nil), good...)
					r := rand.New(rand.NewPCG(seed, 7))
					for i := range noisy {
						noisy[i] *= float32(1 + 0.01*r.NormFloat64())
					}
					nan := append([]float32(nil), good...)
					nan[len(nan)/2] = float32(math.NaN())
					for _, pl := range []struct {
						name string
						out  []float32
					}{
						{"NaN in one output", nan},
						{"+1% relative Gaussian noise", noisy},
						{"last k term dropped", gu(acts, wg, wu, p.k-1)},
						{"gate and up swapped", gu(acts, wu, wg, p.k)},
					} {
						if err := dotCheck(p, cls, pl.out, want); err == nil {
							t.Errorf("%s %s %s seed %d: %s passes", s, dt, cls, seed, pl.name)
						}
					}
				}
			}
		}
	}
}

package norm

import (
	"fmt"
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m, "norm") }

func shapes(t *testing.T) []kernel.Shape {
	sizes := kerneltest.Sizes
	if testing.Short() {
		sizes = kerneltest.ShortSizes
	}
	var out []kernel.Shape
	for _, n := range append(sizes, 512, 2304) {
		for _, m := range []int{1, 3} {
			out = append(out, kernel.MakeShape(rmsKeys, m, n))
		}
	}
	return out
}

// TestRMSNormVariants checks every variant against the reference through
// the registry (the path the tuner's gate takes).
func TestRMSNormVariants(t *testing.T) {
	kerneltest.ForEachVariant(t, OpRMSNorm, func(t *testing.T, v *kernel.Variant) {
		kerneltest.CheckVariant(t, v, kernel.F32, shapes(t), 0, 1)
	})
}

// TestRMSNormRowGuards calls each variant's row kernel directly on
// guard-padded, misaligned buffers, in place and out of place.
func TestRMSNormRowGuards(t *testing.T) {
	kerneltest.ForEachVariant(t, OpRMSNorm, func(t *testing.T, v *kernel.Variant) {
		fn := v.Impl.(rowFn)
		r := kerneltest.Rand(7)
		for _, n := range kerneltest.Sizes {
			for align := 0; align < 4; align++ {
				x, w, dst := kerneltest.NewGuarded(n, align), kerneltest.NewGuarded(n, (align+1)%4), kerneltest.NewGuarded(n, (align+2)%4)
				kerneltest.FillNormal(r, x.Data(), 0, 3)
				kerneltest.FillNormal(r, w.Data(), 1, 0.2)
				want := make([]float32, n)
				rmsRowRef(want, x.Data(), w.Data(), 1e-5)
				fn(dst.Data(), x.Data(), w.Data(), 1e-5)
				kerneltest.Close(t, fmt.Sprintf("n=%d align=%d", n, align), dst.Data(), want, kernel.TolF32)
				fn(x.Data(), x.Data(), w.Data(), 1e-5) // in place
				kerneltest.Close(t, fmt.Sprintf("in place n=%d align=%d", n, align), x.Data(), want, kernel.TolF32)
				for _, g := range []*kerneltest.Guarded{x, w, dst} {
					g.CheckGuards(t)
				}
			}
		}
	})
}

// TestRMSNormZeroRow: a zero row gives zeros (eps keeps the scale finite),
// and huge values do not overflow the sum of squares in f64 scale.
func TestRMSNormEdges(t *testing.T) {
	kerneltest.ForEachVariant(t, OpRMSNorm, func(t *testing.T, v *kernel.Variant) {
		fn := v.Impl.(rowFn)
		n := 37
		x, w, dst := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range w {
			w[i] = 1
		}
		fn(dst, x, w, 1e-5)
		for i, y := range dst {
			if y != 0 {
				t.Fatalf("zero row: dst[%d] = %v", i, y)
			}
		}
		for i := range x {
			x[i] = 1e18
		}
		fn(dst, x, w, 1e-5)
		for i, y := range dst {
			if math.Abs(float64(y)-1) > 1e-5 {
				t.Fatalf("large row: dst[%d] = %v, want 1", i, y)
			}
		}
	})
}

// TestChosen: RMSNorm runs the tuning profile's choice for its shape.
func TestChosen(t *testing.T) {
	if _, v := rmsChoose(kernel.Rules{Chooser: fixedChooser{"generic"}}, 512, 2304); v.Name != "generic" {
		t.Errorf("the profile chose generic, RMSNorm runs %s", v.ID())
	}
}

type fixedChooser struct{ name string }

func (f fixedChooser) Choose(op string, dt kernel.DType, s kernel.Shape, threads int, classes []kernel.Class) (kernel.Choice, bool) {
	v, err := kernel.Lookup(op + "/" + f.name)
	if err != nil {
		return kernel.Choice{}, false
	}
	return kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}, true
}

// TestDispatch: the default follows the effective features and Force.
func TestDispatch(t *testing.T) {
	best := kernel.Candidates(OpRMSNorm, kernel.F32, nil)[0]
	if _, v := rmsChoose(kernel.Rules{}, 1, 4); v != best {
		t.Errorf("dispatcher uses %s, want %s", v.ID(), best.ID())
	}
	restore := cpu.Disable(cpu.AVX512F, cpu.AVX2)
	if _, v := rmsChoose(kernel.Rules{}, 1, 4); v.Name != "generic" {
		t.Errorf("with avx512f and avx2 masked the dispatcher uses %s", v.ID())
	}
	restore()
	undo, err := kernel.Force(OpRMSNorm, "reference")
	if err != nil {
		t.Fatal(err)
	}
	if _, v := rmsChoose(kernel.Rules{}, 1, 4); !v.Reference {
		t.Errorf("forced reference, got %s", v.ID())
	}
	undo()
	x := []float32{3, 4, 0, 0, 1, 1}
	y := make([]float32, 6)
	RMSNorm(y, x, []float32{1, 2}, 1e-6)
	want := []float32{3 / 3.5355341, 8 / 3.5355341, 0, 0, 1 / 1.0000005, 2 / 1.0000005}
	kerneltest.Close(t, "RMSNorm", y, want, kernel.TolF32)
}

func FuzzRMSNorm(f *testing.F) {
	f.Add(uint16(1), uint64(1), float32(1))
	f.Add(uint16(17), uint64(2), float32(1e-3))
	f.Add(uint16(2304), uint64(3), float32(1e6))
	f.Fuzz(func(t *testing.T, n uint16, seed uint64, scale float32) {
		if n == 0 || math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) || math.Abs(float64(scale)) > 1e15 {
			return
		}
		r := kerneltest.Rand(seed)
		x, w := make([]float32, n), make([]float32, n)
		kerneltest.FillNormal(r, x, 0, float64(scale))
		kerneltest.FillNormal(r, w, 1, 0.5)
		want := make([]float32, n)
		rmsRowRef(want, x, w, 1e-5)
		for _, v := range kernel.Variants(OpRMSNorm) {
			if !v.Available() {
				continue
			}
			got := make([]float32, n)
			v.Impl.(rowFn)(got, x, w, 1e-5)
			kerneltest.Close(t, v.ID(), got, want, kernel.TolF32)
		}
	})
}

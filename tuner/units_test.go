package tuner

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/kernels/gemm"
)

// unitsOp is a synthetic op for the unit plan: per dtype, which classes
// have pure-Go (generic*) or SIMD variants.
//
//	F32   generic (f32), simd_int8 (int8act): the f32 class is skipped
//	      when int8act is allowed too
//	BF16  generic (f32), generic_int8 (int8act): pure Go only; the
//	      default (generic, registered first) is f32
//	Q8    simd_f32 (f32), simd_int8 (int8act), x_bf16 (bf16act): the
//	      default is simd_f32 (variants of equal priority sort by name)
//	Q4    simd_int8 (int8act) only: the f32 class has nothing to tune
const unitsOp = "tunetest.units"

func init() {
	dts := []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4}
	kernel.RegisterOp(&kernel.Op{Name: unitsOp, ShapeKeys: []string{"n"}, DTypes: dts,
		NewProblem: func(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
			return nil, fmt.Errorf("%s: not run", unitsOp)
		},
		Cost: func(kernel.Shape, kernel.DType) kernel.Cost { return kernel.Cost{} },
	})
	mk := func(name string, ref bool, class kernel.Class, dts ...kernel.DType) {
		kernel.Register(&kernel.Variant{Op: unitsOp, Name: name, Reference: ref, DTypes: dts, Class: class,
			New: func(kernel.Problem, kernel.Config) (kernel.Instance, error) { return nil, fmt.Errorf("not run") }})
	}
	mk("reference", true, kernel.ClassF32, dts...)
	mk("generic", false, kernel.ClassF32, kernel.F32, kernel.BF16)
	mk("generic_int8", false, kernel.ClassInt8Act, kernel.BF16)
	mk("simd_f32", false, kernel.ClassF32, kernel.Q8)
	mk("simd_int8", false, kernel.ClassInt8Act, kernel.F32, kernel.Q8, kernel.Q4)
	mk("x_bf16", false, kernel.ClassBF16Act, kernel.Q8)
}

// TestPlanUnits: the tuner measures, of the engine's default classes, the
// class of the engine's default variant, and every other allowed class
// that has candidates, but not a class of pure-Go variants beside one with
// SIMD variants. A rule that never skips measures F32's f32 class; one
// that skips every pure-Go-only class loses BF16 and F32 with f32 alone
// allowed; one that ignores empty classes measures Q4's f32 class; one
// that tunes every default class measures Q8's int8act class; one that
// tunes the default's class alone drops Q8's bf16act class.
func TestPlanUnits(t *testing.T) {
	f32, i8, b16 := kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act
	both := []kernel.Class{f32, i8}
	for _, tc := range []struct {
		dt      kernel.DType
		classes []kernel.Class
		want    []kernel.Class
	}{
		{kernel.F32, both, []kernel.Class{i8}},
		{kernel.F32, []kernel.Class{f32}, []kernel.Class{f32}},
		{kernel.F32, []kernel.Class{i8}, []kernel.Class{i8}},
		{kernel.BF16, both, []kernel.Class{f32}},
		{kernel.BF16, []kernel.Class{i8}, []kernel.Class{i8}},
		{kernel.Q8, both, []kernel.Class{f32}},
		{kernel.Q8, []kernel.Class{i8, b16}, []kernel.Class{i8, b16}},
		{kernel.Q8, []kernel.Class{f32, i8, b16}, []kernel.Class{f32, b16}},
		{kernel.Q4, both, []kernel.Class{i8}},
		{kernel.Q4, []kernel.Class{f32}, nil},
	} {
		w := Workload{Op: unitsOp, DType: tc.dt, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}
		units := planUnits([]Workload{w}, tc.classes, []int{1, 3})
		var got []kernel.Class
		for i, u := range units {
			if want := []int{1, 3}[i%2]; u.threads != want || u.w.Op != w.Op || u.w.DType != w.DType {
				t.Errorf("%s %v: unit %d is %+v, want threads %d of the workload", tc.dt, tc.classes, i, u, want)
			}
			if i%2 == 0 {
				got = append(got, u.class)
			}
		}
		if !slices.Equal(got, tc.want) || len(units) != 2*len(tc.want) {
			t.Errorf("%s with classes %v: %d units in classes %v, want %v at 2 thread counts each", tc.dt, tc.classes, len(units), got, tc.want)
		}
	}
}

// TestNewProblemsCopies: a cold workload's copies past the first two are
// copies (kernel.Copier) of the two drawn from seeds, alternately: each
// computes what a problem drawn from its seed's parity computes (Q4's
// min follows the seed's parity), on weights of its own. A copy that
// shared its weights, or copies all of one seed, fails it.
func TestNewProblemsCopies(t *testing.T) {
	w := Workload{Op: gemm.OpGEMV, DType: kernel.Q4, Shape: kernel.MakeShape([]string{"m", "n", "k"}, 2, 64, 256), ShapeClass: "decode-2", Cold: true}
	op := kernel.LookupOp(w.Op)
	per := op.Cost(w.Shape, w.DType).Bytes
	ps, err := newProblems(w, int64(5*per), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.release()
	if len(ps.list) != 5 {
		t.Fatalf("%d copies, want 5", len(ps.list))
	}
	var want [2][]float32
	for s := range want {
		p, err := op.NewProblem(w.Shape, w.DType, uint64(1000+s))
		if err != nil {
			t.Fatal(err)
		}
		if want[s], err = kernel.ReferenceOn(op, p); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(want[0], want[1]) {
		t.Fatal("the two seeds give one output: the test cannot tell them apart")
	}
	for i, p := range ps.list {
		got, err := kernel.ReferenceOn(op, p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[i%2]) {
			t.Errorf("copy %d differs from seed %d's problem", i, 1000+i%2)
		}
	}
	// the next token count reshapes them (kernel.Reshaper): every copy at
	// the new shape
	w2 := w
	w2.Shape = w.Shape.With("m", 4)
	ps2, err := newProblems(w2, int64(5*per), ps)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(5 * per / op.Cost(w2.Shape, w2.DType).Bytes); len(ps2.list) != want {
		t.Fatalf("%d copies after the reshape, want %d", len(ps2.list), want)
	}
	for i, p := range ps2.list {
		if p.Shape().String() != w2.Shape.String() || len(p.Output()) != 4*64 {
			t.Errorf("copy %d at %s with %d outputs, want %s", i, p.Shape(), len(p.Output()), w2.Shape)
		}
	}
}

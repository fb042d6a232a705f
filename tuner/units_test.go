package tuner

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// unitsOp is a synthetic op for the unit plan: per dtype, which classes
// have pure-Go (generic*) or SIMD variants.
//
//	F32   generic (f32), simd_int8 (int8act): the f32 class is skipped
//	      when int8act is allowed too
//	BF16  generic (f32), generic_int8 (int8act): pure Go only, both kept
//	Q8    simd_f32 (f32), simd_int8 (int8act): both kept
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
}

// TestPlanUnits: the tuner measures each class that has candidates, but
// not a class of pure-Go variants beside one with SIMD variants. A rule
// that never skips measures F32's f32 class; one that skips every
// pure-Go-only class loses BF16 and F32 with f32 alone allowed; one that
// ignores empty classes measures Q4's f32 class.
func TestPlanUnits(t *testing.T) {
	f32, i8 := kernel.ClassF32, kernel.ClassInt8Act
	both := []kernel.Class{f32, i8}
	for _, tc := range []struct {
		dt      kernel.DType
		classes []kernel.Class
		want    []kernel.Class
	}{
		{kernel.F32, both, []kernel.Class{i8}},
		{kernel.F32, []kernel.Class{f32}, []kernel.Class{f32}},
		{kernel.F32, []kernel.Class{i8}, []kernel.Class{i8}},
		{kernel.BF16, both, both},
		{kernel.Q8, both, both},
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

package gemm

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/ktune/ktune/internal/kernel"
)

// TestProblemCopy: a copy holds the same weights in memory of its own (a
// cold workload's copies must not share cache lines) and an output of
// its own.
func TestProblemCopy(t *testing.T) {
	p, err := newProblem(OpGateUp)(kernel.MakeShape(shapeKeys, 3, 32, 256), kernel.Q4, 1001)
	if err != nil {
		t.Fatal(err)
	}
	gp := p.(*problem)
	c := gp.Copy().(*problem)
	same := func(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }
	if !slices.Equal(c.w.Data, gp.w.Data) || !slices.Equal(c.wu.Data, gp.wu.Data) || c.w.HasMin != gp.w.HasMin {
		t.Error("the copy's weights differ")
	}
	if same(c.w.Data, gp.w.Data) || same(c.wu.Data, gp.wu.Data) || unsafe.SliceData(c.y) == unsafe.SliceData(gp.y) {
		t.Error("the copy shares memory with the original")
	}
}

// TestProblemReshape: a reshaped problem holds the same weights (shared)
// at another row count, with activations and an output of its own; another
// width or depth is refused.
func TestProblemReshape(t *testing.T) {
	p, err := newProblem(OpGateUp)(kernel.MakeShape(shapeKeys, 3, 32, 256), kernel.Q4, 1001)
	if err != nil {
		t.Fatal(err)
	}
	gp := p.(*problem)
	s := kernel.MakeShape(shapeKeys, 7, 32, 256)
	q, ok := gp.Reshape(s, 5)
	if !ok {
		t.Fatal("reshape to another m refused")
	}
	c := q.(*problem)
	if c.w != gp.w || c.wu != gp.wu || c.Shape().String() != s.String() || len(c.x) != 7*256 || len(c.y) != 7*32 || c.m != 7 {
		t.Errorf("reshaped: shape %s, %d x, %d y, weights shared %v", c.Shape(), len(c.x), len(c.y), c.w == gp.w)
	}
	for _, bad := range []kernel.Shape{kernel.MakeShape(shapeKeys, 3, 48, 256), kernel.MakeShape(shapeKeys, 3, 32, 512)} {
		if _, ok := gp.Reshape(bad, 5); ok {
			t.Errorf("reshape to %s accepted", bad)
		}
	}
}

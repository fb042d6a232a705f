package kernel

import (
	"maps"
	"sync/atomic"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// countingChooser answers like fixedChooser and counts the questions.
type countingChooser struct {
	fixedChooser
	n *atomic.Int64
}

func (c *countingChooser) Choose(op string, dt DType, s Shape, threads int, classes []Class) (Choice, bool) {
	c.n.Add(1)
	return c.fixedChooser.Choose(op, dt, s, threads, classes)
}

// TestChooseDims: ChooseDims answers what Choose answers at every shape,
// thread count and class list asked; it asks the chooser once per key and
// again after a forced variant (and its restore) or the
// effective CPU features change — a cache that kept an answer across any
// of them fails here; a repeated call allocates nothing; more dims or
// classes than its key holds go to Choose every time.
func TestChooseDims(t *testing.T) {
	op := LookupOp("test.scale")
	keys := op.ShapeKeys
	var r Rules // the chooser of the stage
	same := func(stage string, n, threads int, classes ...Class) {
		t.Helper()
		want := r.WithClasses(classes...).Choose(op.Name, F32, MakeShape(keys, n), threads)
		got := r.WithClasses(classes...).ChooseDims(op.Name, F32, keys, []int{n}, threads)
		if got.Variant != want.Variant || got.Config.Threads != want.Config.Threads || !maps.Equal(got.Config.Params, want.Config.Params) {
			t.Fatalf("%s, n=%d threads=%d classes=%v: ChooseDims %s %+v, Choose %s %+v", stage, n, threads, classes,
				got.Variant.ID(), got.Config, want.Variant.ID(), want.Config)
		}
	}
	for _, n := range []int{1, 4, 4, 9} {
		for _, th := range []int{0, 1, 3} {
			same("default", n, th)
			same("default, f32 class", n, th, ClassF32)
			same("default, no usable class", n, th, ClassInt8Act)
		}
	}
	good, err := Lookup("test.scale/good")
	if err != nil {
		t.Fatal(err)
	}
	if d := r.ChooseDims(op.Name, F32, keys, []int{4}, 1); d.Variant == good {
		t.Fatalf("the default is already %s: the chooser below would not be seen", good.ID())
	}
	var asked atomic.Int64
	r = Rules{Chooser: &countingChooser{fixedChooser{Choice{good, good.DefaultConfig(MakeShape(keys, 4), 1)}}, &asked}}
	for range 3 {
		same("chooser", 4, 1)
		if got := r.ChooseDims(op.Name, F32, keys, []int{4}, 1); got.Variant != good {
			t.Fatalf("with a chooser: %s, want %s", got.Variant.ID(), good.ID())
		}
	}
	// same() asks Choose (uncached) once per round: 3 of the questions
	if n := asked.Load(); n != 3+1 {
		t.Errorf("the chooser was asked %d times over 3 rounds, want 3 by Choose + 1 by ChooseDims", n)
	}
	if a := testing.AllocsPerRun(100, func() { r.ChooseDims(op.Name, F32, keys, []int{4}, 1) }); a != 0 {
		t.Errorf("a cached ChooseDims allocates %v times per call", a)
	}
	if fs := cpu.Effective().Features(); len(fs) > 0 {
		g := cpu.Generation()
		undo := cpu.Disable(fs[0])
		if cpu.Generation() == g {
			t.Errorf("disabling %v left the CPU generation at %d", fs[0], g)
		}
		before := asked.Load()
		r.ChooseDims(op.Name, F32, keys, []int{4}, 1)
		if asked.Load() == before {
			t.Errorf("after the CPU features changed ChooseDims kept its answer without asking the chooser")
		}
		undo()
	}
	// the answers are kept per chooser: rules without one (another
	// model's) get the default, not the chooser's kept answer
	r = Rules{}
	same("no chooser", 4, 1)
	if got := r.ChooseDims(op.Name, F32, keys, []int{4}, 1); got.Variant == good {
		t.Fatalf("rules without a chooser got the other rules' chooser's %s", good.ID())
	}
	undo, err := Force(op.Name, "good")
	if err != nil {
		t.Fatal(err)
	}
	same("forced", 4, 1)
	if got := r.ChooseDims(op.Name, F32, keys, []int{4}, 1); got.Variant != good {
		t.Fatalf("forced: %s, want %s", got.Variant.ID(), good.ID())
	}
	undo()
	same("force restored", 4, 1)
	// beyond the key: dims and classes, answered by Choose
	long := []int{4, 1, 1, 1, 1, 1, 1}
	lkeys := []string{"n", "a", "b", "c", "d", "e", "f"}
	want := Choose(op.Name, F32, MakeShape(lkeys, long...), 1)
	if got := r.ChooseDims(op.Name, F32, lkeys, long, 1); got.Variant != want.Variant {
		t.Errorf("7 dims: %s, want %s", got.Variant.ID(), want.Variant.ID())
	}
	many := []Class{ClassInt8Act, ClassBF16Act, ClassInt8Act, ClassBF16Act, ClassF32}
	want = Choose(op.Name, F32, MakeShape(keys, 4), 1, many...)
	if got := r.WithClasses(many...).ChooseDims(op.Name, F32, keys, []int{4}, 1); got.Variant != want.Variant {
		t.Errorf("5 classes: %s, want %s", got.Variant.ID(), want.Variant.ID())
	}
}

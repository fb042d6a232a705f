package kernel

import "testing"

type fixedChooser struct{ c Choice }

func (f fixedChooser) Choose(op string, dt DType, s Shape, threads int, classes []Class) (Choice, bool) {
	if op != f.c.Variant.Op {
		return Choice{}, false
	}
	return f.c, true
}

func TestChoose(t *testing.T) {
	op := LookupOp("test.scale")
	s := MakeShape(op.ShapeKeys, 4)
	def := Choose(op.Name, F32, s, 1)
	if def.Variant == nil || def.Variant.Reference {
		t.Fatalf("default choice %v, want a non-reference variant", def.Variant)
	}
	var other *Variant
	for _, v := range Candidates(op.Name, F32, DefaultClasses) {
		if v != def.Variant {
			other = v
		}
	}
	if other == nil {
		t.Skip("one candidate only")
	}
	with := Rules{Chooser: fixedChooser{Choice{other, other.DefaultConfig(s, 1)}}}
	if got := with.Choose(op.Name, F32, s, 1); got.Variant != other {
		t.Errorf("with a chooser: %v, want %v", got.Variant.ID(), other.ID())
	}
	// an invalid configuration from the chooser falls back to the default
	invalid := Rules{Chooser: fixedChooser{Choice{other, Config{Threads: 0}}}}
	if got := invalid.Choose(op.Name, F32, s, 1); got.Variant != def.Variant {
		t.Errorf("invalid chooser config: %v, want the default %v", got.Variant.ID(), def.Variant.ID())
	}
	// the rules of one caller are not another's
	if got := Choose(op.Name, F32, s, 1); got.Variant != def.Variant {
		t.Errorf("without a chooser, after one was used: %v, want %v", got.Variant.ID(), def.Variant.ID())
	}
}

package kernel

import (
	"math"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

// A toy op: y = a·x over n elements, with a correct variant, a wrong one,
// one that writes NaN, and one that needs a feature nobody has.
type scaleProblem struct {
	s    Shape
	x, y []float32
}

func (p *scaleProblem) Shape() Shape      { return p.s }
func (p *scaleProblem) DType() DType      { return F32 }
func (p *scaleProblem) Reset()            { clear(p.y) }
func (p *scaleProblem) Output() []float32 { return p.y }

type scaleInst struct {
	p *scaleProblem
	f func(x float32) float32
}

func (in scaleInst) Run() {
	for i, x := range in.p.x {
		in.p.y[i] = in.f(x)
	}
}

func init() {
	RegisterOp(&Op{
		Name: "test.scale", ShapeKeys: []string{"n"}, DTypes: []DType{F32},
		NewProblem: func(s Shape, dt DType, seed uint64) (Problem, error) {
			n := s.Get("n")
			p := &scaleProblem{s: s, x: make([]float32, n), y: make([]float32, n)}
			for i := range p.x {
				p.x[i] = float32(int(seed)+i) * 0.25
			}
			return p, nil
		},
		Cost: func(s Shape, dt DType) Cost { return Cost{FLOPs: float64(s.Get("n")), Bytes: 8 * float64(s.Get("n"))} },
	})
	mk := func(name string, prio int, ref bool, req cpu.Set, f func(float32) float32) {
		Register(&Variant{Op: "test.scale", Name: name, Priority: prio, Reference: ref, Requires: req,
			DTypes: []DType{F32}, Class: ClassF32,
			Params: []Param{{Name: "tile", Values: []int{1, 2, 4}, Default: 2}, {Name: "layout", Values: []int{0, 1}, Labels: []string{"kv", "vk"}}},
			Check: func(s Shape, cfg Config) error {
				if cfg.Params["tile"] > s.Get("n") {
					return errTile
				}
				return nil
			},
			New: func(p Problem, cfg Config) (Instance, error) { return scaleInst{p.(*scaleProblem), f}, nil },
		})
	}
	mk("reference", 0, true, 0, func(x float32) float32 { return 3 * x })
	mk("good", 10, false, 0, func(x float32) float32 { return x + x + x })
	mk("wrong", 50, false, 0, func(x float32) float32 { return 3*x + 1e-3 })
	mk("nan", 40, false, 0, func(x float32) float32 { return float32(math.NaN()) })
	mk("future", 99, false, cpu.NewSet(cpu.SME, cpu.AMXTile, cpu.AVX2), func(x float32) float32 { return 3 * x })
}

var errTile = &tileErr{}

type tileErr struct{}

func (*tileErr) Error() string { return "tile larger than n" }

func TestVerifyCatchesWrongAndNaN(t *testing.T) {
	s := MakeShape([]string{"n"}, 33)
	for _, name := range []string{"good", "wrong", "nan"} {
		v, err := Lookup("test.scale/" + name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Verify(v, s, F32, 5, v.DefaultConfig(s, 1), nil)
		if (err == nil) != (name == "good") {
			t.Errorf("%s: Verify err = %v", name, err)
		}
	}
}

func TestCandidatesAndDefault(t *testing.T) {
	var names []string
	for _, v := range Candidates("test.scale", F32, nil) {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ","); got != "wrong,nan,good" {
		t.Errorf("candidates %s (the reference and the unavailable variant must be excluded)", got)
	}
	if Default("test.scale", F32).Name != "wrong" {
		t.Error("default is not the highest-priority available variant")
	}
	restore, err := Force("test.scale", "good")
	if err != nil {
		t.Fatal(err)
	}
	if Default("test.scale", F32).Name != "good" {
		t.Error("Force ignored")
	}
	restore()
	if _, err := Force("test.scale", "future"); err == nil {
		t.Error("forcing an unavailable variant succeeded")
	}
	if Candidates("test.scale", Q4, nil) != nil {
		t.Error("candidates for a dtype nobody serves")
	}
	if Candidates("test.scale", F32, []Class{ClassBF16Act}) != nil {
		t.Error("class filter ignored")
	}
}

func TestSpaceAndValidate(t *testing.T) {
	v, _ := Lookup("test.scale/good")
	if n := len(v.Space(MakeShape([]string{"n"}, 100))); n != 6 {
		t.Errorf("space size %d, want 6", n)
	}
	if n := len(v.Space(MakeShape([]string{"n"}, 2))); n != 4 {
		t.Errorf("space at n=2: %d combos, want 4 (tile 4 rejected)", n)
	}
	s := MakeShape([]string{"n"}, 3)
	for _, bad := range []Config{
		{Threads: 1, Params: Values{"tile": 3, "layout": 0}},
		{Threads: 1, Params: Values{"tile": 2}},
		{Threads: 1, Params: Values{"tile": 2, "layout": 0, "bogus": 1}},
		{Threads: 2, Params: Values{"tile": 2, "layout": 0}},
		{Threads: 1, Params: Values{"tile": 4, "layout": 0}},
	} {
		if err := v.Validate(s, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if got := v.Param("layout").Label(1); got != "vk" {
		t.Errorf("label %q", got)
	}
}

func TestShapeString(t *testing.T) {
	s := MakeShape([]string{"m", "n", "k"}, 1, 4096, 2304)
	if s.String() != "m=1/n=4096/k=2304" {
		t.Error(s.String())
	}
	back, err := ParseShape(s.String())
	if err != nil || back.String() != s.String() {
		t.Errorf("%v %v", back, err)
	}
	for _, bad := range []string{"m", "m=x", "=3", "m=1//n=2"} {
		if _, err := ParseShape(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if s.With("m", 8).String() != "m=8/n=4096/k=2304" || s.Get("m") != 1 {
		t.Error("With mutated or failed")
	}
}

func TestCompare(t *testing.T) {
	want := []float32{1, 2, 3}
	if _, err := Compare([]float32{1, 2, 3}, want, TolF32); err != nil {
		t.Error(err)
	}
	if _, err := Compare([]float32{1, 2, float32(math.NaN())}, want, TolInt8Act); err == nil {
		t.Error("NaN passed")
	}
	if _, err := Compare([]float32{1, 2, float32(math.Inf(1))}, want, TolInt8Act); err == nil {
		t.Error("Inf passed")
	}
	if _, err := Compare([]float32{1, 2}, want, TolInt8Act); err == nil {
		t.Error("length mismatch passed")
	}
	if _, err := Compare([]float32{1, 2, 3.01}, want, TolF32); err == nil {
		t.Error("1e-2 error passed f32 tolerance")
	}
	if _, err := Compare([]float32{0, 0, 1e-30}, []float32{0, 0, 0}, TolF32); err == nil {
		t.Error("nonzero against all-zero reference passed")
	}
}

func TestBenchName(t *testing.T) {
	v, _ := Lookup("test.scale/good")
	got := BenchName(v, F32, MakeShape([]string{"n"}, 7), 2, "mem=dram")
	if got != "op=scale/dtype=f32/variant=good/n=7/mem=dram/threads=2" {
		t.Error(got)
	}
}

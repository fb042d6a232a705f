package tuner

import (
	"context"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/kernel"
)

// A synthetic op with a family rule (Op.DefaultAt): from n = 128 on, the
// engine runs "ruled" without a profile, below it "base" (Default). On
// the virtual clock "ruled" costs half of "base".
const ruleOp = "tunetest.rule"

func init() {
	costs["ruled"] = 500_000
	kernel.RegisterOp(&kernel.Op{Name: ruleOp, ShapeKeys: []string{"n"}, DTypes: []kernel.DType{kernel.F32},
		NewProblem: fixedProblem,
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			return kernel.Cost{FLOPs: float64(s.Get("n")), Bytes: 8 * float64(s.Get("n"))}
		},
		DefaultAt: func(s kernel.Shape, _ kernel.DType, _ []kernel.Class) *kernel.Variant {
			if s.Get("n") < 128 {
				return nil
			}
			v, _ := kernel.Lookup(ruleOp + "/ruled")
			return v
		},
	})
	for _, v := range []struct {
		name string
		prio int
		ref  bool
	}{{"reference", 0, true}, {"base", 20, false}, {"ruled", 5, false}} {
		kernel.Register(&kernel.Variant{Op: ruleOp, Name: v.name, Priority: v.prio, Reference: v.ref,
			DTypes: []kernel.DType{kernel.F32}, Class: kernel.ClassF32,
			New: func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				return faultInst{p.(*workProblem), v.name}, nil
			}})
	}
}

// TestDefaultIsTheFamilysRule: where a family's rule picks the variant
// (the MLA prefill's absorbed form over a cached prefix), the tuner times
// and confirms every candidate against the rule's answer, which is what
// the engine runs without a profile: at n = 256 the rule's "ruled" is the
// untuned default and, fastest, is kept (the entry answers nothing and
// the engine runs the rule); at n = 64 "ruled" beats the default "base"
// and is chosen. A tuner that confirmed against Default (shape-blind)
// would record "base" as the default at 256 and make the profile choose
// what the engine already runs there.
func TestDefaultIsTheFamilysRule(t *testing.T) {
	busy.Store(false)
	for _, c := range []struct {
		n                 int
		dflt, best        string
		keeps, profiled   bool
		engineWithProfile string
	}{{256, "ruled", "ruled", true, false, "ruled"}, {64, "base", "ruled", false, true, "ruled"}} {
		opt := quickOpts(t, t.TempDir())
		opt.Workloads = []Workload{{Op: ruleOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, c.n), ShapeClass: "decode-1"}}
		opt.Measure.Now = func() time.Time { return time.Unix(0, vclock.Load()) }
		p, _, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entries) != 1 {
			t.Fatalf("n=%d: %d entries", c.n, len(p.Entries))
		}
		e := p.Entries[0]
		if e.Default == nil || e.Default.Variant != c.dflt || e.Best.Variant != c.best || e.KeepsDefault() != c.keeps {
			t.Errorf("n=%d: default %+v, best %s, keeps default %v; want default %s, best %s, keeps %v", c.n, e.Default, e.Best.Variant, e.KeepsDefault(), c.dflt, c.best, c.keeps)
		}
		s := kernel.MakeShape([]string{"n"}, c.n)
		if _, ok := p.Choose(ruleOp, kernel.F32, s, 1, kernel.DefaultClasses); ok != c.profiled {
			t.Errorf("n=%d: the profile answers %v, want %v", c.n, ok, c.profiled)
		}
		if got := (kernel.Rules{Chooser: p}).Choose(ruleOp, kernel.F32, s, 1); got.Variant == nil || got.Variant.Name != c.engineWithProfile {
			t.Errorf("n=%d: the engine runs %v with the profile, want %s", c.n, got.Variant, c.engineWithProfile)
		}
	}
}

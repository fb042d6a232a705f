package tuner

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
)

// A synthetic op timed on a virtual clock: each run of a variant advances
// it by the variant's cost, so every measurement is exact and a timing
// fault can be planted. "base" is the dispatcher's default (1 ms a run);
// "slower" costs 1.1 ms; "faster" 0.8 ms. While the machine is "busy" —
// from the start until the first run of another variant — base's runs
// cost twice as much: the default's figure in the search is 2 ms, so
// "slower" looks 1.8× faster than the default there.
const faultOp = "tunetest.fault"

var (
	vclock atomic.Int64 // virtual nanoseconds
	busy   atomic.Bool
	costs  = map[string]int64{"reference": 0, "base": 1_000_000, "slower": 1_100_000, "faster": 800_000}
	// the challenger variant registered under "fake" for the running test
	fakeCost atomic.Int64
)

type faultInst struct {
	p    *workProblem
	name string
}

func (in faultInst) Run() {
	c := costs[in.name]
	switch in.name {
	case "fake":
		c = fakeCost.Load()
		busy.Store(false)
	case "base":
		if busy.Load() {
			c *= 2
		}
	}
	vclock.Add(c)
	copy(in.p.y, in.p.x)
}

func init() {
	kernel.RegisterOp(&kernel.Op{Name: faultOp, ShapeKeys: []string{"n"}, DTypes: []kernel.DType{kernel.F32},
		NewProblem: func(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
			n := s.Get("n")
			p := &workProblem{s: s, x: make([]float32, n), y: make([]float32, n)}
			for i := range p.x {
				p.x[i] = float32(i%5) - 2
			}
			return p, nil
		},
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			return kernel.Cost{FLOPs: float64(s.Get("n")), Bytes: 8 * float64(s.Get("n"))}
		},
	})
	for _, v := range []struct {
		name string
		prio int
		ref  bool
	}{{"reference", 0, true}, {"base", 20, false}, {"fake", 10, false}} {
		kernel.Register(&kernel.Variant{Op: faultOp, Name: v.name, Priority: v.prio, Reference: v.ref,
			DTypes: []kernel.DType{kernel.F32}, Class: kernel.ClassF32,
			New: func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				return faultInst{p.(*workProblem), v.name}, nil
			}})
	}
}

// TestConfirmTimingFault plants a timing fault: the default measured while
// the machine was busy, so that a slower candidate wins the search. The
// alternating re-measurement keeps the default (the profile chooses what
// no profile would); a candidate truly faster by 20% is still chosen.
// Without the confirmation (the search's winner kept) the first case fails.
func TestConfirmTimingFault(t *testing.T) {
	for _, c := range []struct {
		name   string
		cost   int64
		chosen string
	}{{"slower measured faster", costs["slower"], "base"}, {"truly faster", costs["faster"], "fake"}} {
		t.Run(c.name, func(t *testing.T) {
			fakeCost.Store(c.cost)
			busy.Store(true)
			opt := quickOpts(t, t.TempDir())
			opt.Workloads = []Workload{{Op: faultOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}}
			opt.Measure.Now = func() time.Time { return time.Unix(0, vclock.Load()) }
			p, _, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Entries) != 1 {
				t.Fatalf("%d entries", len(p.Entries))
			}
			e := p.Entries[0]
			if e.Confirm == nil {
				t.Fatalf("no confirmation; best %s", e.Best.Variant)
			}
			if e.Best.Variant != c.chosen {
				t.Errorf("best %s, want %s (confirm %+v)", e.Best.Variant, c.chosen, *e.Confirm)
			}
			wantRole := map[string]string{"base": profile.ConfirmDefault, "fake": profile.ConfirmSearch}[c.chosen]
			if e.Confirm.Base != profile.ConfirmDefault || e.Confirm.Chosen != wantRole || len(e.Confirm.Challengers) != 1 {
				t.Errorf("confirm %+v, want base default, chosen %s, one challenger", *e.Confirm, wantRole)
			}
			// the figures are the alternating rounds', not the busy search's
			if e.Default == nil || e.Default.Median != float64(costs["base"])/1e9 {
				t.Errorf("default figure %+v, want %v s", e.Default, float64(costs["base"])/1e9)
			}
			if err := e.Check(""); err != nil {
				t.Errorf("entry check: %v", err)
			}
		})
	}
}

// TestDecide pins confirm's rule: a challenger must beat the base in every
// round by more than the margin (the larger of the least gain and the
// base's own spread over the rounds); of those, the least median ratio.
func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name       string
		base       []float64
		chall      [][]float64
		wantMargin float64
		wantPick   int
	}{
		{"clear win", []float64{10, 10, 10}, [][]float64{{8, 8, 8}}, 0.03, 1},
		{"within the least gain", []float64{10, 10, 10}, [][]float64{{9.8, 9.8, 9.8}}, 0.03, 0},
		{"two rounds of three", []float64{10, 10, 10}, [][]float64{{5, 5, 10.1}}, 0.03, 0},
		{"within the base's noise", []float64{10, 12, 11}, [][]float64{{9.3, 9.3, 9.3}}, 2.0 / 11, 0},
		{"past the base's noise", []float64{10, 12, 11}, [][]float64{{7, 8, 8}}, 2.0 / 11, 1},
		{"the faster of two", []float64{10, 10, 10}, [][]float64{{8, 8, 8}, {7, 7.5, 9}}, 0.03, 2},
		{"a slower one", []float64{10, 10, 10}, [][]float64{{11, 12, 11}}, 0.03, 0},
		{"NaN never wins", []float64{10, 10, 10}, [][]float64{{math.NaN(), 8, 8}}, 0.03, 0},
	} {
		margin, ratios, pick := decide(c.base, c.chall, 0.03)
		if math.Abs(margin-c.wantMargin) > 1e-12 || pick != c.wantPick || len(ratios) != len(c.chall) {
			t.Errorf("%s: margin %v pick %d, want %v and %d", c.name, margin, pick, c.wantMargin, c.wantPick)
		}
	}
}

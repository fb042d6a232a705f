package tuner

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
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
		NewProblem: fixedProblem,
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
		others time.Duration // CPU time other processes took during the rounds
	}{{"slower measured faster", costs["slower"], "base", 0}, {"truly faster", costs["faster"], "fake", 0},
		{"truly faster, rounds busy", costs["faster"], "base", time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			fakeCost.Store(c.cost)
			busy.Store(true)
			opt := quickOpts(t, t.TempDir())
			samples := 0
			opt.SampleLoad = func() (cpu.Load, error) { // virtual: the rounds last 1 s, others took c.others
				samples++
				return cpu.Load{Wall: time.Unix(int64(samples), 0), Busy: time.Duration(samples/2) * c.others}, nil
			}
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
			if busy := e.Confirm.Busy != ""; busy != (c.others > 0) || busy && !strings.Contains(e.Confirm.Busy, "other processes used") {
				t.Errorf("confirm busy %q with others taking %v", e.Confirm.Busy, c.others)
			}
			// the figures are the alternating rounds', not the busy search's
			if e.Default == nil || e.Default.Median != float64(costs["base"])/1e9 {
				t.Errorf("default figure %+v, want %v s", e.Default, float64(costs["base"])/1e9)
			}
			if err := e.Check(""); err != nil {
				t.Errorf("entry check: %v", err)
			}
			if keeps := c.chosen == "base"; e.KeepsDefault() != keeps {
				t.Errorf("KeepsDefault %v with %s chosen", e.KeepsDefault(), c.chosen)
			}
		})
	}
}

// TestChooseKeepsDefault: an entry that kept the untuned default answers
// nothing, so the engine runs its default configured for the shape at
// hand (the entry's configuration was the default's at the tuned shape,
// and may not be the default here); an entry whose choice beat the
// default answers with it. A Choose that returns every entry's choice
// fails the first case.
func TestChooseKeepsDefault(t *testing.T) {
	s := kernel.MakeShape([]string{"n"}, 64)
	tuned := profile.Result{Variant: "good", Params: kernel.Values{"tile": 8, "rounds": 2}, Threads: 1, Placement: "compact", Median: 1e-6}
	def := kernel.Default(workOp, kernel.F32)
	good, err := kernel.Lookup(workOp + "/good")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dflt profile.Result
		want kernel.Choice
	}{
		{"kept the default", tuned, kernel.Choice{Variant: def, Config: def.DefaultConfig(s, 1)}},
		{"beat the default", profile.Result{Variant: "good", Params: kernel.Values{"tile": 1, "rounds": 3}, Threads: 1, Placement: "compact", Median: 2e-6},
			kernel.Choice{Variant: good, Config: kernel.Config{Threads: 1, Params: tuned.Params}}},
	} {
		p := profile.NewProfile("test", kernel.DefaultClasses)
		d := c.dflt
		p.Entries = []profile.Entry{{Op: workOp, DType: kernel.F32, Class: kernel.ClassF32, Shape: s, Threads: 1, Best: tuned, Default: &d}}
		if got := p.Entries[0].KeepsDefault(); got != (c.name == "kept the default") {
			t.Errorf("%s: KeepsDefault %v", c.name, got)
		}
		r := kernel.Rules{Chooser: p}
		got := r.Choose(workOp, kernel.F32, s, 1)
		if got.Variant != c.want.Variant || got.Config.Threads != c.want.Config.Threads || got.Config.Params.String() != c.want.Config.Params.String() {
			t.Errorf("%s: chose %s %v t=%d, want %s %v t=%d", c.name, got.Variant.Name, got.Config.Params, got.Config.Threads,
				c.want.Variant.Name, c.want.Config.Params, c.want.Config.Threads)
		}
		// a call 4× the shape still takes an entry's choice; 8× away the
		// engine's default runs (profile.MaxShapeDistance)
		for _, n := range []int{256, 512} {
			far := kernel.MakeShape([]string{"n"}, n)
			got := r.Choose(workOp, kernel.F32, far, 1)
			want := c.want
			if n == 512 {
				want = kernel.Choice{Variant: def, Config: def.DefaultConfig(far, 1)}
			}
			if got.Variant != want.Variant || got.Config.Params.String() != want.Config.Params.String() {
				t.Errorf("%s at n=%d: chose %s %v, want %s %v", c.name, n, got.Variant.Name, got.Config.Params, want.Variant.Name, want.Config.Params)
			}
		}
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

// TestInstallNoisy: this machine's profile, marked noisy by ktune, is not
// used (the defaults run, and a warning says why and how to use it); named
// (--profile, KTUNE_PROFILE) it is used, with a warning; a quiet one is
// used, and the line on it counts its confirmed choices.
func TestInstallNoisy(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	if err := os.MkdirAll(profile.DefaultDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(noisy bool) string {
		return writeProfile(t, profile.DefaultDir(), func(p *profile.Profile) {
			p.Fingerprint = cpu.Fingerprint()
			if noisy {
				p.Noisy = []string{"the DRAM ceiling moved 30%"}
			}
			p.Entries[0].Confirm = &profile.Confirm{Base: profile.ConfirmDefault, Rounds: 3, Margin: 0.03, Chosen: profile.ConfirmSearch,
				Challengers: []profile.Challenger{{Role: profile.ConfirmSearch, Result: p.Entries[0].Best, Ratios: []float64{0.5, 0.5, 0.5}}}}
		})
	}
	// what a model given the installed profile (nil: none) as its chooser runs
	chosen := func(p *profile.Profile) string {
		var c kernel.Chooser
		if p != nil {
			c = p
		}
		return kernel.Rules{Chooser: c}.Choose(workOp, kernel.F32, kernel.MakeShape([]string{"n"}, 64), 1).Variant.Name
	}
	def := kernel.Default(workOp, kernel.F32).Name

	path := write(true)
	if err := os.Rename(path, profile.DefaultPath()); err != nil {
		t.Fatal(err)
	}
	p, used, info, warns := profile.InstallFrom("")
	if used != "" || info != "" || len(warns) != 1 || !strings.Contains(warns[0], "tuned while the machine was busy (the DRAM ceiling moved 30%); not used") ||
		!strings.Contains(warns[0], "--profile "+profile.DefaultPath()) {
		t.Errorf("found noisy profile: used %q, info %q, warnings %q", used, info, warns)
	}
	if c := chosen(p); c != def {
		t.Errorf("with a refused profile the kernel chosen is %s, want the default %s", c, def)
	}

	p, used, info, warns = profile.InstallFrom(profile.DefaultPath())
	if used == "" || len(warns) != 1 || !strings.Contains(warns[0], "used because it was named") || !strings.Contains(info, "marked noisy") {
		t.Errorf("named noisy profile: used %q, info %q, warnings %q", used, info, warns)
	}
	if c := chosen(p); c != "good" {
		t.Errorf("with the named profile the kernel chosen is %s, want good", c)
	}

	path = write(false)
	if err := os.Rename(path, profile.DefaultPath()); err != nil {
		t.Fatal(err)
	}
	_, used, info, warns = profile.InstallFrom("")
	want := "tuning profile " + profile.DefaultPath() + ": 1 choices; of 1 challenged in 3 alternating rounds, 1 beat the default, 0 kept it, 0 took a smaller thread budget's choice"
	if used == "" || len(warns) != 0 || info != want {
		t.Errorf("quiet profile: used %q, warnings %q\ninfo %q\nwant %q", used, warns, info, want)
	}
	// a loss end to end: not used unless named
	path = writeProfile(t, profile.DefaultDir(), func(p *profile.Profile) {
		p.Fingerprint = cpu.Fingerprint()
		p.EndToEnd = &profile.EndToEnd{Model: "m", Rounds: 1, Rows: []profile.EndToEndRow{{Test: "pp64", Threads: 1, With: 9, Without: 10, Ratios: []float64{0.9}}}}
		p.EndToEnd.Judge()
	})
	if err := os.Rename(path, profile.DefaultPath()); err != nil {
		t.Fatal(err)
	}
	if _, used, _, warns := profile.InstallFrom(""); used != "" || len(warns) != 1 || !strings.Contains(warns[0], "slower with it than without (pp64 at 1 threads 0.90×); not used") {
		t.Errorf("losing profile: used %q, warnings %q", used, warns)
	}
	if _, used, info, warns := profile.InstallFrom(profile.DefaultPath()); used == "" || len(warns) != 1 || !strings.Contains(info, "end to end 0.90×") {
		t.Errorf("named losing profile: used %q, info %q, warnings %q", used, info, warns)
	}
	if p, used, _, _ := profile.InstallFrom("off"); used != "" || p != nil {
		t.Errorf("off: used %q", used)
	}
}

// TestConfirmLate: past the unit's slice of the budget a challenged
// default stays, unconfirmed and said so, without a round timed.
func TestConfirmLate(t *testing.T) {
	tu := &tuner{opt: quickOpts(t, t.TempDir()), chosen: map[string]candidate{}}
	w := Workload{Op: faultOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}
	u := unit{w, kernel.ClassF32, 1}
	base, _ := kernel.Lookup(faultOp + "/base")
	fake, _ := kernel.Lookup(faultOp + "/fake")
	dc := &candidate{base, kernel.Config{Threads: 1, Params: kernel.Values{}}, pool.Compact}
	def := profile.Result{Variant: "base", Threads: 1, Median: 2e-3}
	e := profile.Entry{Op: faultOp, DType: kernel.F32, Class: kernel.ClassF32, Shape: w.Shape, Threads: 1,
		Best: profile.Result{Variant: "fake", Threads: 1, Median: 1e-3}, Default: &def}
	if err := tu.confirmUnit(u, nil, &e, dc, candidate{fake, kernel.Config{Threads: 1, Params: kernel.Values{}}, pool.Compact}, true, true); err != nil {
		t.Fatal(err)
	}
	if e.Best.Variant != "base" || e.Confirm == nil || e.Confirm.Skipped == "" || e.Confirm.Rounds != 0 {
		t.Errorf("late: best %s, confirm %+v; want the default kept, skipped", e.Best.Variant, e.Confirm)
	}
	if err := e.Check(""); err != nil {
		t.Errorf("check: %v", err)
	}
}

// reserveOp is timed on the virtual clock: "base" (the default) costs
// 1 ms a run, "wide" 0.7 ms at every one of its 200 parameter values, a
// space that takes longer to measure than the slice TestConfirmReserve
// gives, so the search would take all of it.
const reserveOp = "tunetest.reserve"

type reserveInst struct {
	p    *workProblem
	cost int64
}

func (in reserveInst) Run() { vclock.Add(in.cost); copy(in.p.y, in.p.x) }

func init() {
	kernel.RegisterOp(&kernel.Op{Name: reserveOp, ShapeKeys: []string{"n"}, DTypes: []kernel.DType{kernel.F32},
		NewProblem: fixedProblem,
		Cost:       func(s kernel.Shape, dt kernel.DType) kernel.Cost { return kernel.Cost{FLOPs: 1, Bytes: 8} },
	})
	vals := make([]int, 200)
	for i := range vals {
		vals[i] = i + 1
	}
	for _, v := range []struct {
		name   string
		prio   int
		ref    bool
		cost   int64
		params []kernel.Param
	}{{"reference", 0, true, 0, nil}, {"base", 20, false, 1_000_000, nil},
		{"wide", 10, false, 700_000, []kernel.Param{{Name: "p", Values: vals, Default: 1}}}} {
		kernel.Register(&kernel.Variant{Op: reserveOp, Name: v.name, Priority: v.prio, Reference: v.ref,
			DTypes: []kernel.DType{kernel.F32}, Class: kernel.ClassF32, Params: v.params,
			New: func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				return reserveInst{p.(*workProblem), v.cost}, nil
			}})
	}
}

// TestConfirmReserve: the search leaves the part of the unit's slice that
// confirming its winner takes, so a unit given a few times the default's
// timing confirms (three rounds) instead of searching to the end of its
// slice and keeping the default unconfirmed. A search that ignores the
// reserve fails it.
func TestConfirmReserve(t *testing.T) {
	opt := quickOpts(t, t.TempDir())
	opt.Measure.Now = func() time.Time { return time.Unix(0, vclock.Load()) }
	opt.SampleLoad = func() (cpu.Load, error) { return cpu.Load{Wall: time.Unix(vclock.Load()/1e9, 0)}, nil }
	tu := &tuner{opt: opt, refs: map[string][]float32{}, verified: map[string]error{}, chosen: map[string]candidate{},
		rng: rand.New(rand.NewPCG(1, 7))}
	w := Workload{Op: reserveOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}
	ps, err := newProblems(w, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// the default's first timing: its samples, the warm-up and a rerun
	// when noisy; the slice holds about 20 of them
	e, err := tu.tuneUnit(unit{w, kernel.ClassF32, 1}, ps, 20*time.Duration(2*max(opt.Measure.Samples, 6)+2)*opt.Measure.SampleTime)
	if err != nil {
		t.Fatal(err)
	}
	if e.Confirm == nil || e.Confirm.Skipped != "" || e.Confirm.Rounds != 3 {
		t.Errorf("confirm %+v (measured %d of %d): want three rounds, not skipped", e.Confirm, e.Measured, e.Space)
	}
	if e.Best.Variant != "wide" || e.Confirm != nil && e.Confirm.Chosen != profile.ConfirmSearch {
		t.Errorf("best %s, want wide (30%% faster) confirmed", e.Best.Variant)
	}
}

package tuner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/internal/testexec"
	_ "github.com/ktune/ktune/kernels/all"
	"github.com/ktune/ktune/kernels/gemm"
	"github.com/ktune/ktune/model"
)

// A synthetic op whose best parameters are known: "good" does work
// proportional to 3^(|log2(tile) − 2| + rounds − 1), so tile=4, rounds=1 is
// fastest and each step away from it costs 3× (a 2× step lost to noise once
// in CI, the search's tests running beside other processes on 2 cores);
// "wrongfast" does nothing and returns a wrong answer.
type workProblem struct {
	s    kernel.Shape
	x, y []float32
}

func (p *workProblem) Shape() kernel.Shape { return p.s }
func (p *workProblem) DType() kernel.DType { return kernel.F32 }
func (p *workProblem) Reset()              { clear(p.y) }
func (p *workProblem) Output() []float32   { return p.y }

type workInst struct {
	p     *workProblem
	spin  int
	scale float32
}

var sink float64

func (in workInst) Run() {
	acc := 1.0
	for i := 0; i < in.spin; i++ {
		acc = acc*1.0000001 + 1e-9
	}
	sink += acc
	for i, x := range in.p.x {
		in.p.y[i] = in.scale * x
	}
}

const workOp = "tunetest.work"

func init() {
	kernel.RegisterOp(&kernel.Op{Name: workOp, ShapeKeys: []string{"n"}, DTypes: []kernel.DType{kernel.F32},
		NewProblem: func(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
			n := s.Get("n")
			p := &workProblem{s: s, x: make([]float32, n), y: make([]float32, n)}
			for i := range p.x {
				p.x[i] = float32(int(seed%7)+i%13) - 6
			}
			return p, nil
		},
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			return kernel.Cost{FLOPs: float64(s.Get("n")), Bytes: 8 * float64(s.Get("n"))}
		},
	})
	mk := func(name string, prio int, ref bool, params []kernel.Param, spin func(kernel.Config) int, scale float32) {
		kernel.Register(&kernel.Variant{Op: workOp, Name: name, Priority: prio, Reference: ref,
			DTypes: []kernel.DType{kernel.F32}, Class: kernel.ClassF32, Threaded: true, Params: params,
			New: func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				return workInst{p.(*workProblem), spin(cfg), scale}, nil
			}})
	}
	none := func(kernel.Config) int { return 0 }
	mk("reference", 0, true, nil, none, 2)
	mk("wrongfast", 100, false, nil, none, 3)
	mk("good", 10, false, []kernel.Param{
		{Name: "tile", Values: []int{1, 2, 4, 8, 16, 32}, Default: 1},
		{Name: "rounds", Values: []int{1, 2, 3}, Default: 3},
	}, func(cfg kernel.Config) int {
		lg := math.Log2(float64(cfg.Params["tile"]))
		return int(math.Pow(3, math.Abs(lg-2)+float64(cfg.Params["rounds"]-1)) * 20000)
	}, 2)
}

func quickOpts(t *testing.T, dir string) Options {
	return Options{
		Config: arch.Kimi48B(), ModelName: "test", Threads: []int{1}, Dir: dir,
		Workloads: []Workload{{Op: workOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}},
		Measure:   MeasureOptions{SampleTime: 300 * time.Microsecond, Samples: 6, Noisy: 0.5, StopRatio: 1.3},
		// quiet, whatever else runs beside the tests
		SampleLoad: func() (cpu.Load, error) { return cpu.Load{Wall: time.Now()}, nil },
	}
}

func TestSearchFindsKnownBest(t *testing.T) {
	for _, exhaustive := range []int{100, 4} { // whole space; hill climb
		t.Run("exhaustive_max="+strconv.Itoa(exhaustive), func(t *testing.T) {
			opt := quickOpts(t, t.TempDir())
			opt.ExhaustiveMax = exhaustive
			p, path, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Entries) != 1 {
				t.Fatalf("%d entries, want 1", len(p.Entries))
			}
			e := p.Entries[0]
			if e.Best.Variant != "good" || e.Best.Params["tile"] != 4 || e.Best.Params["rounds"] != 1 {
				t.Errorf("best %s %v, want good tile=4 rounds=1", e.Best.Variant, e.Best.Params)
			}
			rejected := false
			for _, r := range e.Rejected {
				rejected = rejected || r.Variant == "wrongfast"
			}
			if !rejected {
				t.Errorf("the wrong-but-fast candidate was not rejected: %+v", e.Rejected)
			}
			// the dispatcher's default here is wrongfast: no figure for it
			if e.Default != nil {
				t.Errorf("default figure %+v: a wrong default must not be timed", e.Default)
			}
			if e.Space != 19 || e.Measured < 1 || e.Measured > e.Space {
				t.Errorf("space %d measured %d", e.Space, e.Measured)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			// use mode: loads without warnings and chooses the tuned config
			lp, warns := profile.Load(path)
			if lp == nil || len(warns) > 0 {
				t.Fatalf("Load: %v", warns)
			}
			restore := lp.Install()
			defer restore()
			c := kernel.Rules{Chooser: lp}.Choose(workOp, kernel.F32, kernel.MakeShape([]string{"n"}, 100), 1)
			if c.Variant.Name != "good" || c.Config.Params["tile"] != 4 {
				t.Errorf("Choose with the profile: %s %v", c.Variant.Name, c.Config.Params)
			}
		})
	}
}

func writeProfile(t *testing.T, dir string, edit func(p *profile.Profile)) string {
	t.Helper()
	p := profile.NewProfile("test", kernel.DefaultClasses)
	p.Entries = []profile.Entry{{Op: workOp, DType: kernel.F32, Class: kernel.ClassF32, Shape: kernel.MakeShape([]string{"n"}, 64), Threads: 1,
		Best: profile.Result{Variant: "good", Params: kernel.Values{"tile": 4, "rounds": 1}, Threads: 1, Median: 1e-6}}}
	if edit != nil {
		edit(p)
	}
	path := filepath.Join(dir, "p.json")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadBadProfiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, want string
		path       string
		whole      bool // the whole profile is refused
	}{
		{"corrupt", "corrupt", "", true},
		{"foreign", "is for CPU", writeProfile(t, dir+"/f", func(p *profile.Profile) { p.Fingerprint = "amd-26.68.0-16c-avx512_vnni-00000000" }), true},
		{"old-schema", "schema 0", "", true},
		{"stale-variant", "stale variant", writeProfile(t, dir+"/v", func(p *profile.Profile) { p.Entries[0].Best.Variant = "removed_in_v2" }), false},
		{"stale-param", "stale parameters", writeProfile(t, dir+"/q", func(p *profile.Profile) { p.Entries[0].Best.Params["tile"] = 3 }), false},
		{"missing", "no such file", filepath.Join(dir, "absent.json"), true},
		{"confirm-ratio", "confirm: challenger search: ratio -1", writeProfile(t, dir+"/c", func(p *profile.Profile) {
			p.Entries[0].Confirm = &profile.Confirm{Base: profile.ConfirmDefault, Rounds: 1, Margin: 0.03, Chosen: profile.ConfirmSearch,
				Challengers: []profile.Challenger{{Role: profile.ConfirmSearch, Result: p.Entries[0].Best, Ratios: []float64{-1}}}}
		}), false},
		{"confirm-chosen", "is neither the base nor a challenger", writeProfile(t, dir+"/d", func(p *profile.Profile) {
			p.Entries[0].Confirm = &profile.Confirm{Base: profile.ConfirmDefault, Rounds: 1, Margin: 0.03, Chosen: profile.ConfirmFewerThreads}
		}), false},
	}
	cases[0].path = filepath.Join(dir, "corrupt.json")
	os.WriteFile(cases[0].path, []byte(`{"schema": 1, "fingerprint": "x", "entries": [`), 0o644)
	cases[2].path = filepath.Join(dir, "old.json")
	good := writeProfile(t, dir+"/o", nil)
	b, _ := os.ReadFile(good)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["schema"] = 0.0
	m["fingerprint"] = cpu.Fingerprint()
	b, _ = json.Marshal(m)
	os.WriteFile(cases[2].path, b, 0o644)
	cases[2].want = "not a ktune profile"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, warns := profile.Load(c.path)
			if len(warns) == 0 || !strings.Contains(strings.Join(warns, "\n"), c.want) || !strings.Contains(strings.Join(warns, "\n"), filepath.Base(c.path)) {
				t.Fatalf("warnings %q, want one naming the file and %q", warns, c.want)
			}
			if c.whole != (p == nil) {
				t.Fatalf("profile %v, whole-file refusal %v", p, c.whole)
			}
			var r kernel.Rules // what a model given the profile follows
			if p != nil {
				if len(p.Entries) != 0 {
					t.Errorf("the bad entry was kept")
				}
				restore := p.Install()
				defer restore()
				r.Chooser = p
			}
			// the runtime falls back to the defaults
			ch := r.Choose(workOp, kernel.F32, kernel.MakeShape([]string{"n"}, 64), 1)
			if ch.Variant == nil || ch.Variant.Name != kernel.Default(workOp, kernel.F32).Name {
				t.Errorf("fallback chose %v", ch.Variant)
			}
		})
	}
	// a profile of another schema version that parses
	p := writeProfile(t, dir+"/s", func(p *profile.Profile) { p.Schema = profile.SchemaVersion + 1 })
	if lp, warns := profile.Load(p); lp != nil || len(warns) != 1 || !strings.Contains(warns[0], "schema") {
		t.Errorf("newer schema: %v %q", lp, warns)
	}
}

func TestChooseNearest(t *testing.T) {
	p := profile.NewProfile("t", kernel.DefaultClasses)
	mk := func(n, threads, tile int, median float64, class kernel.Class) profile.Entry {
		return profile.Entry{Op: workOp, DType: kernel.F32, Class: class, Shape: kernel.MakeShape([]string{"n"}, n), Threads: threads,
			Best: profile.Result{Variant: "good", Params: kernel.Values{"tile": tile, "rounds": 1}, Threads: threads, Median: median}}
	}
	p.Entries = []profile.Entry{mk(64, 1, 1, 1, kernel.ClassF32), mk(4096, 1, 8, 1, kernel.ClassF32), mk(4096, 2, 16, 1, kernel.ClassF32)}
	for _, c := range []struct{ n, threads, tile int }{{50, 1, 1}, {3000, 1, 8}, {3000, 2, 16}, {3000, 8, 16}, {64, 2, 1}} {
		ch, ok := p.Choose(workOp, kernel.F32, kernel.MakeShape([]string{"n"}, c.n), c.threads, kernel.DefaultClasses)
		if !ok || ch.Config.Params["tile"] != c.tile || ch.Config.Threads > c.threads {
			t.Errorf("n=%d threads=%d: %v %v, want tile %d", c.n, c.threads, ok, ch.Config, c.tile)
		}
	}
	if _, ok := p.Choose(workOp, kernel.F32, kernel.MakeShape([]string{"n"}, 64), 1, []kernel.Class{kernel.ClassInt8Act}); ok {
		t.Error("chose an entry of a class not allowed")
	}
}

// The kill -9 test's child: tunes several workloads slowly into the folder
// named by the environment.
func TestMain(m *testing.M) {
	if dir := os.Getenv("KTUNE_TUNER_CHILD"); dir != "" {
		opt := killOpts(dir)
		if _, _, err := Run(context.Background(), opt); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func killOpts(dir string) Options {
	opt := Options{Config: arch.Kimi48B(), ModelName: "test", Threads: []int{1}, Dir: dir,
		Measure: MeasureOptions{SampleTime: 2 * time.Millisecond, Samples: 6, Noisy: 0.5, StopRatio: 1.3}}
	for n := 16; n <= 16<<7; n *= 2 {
		opt.Workloads = append(opt.Workloads, Workload{Op: workOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, n), ShapeClass: "x"})
	}
	return opt
}

func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes for several seconds")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, profile.FileName(cpu.Fingerprint()))
	jpath := profile.JournalPath(dir, cpu.Fingerprint())
	lines := func() int {
		b, _ := os.ReadFile(jpath)
		return bytes.Count(b, []byte("\n"))
	}
	// kill at several moments: at start-up, then once the journal holds the
	// header plus 1, 3 and 5 finished entries
	for _, wait := range []int{0, 2, 4, 6} {
		cmd := testexec.Self("-test.run=^$")
		cmd.Env = append(os.Environ(), "KTUNE_TUNER_CHILD="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		if wait == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		for wait > 0 && lines() < wait && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("child stderr: %s", stderr.String())
		}
		if _, err := os.Stat(path); err == nil { // finished before the kill
			if _, err := profile.Read(path); err != nil {
				t.Fatalf("profile after a kill: %v", err)
			}
		}
	}
	var log bytes.Buffer
	opt := killOpts(dir)
	opt.Log = &log
	p, got, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if got != path || len(p.Entries) != len(opt.Workloads) {
		t.Fatalf("profile %s with %d entries, want %s with %d", got, len(p.Entries), path, len(opt.Workloads))
	}
	if lp, warns := profile.Load(path); lp == nil || len(warns) > 0 {
		t.Fatalf("final profile: %v", warns)
	}
	t.Logf("%s", strings.TrimSpace(log.String()))
	// the wall time counts the killed runs' tuning too (the journal's)
	var tuned float64
	for _, e := range p.Entries {
		if e.TuneSeconds <= 0 {
			t.Errorf("%s: tune_seconds %v", e.Key(), e.TuneSeconds)
		}
		tuned += e.TuneSeconds
	}
	if p.Stats.WallSeconds < tuned {
		t.Errorf("wall_seconds %.3f, less than the entries' %.3f s of tuning: the resumed part alone", p.Stats.WallSeconds, tuned)
	}
	var resumed, total int
	if _, err := fmt.Sscanf(log.String(), "resuming: %d of %d", &resumed, &total); err != nil || resumed < 5 || total != 8 {
		t.Errorf("the last run did not resume from the ≥ 5 entries the killed runs finished: %q", log.String())
	}
	if _, err := os.Stat(profile.JournalPath(dir, cpu.Fingerprint())); !os.IsNotExist(err) {
		t.Errorf("journal left after a finished run: %v", err)
	}
}

func TestWorkloadsKimi(t *testing.T) {
	full := Workloads(arch.Kimi48B(), FullClasses, false)
	quick := Workloads(arch.Kimi48B(), QuickClasses, true)
	ops := map[string]int{}
	for _, w := range full {
		ops[w.Op]++
		if op := kernel.LookupOp(w.Op); op == nil || op.Check(w.Shape) != nil {
			t.Errorf("%s %s: not accepted", w.Op, w.Shape)
		}
	}
	for _, op := range []string{"gemm.gemv", "gemm.gemm", "gemm.gateup", "kda.decode", "kda.prefill", "mla.decode", "mla.prefill", "moe.block", "norm.rmsnorm"} {
		if ops[op] == 0 {
			t.Errorf("no workload for %s", op)
		}
	}
	if len(quick) >= len(full) || len(quick) == 0 {
		t.Errorf("quick %d workloads, full %d", len(quick), len(full))
	}
	if ws, err := FilterOps(full, "kda,mla.decode"); err != nil || len(ws) != ops["kda.decode"]+ops["kda.prefill"]+ops["mla.decode"] {
		t.Errorf("FilterOps: %d %v", len(ws), err)
	}
	if _, err := FilterOps(full, "nosuch"); err == nil {
		t.Error("FilterOps accepted an unknown op")
	}
}

// TestVerifyShapes: every workload's verification shape is accepted by
// every candidate, and runs every configuration the timed shape runs —
// the timed shape itself, except where a family declares a smaller one
// with the same panels, chunks and context splits.
func TestVerifyShapes(t *testing.T) {
	for _, w := range Workloads(arch.Kimi48B(), FullClasses, false) {
		s, v := w.Shape, w.VerifyShape()
		op := kernel.LookupOp(w.Op)
		if err := op.Check(v); err != nil {
			t.Errorf("%s %s: verification shape %s: %v", w.Op, s, v, err)
		}
		for _, c := range kernel.Candidates(w.Op, w.DType, kernel.DefaultClasses) {
			if err := c.Validate(v, c.DefaultConfig(v, 2)); err != nil {
				t.Errorf("%s %s: verification shape %s rejected: %v", c.ID(), s, v, err)
			}
		}
		if v.String() == s.String() {
			continue
		}
		switch w.Op {
		case "mla.decode": // every split (≤ 8) and key block (≤ 128) edge where s has it
			for _, vv := range kernel.Variants(w.Op) {
				for _, split := range paramValues(vv, "split", 1) {
					for _, kb := range paramValues(vv, "kb", 1) {
						if 1024%(split*kb) != 0 {
							t.Errorf("%s: split %d × kb %d does not divide 1024: verifyDecode moves its edges", vv.ID(), split, kb)
						}
					}
				}
			}
			if v.Get("c")%1024 != s.Get("c")%1024 || v.Get("c") < 8*4096 || v.With("c", 0).String() != s.With("c", 0).String() {
				t.Errorf("%s: %s checked at %s", w.Op, s, v)
			}
		case "mla.prefill": // the same tokens and widths, every key block (≤ 128) edge of the cached prefix
			for _, vv := range kernel.Variants(w.Op) {
				for _, kb := range paramValues(vv, "kb", 1) {
					if 512%kb != 0 {
						t.Errorf("%s: kb %d does not divide 512: verifyPrefill moves its edges", vv.ID(), kb)
					}
				}
			}
			if v.Get("p")%512 != s.Get("p")%512 || v.Get("p") < 512 || v.With("p", 0).String() != s.With("p", 0).String() {
				t.Errorf("%s: %s checked at %s", w.Op, s, v)
			}
		case "moe.block": // the same expert matrices and top-k, tokens per expert kept
			same := v.Get("c") == s.Get("c") && v.Get("i") == s.Get("i") && v.Get("k") == s.Get("k")
			per := func(x kernel.Shape) float64 { return float64(x.Get("n")*x.Get("k")) / float64(x.Get("e")) }
			if !same || (s.Get("n") > 8 && per(v) < per(s)) || (s.Get("n") <= 8 && v.Get("n") != s.Get("n")) {
				t.Errorf("%s: %s checked at %s", w.Op, s, v)
			}
		default:
			t.Errorf("%s: %s checked at a smaller shape %s; it declares none", w.Op, s, v)
		}
	}
}

func paramValues(v *kernel.Variant, name string, def int) []int {
	if p := v.Param(name); p != nil {
		return p.Values
	}
	return []int{def}
}

// TestMemPolicyFakeTopology drives the NUMA step with a fake 2-node
// topology: every policy is tried (on fresh problems) and one is recorded;
// on one node nothing is tried.
func TestMemPolicyFakeTopology(t *testing.T) {
	for _, nodes := range [][]cpu.Node{{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}}, {{ID: 0, CPUs: []int{0, 1}}}} {
		var applied []string
		opt := quickOpts(t, t.TempDir())
		opt.Threads = []int{2}
		opt.Nodes = nodes
		opt.SetMemPolicy = func(p pool.MemPolicy, n []cpu.Node) error { applied = append(applied, p.String()); return nil }
		p, _, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		e := p.Entries[0]
		if len(nodes) == 1 {
			if len(applied) != 0 || e.MemPolicy != "" || !strings.Contains(p.NUMA, "one node") {
				t.Errorf("one node: applied %v, entry policy %q, note %q", applied, e.MemPolicy, p.NUMA)
			}
			continue
		}
		if strings.Join(applied, ",") != "local,interleave,bind,local" {
			t.Errorf("policies applied %v, want each then local restored", applied)
		}
		if _, err := pool.ParseMemPolicy(e.MemPolicy); err != nil {
			t.Errorf("entry policy %q: %v", e.MemPolicy, err)
		}
	}
}

const offgridOp = "tunetest.offgrid"

// fixedProblem is the synthetic ops' problem that does not depend on the
// seed: n inputs i%5 − 2 and n outputs.
func fixedProblem(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	n := s.Get("n")
	p := &workProblem{s: s, x: make([]float32, n), y: make([]float32, n)}
	for i := range p.x {
		p.x[i] = float32(i%5) - 2
	}
	return p, nil
}

func init() {
	kernel.RegisterOp(&kernel.Op{Name: offgridOp, ShapeKeys: []string{"n"}, DTypes: []kernel.DType{kernel.F32},
		NewProblem: fixedProblem,
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			return kernel.Cost{FLOPs: float64(s.Get("n")), Bytes: 8 * float64(s.Get("n"))}
		},
	})
	for _, v := range []struct {
		name string
		prio int
		ref  bool
	}{{"reference", 0, true}, {"offgrid", 10, false}} {
		// single-threaded: at a budget of 2 threads the space is empty,
		// but the untuned default is still timed (at 1 thread)
		kernel.Register(&kernel.Variant{Op: offgridOp, Name: v.name, Priority: v.prio, Reference: v.ref,
			DTypes: []kernel.DType{kernel.F32}, Class: kernel.ClassF32,
			Params: []kernel.Param{{Name: "tile", Values: []int{1, 2}, Default: 2}},
			New: func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				return workInst{p.(*workProblem), 0, 2}, nil
			}})
	}
}

// TestCandidateCount: every measured candidate is counted in the space,
// also a default timed outside it (a single-threaded op at a 2-thread
// budget has an empty space; a run printed "8 of 6 candidates measured").
func TestCandidateCount(t *testing.T) {
	opt := quickOpts(t, t.TempDir())
	opt.Threads = []int{1, 2}
	opt.Workloads = []Workload{{Op: offgridOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64), ShapeClass: "decode-1"}}
	p, _, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Entries {
		if e.Measured > e.Space || e.Measured < 1 {
			t.Errorf("threads %d: %d of %d measured", e.Threads, e.Measured, e.Space)
		}
	}
	if p.Stats.Measured > p.Stats.Space || p.Stats.Measured != 3 {
		t.Errorf("stats %d of %d measured, want 3 of 3 (tile 1 and 2 at one thread, the default at two)", p.Stats.Measured, p.Stats.Space)
	}
}

// TestPlacementsPerBudget: the vote is per thread budget, PlacementFor
// takes the nearest budget not above the count.
func TestPlacementsPerBudget(t *testing.T) {
	p := &profile.Profile{Entries: []profile.Entry{
		{Op: "a", Threads: 2, Best: profile.Result{Threads: 2, Placement: "smt"}},
		{Op: "b", Threads: 2, Best: profile.Result{Threads: 2, Placement: "smt"}},
		{Op: "c", Threads: 2, Best: profile.Result{Threads: 2, Placement: "compact"}},
		{Op: "a", Threads: 8, Best: profile.Result{Threads: 8, Placement: "pcores"}},
		{Op: "a", Threads: 1, Best: profile.Result{Threads: 1, Placement: "compact"}}, // one thread: no vote
	}}
	votePlacements(p)
	want := []profile.ThreadPlacement{{Threads: 2, Placement: "smt"}, {Threads: 8, Placement: "pcores"}}
	if !reflect.DeepEqual(p.Placements, want) || p.Placement != "pcores" {
		t.Fatalf("placements %+v (%s), want %+v", p.Placements, p.Placement, want)
	}
	for threads, want := range map[int]string{1: "smt", 2: "smt", 5: "smt", 8: "pcores", 64: "pcores"} {
		if got := p.PlacementFor(threads); got != want {
			t.Errorf("PlacementFor(%d) = %s, want %s", threads, got, want)
		}
	}
}

// TestCandidateKeyOfResult: the winner's re-timing finds its candidate
// again by the result's key.
func TestCandidateKeyOfResult(t *testing.T) {
	tu := &tuner{opt: Options{Placements: []pool.Placement{pool.Compact, pool.Spread, pool.SMT}}}
	u := unit{w: Workload{Op: workOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64)}, class: kernel.ClassF32, threads: 2}
	space := tu.space(u)
	if len(space) < 2 {
		t.Fatalf("space of %d", len(space))
	}
	for _, c := range space {
		r := profile.Result{Variant: c.v.Name, Params: c.cfg.Params, Threads: c.cfg.Threads, Placement: c.pl.String()}
		if got := r.CandidateKey(); got != c.key() {
			t.Fatalf("CandidateKey %q, key %q", got, c.key())
		}
	}
}

// planted wraps a real candidate variant so that its output is wrong only
// where corrupt says (past the first KDA chunk, in the last GEMM panel):
// the tuner's check at the workload's verification shape must reject it.
type plantedInst struct {
	in      kernel.Instance
	p       kernel.Problem
	corrupt func(out []float32, s kernel.Shape)
}

func (pi plantedInst) Run() {
	pi.in.Run()
	pi.corrupt(pi.p.Output(), pi.p.Shape())
}

func planted(v *kernel.Variant, corrupt func(out []float32, s kernel.Shape)) *kernel.Variant {
	w := *v
	w.Name = v.Name + "_planted"
	w.New = func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
		in, err := v.New(p, cfg)
		return plantedInst{in, p, corrupt}, err
	}
	return &w
}

func TestGateRejectsPlanted(t *testing.T) {
	if testing.Short() {
		t.Skip("references at the tuned shapes take seconds")
	}
	find := func(op, dt, class string) Workload {
		for _, w := range Workloads(arch.Kimi48B(), FullClasses, false) {
			if w.Op == op && string(w.DType) == dt && w.ShapeClass == class {
				return w
			}
		}
		t.Fatalf("no workload %s %s %s", op, dt, class)
		return Workload{}
	}
	cases := []struct {
		name    string
		w       Workload
		corrupt func(out []float32, s kernel.Shape)
	}{
		// every token past the first 64 (one chunk) 5% off; the state left alone
		{"kda wrong past the first chunk", find("kda.prefill", "f32", "prefill-512"), func(out []float32, s kernel.Shape) {
			row := s.Get("h") * s.Get("dv")
			for i := 64 * row; i < s.Get("t")*row; i++ {
				out[i] *= 1.05
			}
		}},
		// the last panel of 16 output columns never written
		{"gemm skips the last panel", find("gemm.gemm", "q8", "prefill-64"), func(out []float32, s kernel.Shape) {
			m, n := s.Get("m"), s.Get("n")
			for r := 0; r < m; r++ {
				clear(out[r*n+n-16 : (r+1)*n])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tu := &tuner{opt: Options{Seed: 1}, refs: map[string][]float32{}, verified: map[string]error{}}
			v := kernel.Candidates(c.w.Op, c.w.DType, kernel.DefaultClasses)[0]
			good := candidate{v: v, cfg: v.DefaultConfig(c.w.Shape, 1)}
			if err := tu.gate(c.w, good); err != nil {
				t.Fatalf("%s fails its own check: %v", v.ID(), err)
			}
			bad := candidate{v: planted(v, c.corrupt), cfg: good.cfg}
			err := tu.gate(c.w, bad)
			if err == nil {
				t.Fatalf("%s at %s (verified at %s): the planted error passed", bad.v.ID(), c.w.Shape, c.w.VerifyShape())
			}
			t.Logf("rejected: %v", err)
		})
	}
}

// TestMeasureResets: every sample starts from reset problems (a stateful
// op's timing must not run on a state drifted by every run before it).
func TestMeasureResets(t *testing.T) {
	p := &countProblem{}
	m := MeasureOptions{SampleTime: 200 * time.Microsecond, Samples: 6, Noisy: 10}
	tm := m.measure([]kernel.Instance{countInst{p}}, []kernel.Problem{p}, 0)
	if p.resets < tm.n+1 {
		t.Errorf("%d resets for %d samples and a warm-up", p.resets, tm.n)
	}
	if p.maxSteps > p.maxRuns {
		t.Errorf("a sample ran on a state %d steps old, at most %d runs per sample", p.maxSteps, p.maxRuns)
	}
}

type countProblem struct {
	steps, maxSteps, maxRuns, runs, resets int
}

func (p *countProblem) Shape() kernel.Shape { return nil }
func (p *countProblem) DType() kernel.DType { return kernel.F32 }
func (p *countProblem) Reset()              { p.resets++; p.steps, p.runs = 0, 0 }
func (p *countProblem) Output() []float32   { return nil }

type countInst struct{ p *countProblem }

func (in countInst) Run() {
	in.p.steps++
	in.p.runs++
	in.p.maxSteps = max(in.p.maxSteps, in.p.steps)
	in.p.maxRuns = max(in.p.maxRuns, in.p.runs)
	time.Sleep(20 * time.Microsecond)
}

// TestJournalIdentity: a journal from another ktune build or other
// measuring settings is not resumed; the same one is.
func TestJournalIdentity(t *testing.T) {
	dir := t.TempDir()
	opt := quickOpts(t, t.TempDir())
	p, _, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "j")
	j, _, err := profile.OpenJournal(path, p, "settings A")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Add(p.Entries[0]); err != nil {
		t.Fatal(err)
	}
	j.Close()
	other := *p
	other.KtuneVersion = p.KtuneVersion + "-other"
	for _, c := range []struct {
		name     string
		p        *profile.Profile
		settings string
		want     int
	}{{"same", p, "settings A", 1}, {"other build", &other, "settings A", 0}, {"other settings", p, "settings B", 0}} {
		// each open rewrites the journal with what it kept: reopen a fresh copy
		j, done, err := profile.OpenJournal(path, c.p, c.settings)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		if len(done) != c.want {
			t.Errorf("%s: resumed %d entries, want %d", c.name, len(done), c.want)
		}
		if c.want == 0 { // put the original back
			j, _, _ := profile.OpenJournal(path, p, "settings A")
			j.Add(p.Entries[0])
			j.Close()
		}
	}
}

// TestPrefillClassesAreWhatTheEngineRuns: no prefill class longer than the
// engine's pass (it would be tuned and never used), and that pass tuned.
func TestPrefillClassesAreWhatTheEngineRuns(t *testing.T) {
	if got := slices.Max(FullClasses.Prefill); got != model.DefaultPrefillChunk {
		t.Errorf("longest tuned prefill %d tokens, the engine's pass %d", got, model.DefaultPrefillChunk)
	}
	for _, w := range Workloads(arch.Kimi48B(), FullClasses, false) {
		tokens := map[string]string{"gemm.gemm": "m", "gemm.gateup": "m", "kda.prefill": "t", "mla.prefill": "t", "moe.block": "n", "norm.rmsnorm": "m"}[w.Op]
		if n := w.Shape.Get(tokens); strings.HasPrefix(w.ShapeClass, "prefill") && n > model.DefaultPrefillChunk {
			t.Errorf("%s %s: %s longer than the engine's pass", w.Op, w.ShapeClass, w.Shape)
		}
	}
}

// TestUnrunnableWorkloadIsAnError: a workload whose op is not registered,
// whose dtype the op does not serve or whose shape it refuses stops the
// run with the reason (it was silently dropped).
func TestUnrunnableWorkloadIsAnError(t *testing.T) {
	for _, c := range []struct {
		w    Workload
		want string
	}{
		{Workload{Op: "nosuch.op", DType: kernel.F32, Shape: kernel.MakeShape([]string{"n"}, 64)}, "not registered"},
		{Workload{Op: workOp, DType: kernel.Q8, Shape: kernel.MakeShape([]string{"n"}, 64)}, "serves no q8"},
		{Workload{Op: workOp, DType: kernel.F32, Shape: kernel.MakeShape([]string{"m"}, 64)}, "want keys n"},
	} {
		opt := quickOpts(t, t.TempDir())
		opt.Workloads = []Workload{c.w}
		if _, _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s %s: error %v, want %q", c.w.Op, c.w.DType, c.w.Shape, err, c.want)
		}
	}
	if err := CheckWorkloads(Workloads(arch.Kimi48B(), FullClasses, false)); err != nil {
		t.Errorf("the families' own workloads: %v", err)
	}
}

// TestCrossoverIsTheLargestDecodeClass: Linear looks M ≤ gemm.Crossover up
// as the profile's gemm.gemv (decode) entries, so the tuner must tune gemv
// up to exactly that M.
func TestCrossoverIsTheLargestDecodeClass(t *testing.T) {
	if got := slices.Max(FullClasses.Decode); got != gemm.Crossover {
		t.Errorf("decode classes end at %d tokens, gemm.Crossover is %d", got, gemm.Crossover)
	}
}

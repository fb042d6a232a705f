package tuner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
)

// Options configure a tuning run.
type Options struct {
	Config    *arch.Config // the model; nil: arch.Kimi48B()
	ModelName string
	// Classes are the accuracy classes candidates may belong to (nil:
	// kernel.DefaultClasses).
	Classes []kernel.Class
	// Threads are the thread budgets tuned (nil: DefaultThreads).
	Threads []int
	// Placements tried for multi-threaded candidates (nil: those worth
	// timing on this machine at each thread count, pool.Placements:
	// compact, plus spread with several NUMA nodes, smt with SMT siblings,
	// pcores on hybrid processors). One thread runs compact only.
	Placements []pool.Placement
	Quick      bool
	// Budget bounds the wall time (0: none); Dir is where the profile and
	// the resume journal go; Only re-tunes some ops of an existing profile.
	Budget time.Duration
	Dir    string
	Only   string
	Seed   uint64
	// Workloads replaces the model's workloads (tests).
	Workloads []Workload
	Measure   MeasureOptions
	// Ceilings are embedded in the profile (roofline JSON).
	Ceilings json.RawMessage
	// Progress receives events; Log receives plain lines (nil: none).
	Progress func(Event)
	Log      io.Writer
	// ExhaustiveMax is the largest space measured exhaustively (0: 48).
	ExhaustiveMax int
	// Nodes is the NUMA topology (nil: detected); with several nodes each
	// multi-threaded entry's best candidate is re-timed under every memory
	// policy (pool.MemPolicies) on freshly allocated problems.
	Nodes []cpu.Node
	// SetMemPolicy applies a policy (nil: pool.SetMemPolicy; tests fake it).
	SetMemPolicy func(p pool.MemPolicy, nodes []cpu.Node) error
	// SampleLoad samples the machine's CPU use around each confirmation
	// (nil: cpu.SampleLoad; tests fake it): rounds during which other
	// processes took more than cpu.BusyThreshold CPUs keep the default.
	SampleLoad func() (cpu.Load, error)
}

// Event reports progress: unit Done of Total finished (or started when
// Entry is nil).
type Event struct {
	Done, Total int
	What        string
	Entry       *profile.Entry
}

// unit is one entry to tune: a workload in one class at one thread budget.
type unit struct {
	w       Workload
	class   kernel.Class
	threads int
}

func (u unit) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", u.w.Op, u.w.DType, u.class, u.w.Shape, u.threads)
}

// journalSettings names what decides how entries are measured (a journal
// of other settings is not resumed).
func (opt *Options) journalSettings() string {
	m := opt.Measure
	return fmt.Sprintf("quick=%v seed=%d sample=%v samples=%d noisy=%g stop=%g cold=%d confirm=%d gain=%g", opt.Quick, opt.Seed,
		m.SampleTime, m.Samples, m.Noisy, m.StopRatio, m.ColdBytes, m.confirmRounds(), m.minGain())
}

// DefaultThreads is the machine's default thread list
// (cpu.Topology.DefaultThreads: 1, 2, 4, … below the usable CPUs, the
// performance cores' and the physical cores' counts, and the usable CPUs).
func DefaultThreads() []int { return cpu.Get().Topology.DefaultThreads() }

// Run tunes every workload and writes the profile into opt.Dir
// (profile.FileName(fingerprint)); it resumes from the journal an interrupted run
// left there and returns the profile and its path.
func Run(ctx context.Context, opt Options) (*profile.Profile, string, error) {
	start := time.Now()
	if opt.Config == nil {
		opt.Config, opt.ModelName = arch.Kimi48B(), "Kimi-Linear-48B-A3B"
	}
	if len(opt.Classes) == 0 {
		opt.Classes = kernel.DefaultClasses
	}
	if len(opt.Threads) == 0 {
		opt.Threads = DefaultThreads()
	}
	if opt.Measure.Samples == 0 {
		opt.Measure = DefaultMeasure
		if opt.Quick {
			opt.Measure = QuickMeasure
		}
	}
	// cold weights must not fit the caches: at least 4× every L3 the
	// usable CPUs reach (a 2-socket server or a big-L3 part holds hundreds
	// of MiB), within a quarter of the memory
	if c := cpu.Get().Cache; opt.Measure.ColdBytes > 0 {
		want := max(opt.Measure.ColdBytes, 4*max(c.L3, c.L3Total))
		if m := cpu.Get().MemBytes; m > 0 {
			want = min(want, max(m/4, opt.Measure.ColdBytes))
		}
		opt.Measure.ColdBytes = want
	}
	if opt.ExhaustiveMax == 0 {
		opt.ExhaustiveMax = 48
	}
	if opt.Nodes == nil {
		opt.Nodes = cpu.Get().NUMA
	}
	if opt.SetMemPolicy == nil {
		opt.SetMemPolicy = pool.SetMemPolicy
	}
	if opt.Dir == "" {
		opt.Dir = profile.DefaultDir()
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, "", err
	}
	ws := opt.Workloads
	if ws == nil {
		sc := FullClasses
		if opt.Quick {
			sc = QuickClasses
		}
		ws = Workloads(opt.Config, sc, opt.Quick)
	}
	ws, err := FilterOps(ws, opt.Only)
	if err != nil {
		return nil, "", err
	}
	if err := CheckWorkloads(ws); err != nil {
		return nil, "", err
	}
	fp := cpu.Fingerprint()
	path := filepath.Join(opt.Dir, profile.FileName(fp))
	prof := profile.NewProfile(opt.ModelName, opt.Classes)
	prof.Ceilings = opt.Ceilings
	prof.NUMA = numaNote(opt.Nodes)
	if opt.Only != "" { // re-tune part of an existing profile
		if old, warns := profile.Load(path); old != nil {
			prof.Entries = old.Entries
			if prof.Ceilings == nil {
				prof.Ceilings = old.Ceilings
			}
		} else if _, err := os.Stat(path); os.IsNotExist(err) {
			logf(opt.Log, "no profile in %s yet: --only %s writes one with just those ops (the others run their defaults)", opt.Dir, opt.Only)
		} else {
			logf(opt.Log, "the existing profile is not used (%s): --only %s writes one with just those ops", strings.Join(warns, "; "), opt.Only)
		}
	}
	j, done, err := profile.OpenJournal(profile.JournalPath(opt.Dir, fp), prof, opt.journalSettings())
	if err != nil {
		return nil, "", err
	}
	defer j.Close()

	units := planUnits(ws, opt.Classes, opt.Threads)
	if opt.Only != "" {
		for _, u := range units { // the re-tuned ops start afresh
			if _, ok := done[u.key()]; !ok {
				drop(prof, u.key())
			}
		}
	}
	t := &tuner{opt: opt, refs: map[string][]float32{}, verified: map[string]error{}, chosen: map[string]candidate{},
		rng: rand.New(rand.NewPCG(opt.Seed, 7))}
	var deadline time.Time
	if opt.Budget > 0 {
		deadline = start.Add(opt.Budget)
	}
	todo := 0
	for _, u := range units {
		if _, ok := done[u.key()]; !ok {
			todo++
		}
	}
	if len(done) > 0 {
		logf(opt.Log, "resuming: %d of %d entries already measured (%s)", len(units)-todo, len(units), j.Path())
	}
	finished := len(units) - todo
	var resumed float64 // the interrupted runs' tuning time, from the journal
	for _, u := range units {
		if e, ok := done[u.key()]; ok {
			resumed += e.TuneSeconds
		}
	}
	var cur *problems
	var overrun time.Duration // mean time a unit ran past its slice
	overruns := 0
	for _, u := range units {
		if e, ok := done[u.key()]; ok {
			prof.Put(e)
			t.noteChoice(u, e.Best)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		if opt.Progress != nil {
			opt.Progress(Event{Done: finished, Total: len(units), What: unitName(u)})
		}
		var slice time.Duration
		if !deadline.IsZero() { // past the deadline: the mandatory first point only
			// a unit overruns its slice by the candidate it was timing when
			// the slice ran out (and by the winner's re-timing): take the
			// average overrun off the next slices so the run ends on time
			slice = max(time.Until(deadline)/time.Duration(max(todo, 1))-overrun, time.Nanosecond)
		}
		unitStart := time.Now()
		if cur == nil || !cur.matches(u.w) {
			prev := cur
			if cur, err = newProblems(u.w, opt.Measure.ColdBytes, prev); err != nil {
				return nil, "", err
			}
			prev.release()
		}
		e, err := t.tuneUnit(u, cur, slice)
		if err != nil {
			return nil, "", err
		}
		if err := t.tuneMemPolicy(u, &e); err != nil {
			return nil, "", err
		}
		e.TuneSeconds = time.Since(unitStart).Seconds()
		prof.Put(e)
		if err := j.Add(e); err != nil {
			return nil, "", err
		}
		if slice > 0 {
			ran := time.Since(unitStart)
			overrun = (overrun*time.Duration(overruns) + max(ran-slice, 0)) / time.Duration(overruns+1)
			overruns = min(overruns+1, 20) // a running mean of the recent units
		}
		todo--
		finished++
		if opt.Progress != nil {
			opt.Progress(Event{Done: finished, Total: len(units), What: unitName(u), Entry: &e})
		}
	}
	cur.release()
	votePlacements(prof)
	prof.Stats = profile.Stats{WallSeconds: time.Since(start).Seconds() + resumed, Budget: budgetString(opt.Budget)}
	for _, e := range prof.Entries {
		prof.Stats.Space += e.Space
		prof.Stats.Measured += e.Measured
		prof.Stats.Rejected += len(e.Rejected)
	}
	prof.Sort()
	if err := prof.Write(path); err != nil {
		return nil, "", err
	}
	j.Remove()
	return prof, path, nil
}

func budgetString(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.Round(time.Second).String() // 9m6s, not 9m6.240093222s
}

func unitName(u unit) string {
	return fmt.Sprintf("%s %s %s %s t=%d", u.w.Op, u.w.DType, u.class, u.w.ShapeClass, u.threads)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

func drop(p *profile.Profile, key string) {
	p.Entries = slices.DeleteFunc(p.Entries, func(e profile.Entry) bool { return e.Key() == key })
}

// votePlacements records, per thread budget, the placement that won most
// multi-threaded entries of it (Profile.Placements), and as Placement the
// one of the largest budget.
func votePlacements(p *profile.Profile) {
	votes := map[int]map[string]int{}
	for _, e := range p.Entries {
		if e.Best.Threads > 1 && e.Best.Placement != "" {
			if votes[e.Threads] == nil {
				votes[e.Threads] = map[string]int{}
			}
			votes[e.Threads][e.Best.Placement]++
		}
	}
	p.Placements, p.Placement = nil, ""
	for t, vs := range votes {
		best, n := "", 0
		for _, pl := range pool.AllPlacements() {
			if vs[pl.String()] > n {
				best, n = pl.String(), vs[pl.String()]
			}
		}
		p.Placements = append(p.Placements, profile.ThreadPlacement{Threads: t, Placement: best})
	}
	sort.Slice(p.Placements, func(a, b int) bool { return p.Placements[a].Threads < p.Placements[b].Threads })
	if n := len(p.Placements); n > 0 {
		p.Placement = p.Placements[n-1].Placement
	}
}

// placements are the placements timed at a thread count: opt.Placements
// (those that can run it), else the machine's (pool.Placements).
func (t *tuner) placements(threads int) []pool.Placement {
	if len(t.opt.Placements) == 0 {
		info := cpu.Get()
		return pool.Placements(&info.Topology, len(info.NUMA), threads)
	}
	if threads == 1 {
		return t.opt.Placements[:1]
	}
	var out []pool.Placement
	for _, pl := range t.opt.Placements {
		if pool.Default().Fits(pl, threads) {
			out = append(out, pl)
		}
	}
	if len(out) == 0 {
		out = []pool.Placement{pool.Compact}
	}
	return out
}

func numaNote(nodes []cpu.Node) string {
	if n := len(nodes); n > 1 {
		return fmt.Sprintf("%d nodes: memory policy (local, interleave, bind) tuned per multi-threaded entry", n)
	}
	return "one node: memory policy not tuned (nothing to choose)"
}

// planUnits lists what a run measures: each workload in the accuracy
// classes worth tuning, at each thread count. Of the engine's default
// classes (kernel.DefaultClasses) only the class of the engine's default
// variant for the allowed classes is tuned: the engine never runs the
// others' variants unless a profile's choice beats its default, and they
// rarely could: in a full run on an AMX Xeon VM (2026-12-06) the f32
// class's best was slower than the int8act default in 209 of 216 entries
// of the quantized matmuls and MoE blocks, 1.7× at the median, and its
// units took 40% of the run. A class allowed beyond those (--allow bf16act) is
// tuned as asked. A class that has no candidate is left out, and so is one
// whose only candidates are the pure-Go variants beside a class with SIMD
// ones (they never win: e.g. the f32 class of q5 and the K formats, whose
// SIMD kernels are int8act).
func planUnits(ws []Workload, classes []kernel.Class, threads []int) []unit {
	var units []unit
	for _, w := range ws {
		for _, c := range tunedClasses(w, classes) {
			for _, t := range threads {
				units = append(units, unit{w, c, t})
			}
		}
	}
	return units
}

// tunedClasses are the classes planUnits tunes a workload in.
func tunedClasses(w Workload, classes []kernel.Class) []kernel.Class {
	simd := false // a class of w has a candidate other than the pure-Go ones
	for _, c := range classes {
		simd = simd || !pureGoOnly(kernel.Candidates(w.Op, w.DType, []kernel.Class{c}))
	}
	var keep []kernel.Class
	for _, c := range classes {
		cands := kernel.Candidates(w.Op, w.DType, []kernel.Class{c})
		if len(cands) > 0 && !(simd && pureGoOnly(cands)) {
			keep = append(keep, c)
		}
	}
	def := kernel.DefaultAt(w.Op, w.DType, w.Shape, classes...)
	if def == nil || def.Reference || !slices.Contains(keep, def.Class) {
		return keep
	}
	return slices.DeleteFunc(keep, func(c kernel.Class) bool {
		return c != def.Class && slices.Contains(kernel.DefaultClasses, c)
	})
}

// pureGoOnly reports whether every candidate is a pure-Go variant
// (generic, generic_int8, generic_chunk …).
func pureGoOnly(cands []*kernel.Variant) bool {
	for _, v := range cands {
		if !strings.HasPrefix(v.Name, "generic") {
			return false
		}
	}
	return true
}

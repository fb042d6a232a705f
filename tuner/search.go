package tuner

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
)

type tuner struct {
	opt      Options
	refs     map[string][]float32 // reference outputs by (op, dtype, verification shape, seed)
	verified map[string]error     // gate verdicts by candidate and verification shape
	// the last verification problem and its key: the candidates of one
	// workload are checked on one problem (reset before each run), built once
	gateKey  string
	gateProb kernel.Problem
	rng      *rand.Rand
	// chosen is each (op, dtype, class, shape)'s choice at the largest
	// thread budget tuned so far: the fewer-threads challenger of the next
	// budget (units run in increasing budgets).
	chosen map[string]candidate
}

// candidate is one point of a unit's search space.
type candidate struct {
	v   *kernel.Variant
	cfg kernel.Config
	pl  pool.Placement
}

func (c candidate) key() string {
	return profile.CandidateKey(c.v.Name, c.cfg.Params, c.cfg.Threads, c.pl)
}

// problems holds a workload's problem copies: one, or for cold workloads
// enough distinct copies that their weights exceed the caches.
type problems struct {
	w    Workload
	list []kernel.Problem
}

func (p *problems) matches(w Workload) bool {
	return p != nil && p.w.Op == w.Op && p.w.DType == w.DType && p.w.Shape.String() == w.Shape.String() && p.w.Cold == w.Cold
}

func (p *problems) release() {
	if p != nil {
		for _, q := range p.list {
			if c, ok := q.(interface{ Close() }); ok {
				c.Close()
			}
		}
		p.list = nil
	}
}

// drawn is how many of a workload's copies newProblems draws from seeds
// when its problems are kernel.Copiers.
const drawn = 2

// newProblems builds w's problems: those of prev (the last workload's)
// reshaped where they are kernel.Reshapers of w's op and dtype that hold
// the weights w needs, else drawn from seeds; for cold workloads, copies
// past the first two are copies (kernel.Copier) of them.
func newProblems(w Workload, coldBytes int64, prev *problems) (*problems, error) {
	op := kernel.LookupOp(w.Op)
	if op == nil {
		return nil, fmt.Errorf("tuner: op %s not registered", w.Op)
	}
	copies := 1
	if w.Cold && op.Cost != nil {
		if b := op.Cost(w.Shape, w.DType).Bytes; b > 0 {
			copies = int(min(max(float64(coldBytes)/b, 1), 512))
		}
	}
	ps := &problems{w: w}
	if prev != nil && prev.w.Op == w.Op && prev.w.DType == w.DType && prev.w.Cold == w.Cold {
		for i := 0; i < copies && i < len(prev.list); i++ {
			r, ok := prev.list[i].(kernel.Reshaper)
			if !ok {
				break
			}
			p, ok := r.Reshape(w.Shape, uint64(1000+i))
			if !ok {
				break
			}
			ps.list = append(ps.list, p)
		}
	}
	if len(ps.list) == 0 && prev != nil {
		// nothing shared: the last workload's memory goes before this one's
		// is drawn (a MoE block at full width is GiBs; the heap would
		// otherwise grow to hold both)
		prev.release()
		runtime.GC()
	}
	for i := len(ps.list); i < copies; i++ {
		// two seeds drawn (a family may vary the data's form by seed,
		// Q4's min by its parity), the rest copies of them
		if i >= drawn {
			if c, ok := ps.list[i%drawn].(kernel.Copier); ok {
				ps.list = append(ps.list, c.Copy())
				continue
			}
		}
		p, err := op.NewProblem(w.Shape, w.DType, uint64(1000+i))
		if err != nil {
			return nil, fmt.Errorf("tuner: %s at %s: %v", w.Op, w.Shape, err)
		}
		ps.list = append(ps.list, p)
	}
	return ps, nil
}

// space lists a unit's candidates: each variant of the class, each valid
// parameter combination, the unit's thread count (single-threaded variants
// only at one thread), each placement worth timing at that count.
func (t *tuner) space(u unit) []candidate {
	var out []candidate
	pls := t.placements(u.threads)
	for _, v := range kernel.Candidates(u.w.Op, u.w.DType, []kernel.Class{u.class}) {
		if !v.Threaded && u.threads > 1 {
			continue
		}
		for _, vals := range v.Space(u.w.Shape) {
			for _, pl := range pls {
				out = append(out, candidate{v, kernel.Config{Threads: u.threads, Params: vals}, pl})
			}
		}
	}
	return out
}

// tuneUnit searches one unit within slice (0: no limit): the default and
// every variant's analytic default first, then everything when the space is
// small, else a hill climb from the best few and random points.
func (t *tuner) tuneUnit(u unit, ps *problems, slice time.Duration) (profile.Entry, error) {
	e := profile.Entry{Op: u.w.Op, DType: u.w.DType, Class: u.class, ShapeClass: u.w.ShapeClass, Label: u.w.Label,
		Shape: u.w.Shape, Threads: u.threads}
	if u.w.Cold {
		e.Mem = "dram"
	}
	start := t.opt.Measure.now()
	// the search stops where the slice left is what confirming its
	// winner takes (reserve: the rounds of the default and one
	// challenger, each about the default's first timing); past the whole
	// slice (late) the confirmation is skipped and the default stays
	var reserve time.Duration
	late := func() bool { return slice > 0 && t.opt.Measure.now().Sub(start) > slice }
	over := func() bool { return slice > 0 && t.opt.Measure.now().Sub(start) > slice-reserve }
	space := t.space(u)
	e.Space = len(space)
	inSpace := map[string]bool{}
	for _, c := range space {
		inSpace[c.key()] = true
	}
	results := map[string]profile.Result{}
	var best *profile.Result
	try := func(c candidate) {
		if _, seen := results[c.key()]; seen {
			return
		}
		if !inSpace[c.key()] { // a default outside the space is one more point of it
			inSpace[c.key()] = true
			e.Space++
		}
		if err := t.gate(u.w, c); err != nil {
			e.Rejected = append(e.Rejected, profile.Reject{Variant: c.v.Name, Params: c.cfg.Params, Error: err.Error()})
			results[c.key()] = profile.Result{}
			return
		}
		bestMedian := 0.0
		if best != nil {
			bestMedian = best.Median
		}
		r, err := t.time(u.w, ps, c, bestMedian)
		if err != nil {
			e.Rejected = append(e.Rejected, profile.Reject{Variant: c.v.Name, Params: c.cfg.Params, Error: err.Error()})
			results[c.key()] = profile.Result{}
			return
		}
		results[c.key()] = r
		e.Measured++
		if !r.Stopped && (best == nil || r.Median < best.Median) {
			rr := r
			best = &rr
		}
	}
	// the untuned default: what the engine runs without a profile (its
	// default variant at the shape for the run's classes — the family's
	// rule, kernel.DefaultAt —, of whichever class, the
	// variant's default configuration, the pool's initial placement), the
	// base every choice is confirmed against
	var dc *candidate
	if dv := kernel.DefaultAt(u.w.Op, u.w.DType, u.w.Shape, t.opt.Classes...); dv != nil && !dv.Reference {
		dc = &candidate{dv, dv.DefaultConfig(u.w.Shape, u.threads), defaultPlacement(u.threads)}
		t0 := t.opt.Measure.now()
		if dv.Class == u.class {
			try(*dc)
			if r, ok := results[dc.key()]; ok && r.Median > 0 {
				e.Default = &r
			}
		} else if r, err := t.timeChecked(u.w, ps, *dc); err == nil {
			e.Default = &r
		}
		reserve = time.Duration(2*t.opt.Measure.confirmRounds()) * t.opt.Measure.now().Sub(t0)
		if e.Default == nil {
			dc = nil
		}
	}
	// analytic seeds: every variant's default configuration
	var seeds []candidate
	for _, c := range space {
		if slices.IndexFunc(seeds, func(s candidate) bool { return s.v == c.v }) >= 0 {
			continue
		}
		d := c.v.DefaultConfig(u.w.Shape, u.threads)
		seeds = append(seeds, candidate{c.v, d, c.pl})
	}
	for i, c := range seeds {
		if i == 0 || best == nil || !over() { // at least one measured point
			try(c)
		}
	}
	if len(space) <= t.opt.ExhaustiveMax {
		for _, c := range space {
			if over() {
				break
			}
			try(c)
		}
	} else {
		// hill climb from the best three measured points: move one
		// parameter to a neighbouring value (or change placement)
		for round := 0; !over(); round++ {
			top := t.top(results, space, 3)
			improved := false
			for _, c := range top {
				for _, n := range neighbours(c, space) {
					if over() {
						break
					}
					prev := best
					try(n)
					if best != prev {
						improved = true
					}
				}
			}
			if !improved {
				break
			}
		}
		// random points with what is left
		for _, i := range t.rng.Perm(len(space)) {
			if over() || slice <= 0 {
				break
			}
			try(space[i])
		}
	}
	if best == nil {
		return e, fmt.Errorf("tuner: %s: no candidate passed the correctness gate (%d rejected; first: %v)", unitName(u), len(e.Rejected), firstReject(e.Rejected))
	}
	e.Best = *best
	// The winner's figure is timed again: the fastest of many noisy
	// medians is biased low (on a shared VM the best of 30 candidates'
	// medians beat the DRAM read ceiling by half), so the figure reported
	// is a fresh measurement of the chosen candidate, not the one that
	// chose it.
	var winner candidate
	for _, c := range slices.Concat(space, seeds) {
		if c.key() == best.CandidateKey() {
			winner = c
			break
		}
	}
	if dc != nil && dc.key() == best.CandidateKey() {
		winner = *dc
	}
	// The choice must beat the untuned default, and a smaller thread
	// budget's choice, measured alternately (tuner.confirm), whose rounds
	// give the figures; with nothing to confirm, the winner is re-timed.
	if winner.v != nil {
		if err := t.confirmUnit(u, ps, &e, dc, winner, len(results) > 1, late()); err != nil {
			return e, err
		}
	}
	var rest []profile.Result
	for _, r := range results {
		if r.Median > 0 && r.CandidateKey() != e.Best.CandidateKey() {
			rest = append(rest, r)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Median < rest[j].Median })
	e.RunnersUp = rest[:min(len(rest), 5)]
	return e, nil
}

func firstReject(r []profile.Reject) string {
	if len(r) == 0 {
		return "none"
	}
	return r[0].Variant + ": " + r[0].Error
}

// top returns the n fastest measured candidates of the space.
func (t *tuner) top(results map[string]profile.Result, space []candidate, n int) []candidate {
	var ms []candidate
	for _, c := range space {
		if r, ok := results[c.key()]; ok && r.Median > 0 && !r.Stopped {
			ms = append(ms, c)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return results[ms[i].key()].Median < results[ms[j].key()].Median })
	return ms[:min(n, len(ms))]
}

// neighbours are the space's points that differ from c in one parameter by
// one step of its value list, or in placement only.
func neighbours(c candidate, space []candidate) []candidate {
	var out []candidate
	for _, o := range space {
		if o.v != c.v {
			continue
		}
		diff, ok := 0, true
		for _, p := range c.v.Params {
			a, b := slices.Index(p.Values, c.cfg.Params[p.Name]), slices.Index(p.Values, o.cfg.Params[p.Name])
			switch d := a - b; {
			case d == 0:
			case d == 1 || d == -1:
				diff++
			default:
				ok = false
			}
		}
		if o.pl != c.pl {
			diff++
		}
		if ok && diff == 1 {
			out = append(out, o)
		}
	}
	return out
}

// defaultPlacement is the thread placement the engine runs without a
// profile: the pool's initial one (pool.Initial) for several threads;
// one thread runs on the caller alone, timed as Compact like the search's
// one-thread candidates.
func defaultPlacement(threads int) pool.Placement {
	if threads == 1 {
		return pool.Compact
	}
	return pool.Initial
}

// timeChecked gates and times a candidate outside the search (the default
// of another class).
func (t *tuner) timeChecked(w Workload, ps *problems, c candidate) (profile.Result, error) {
	if err := t.gate(w, c); err != nil {
		return profile.Result{}, err
	}
	return t.time(w, ps, c, 0)
}

// time measures a gated candidate on the workload's problems.
func (t *tuner) time(w Workload, ps *problems, c candidate, best float64) (profile.Result, error) {
	pool.Default().SetPlacement(c.pl)
	insts := make([]kernel.Instance, 0, len(ps.list))
	for _, p := range ps.list {
		in, err := c.v.Instantiate(p, c.cfg)
		if err != nil {
			return profile.Result{}, err
		}
		insts = append(insts, in)
	}
	tm := t.opt.Measure.measure(insts, ps.list, best)
	cost := c.v.CostAt(w.Shape, w.DType, c.cfg)
	return profile.Result{Variant: c.v.Name, Params: c.cfg.Params, Threads: c.cfg.Threads, Placement: c.pl.String(),
		Median: tm.median, Lo: tm.lo, Hi: tm.hi, N: tm.n, FLOPs: cost.FLOPs, Bytes: cost.Bytes, Footprint: cost.Footprint,
		Stopped: tm.stopped}, nil
}

// gate compares the candidate's output with the reference's (cached per
// op, dtype, shape and seed) at the class's tolerance.
func (t *tuner) gate(w Workload, c candidate) error {
	s := w.VerifyShape()
	if err := c.v.Validate(s, c.cfg); err != nil {
		// a candidate that cannot run where it is checked is not kept
		return fmt.Errorf("cannot run at its verification shape %s: %v", s, err)
	}
	vkey := c.key() + "|" + s.String()
	if err, ok := t.verified[vkey]; ok {
		return err
	}
	seed := t.opt.Seed + 42
	rkey := fmt.Sprintf("%s|%s|%s|%d", w.Op, w.DType, s, seed)
	op := kernel.LookupOp(w.Op)
	if t.gateKey != rkey {
		t.gateKey, t.gateProb = "", nil // the last one's memory first
		p, err := op.NewProblem(s, w.DType, seed)
		if err != nil {
			return fmt.Errorf("verification problem at %s: %v", s, err)
		}
		t.gateKey, t.gateProb = rkey, p
	}
	want, ok := t.refs[rkey]
	if !ok {
		var err error
		if want, err = kernel.ReferenceOn(op, t.gateProb); err != nil {
			return fmt.Errorf("reference at %s: %v", s, err)
		}
		t.refs[rkey] = want
	}
	pool.Default().SetPlacement(c.pl)
	_, err := kernel.VerifyOn(c.v, t.gateProb, c.cfg, want)
	if err != nil && !strings.Contains(err.Error(), s.String()) {
		err = fmt.Errorf("at %s: %v", s, err)
	}
	t.verified[vkey] = err
	return err
}

// tuneMemPolicy re-times a multi-threaded entry's best candidate under each
// memory policy of a multi-node machine, on problems allocated under that
// policy, and keeps the fastest (recorded in Entry.MemPolicy).
func (t *tuner) tuneMemPolicy(u unit, e *profile.Entry) error {
	pols := pool.MemPolicies(t.opt.Nodes)
	if len(pols) == 0 || u.threads < 2 {
		return nil
	}
	v, err := kernel.Lookup(e.Op + "/" + e.Best.Variant)
	if err != nil {
		return err
	}
	pl, _ := pool.ParsePlacement(e.Best.Placement)
	c := candidate{v, kernel.Config{Threads: e.Best.Threads, Params: e.Best.Params}, pl}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer t.opt.SetMemPolicy(pool.MemLocal, t.opt.Nodes)
	best := -1.0
	for _, p := range pols {
		if err := t.opt.SetMemPolicy(p, t.opt.Nodes); err != nil {
			return fmt.Errorf("tuner: memory policy %v: %v", p, err)
		}
		ps, err := newProblems(u.w, t.opt.Measure.ColdBytes, nil)
		if err != nil {
			return err
		}
		r, err := t.time(u.w, ps, c, 0)
		ps.release()
		if err != nil {
			return err
		}
		if best < 0 || r.Median < best {
			best = r.Median
			e.MemPolicy = p.String()
		}
	}
	return nil
}

package roofline

// Measure: the compute and bandwidth microbenchmarks run over thread
// counts on the default worker pool, and the plateaus found per level.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/pool"
)

// Options control Measure.
type Options struct {
	// Quick measures fewer working sets for less time (under a minute on
	// a 2-core VM); the default is thorough (a few minutes).
	Quick bool
	// Threads are the thread counts (default cpu.Topology.DefaultThreads,
	// within the pool size).
	Threads []int
	// Progress, if set, is called after each measurement.
	Progress func(done, total int, what string)

	// MaxWorkingSet caps the bandwidth sweep (bytes; default the larger
	// of 1 GiB and twice the L3, capped at 4 GiB and a quarter of memory).
	MaxWorkingSet int64
	// MinWorkingSet starts the sweep (default 4 KiB).
	MinWorkingSet int64
	// MinTime is how long each timed repetition runs at least (default
	// 5 ms quick, 20 ms thorough). Tests set it small.
	MinTime time.Duration
	// Reps is the number of timed repetitions, the best kept (default 3
	// quick, 5 thorough).
	Reps int
	// Kinds restricts the bandwidth kinds (default all); Compute restricts
	// the compute ceilings by name (default all that run here).
	Kinds   []string
	Compute []string
}

func (o *Options) defaults(info *cpu.Info) {
	if len(o.Threads) == 0 {
		for _, t := range info.Topology.DefaultThreads() {
			if t <= pool.Default().Size() {
				o.Threads = append(o.Threads, t)
			}
		}
		if len(o.Threads) == 0 {
			o.Threads = []int{1}
		}
	}
	if o.MinWorkingSet <= 0 {
		o.MinWorkingSet = 4 << 10
	}
	if o.MaxWorkingSet <= 0 {
		o.MaxWorkingSet = DefaultMaxWorkingSet(info)
	}
	if o.MinTime <= 0 {
		o.MinTime = 20 * time.Millisecond
		if o.Quick {
			o.MinTime = 5 * time.Millisecond
		}
	}
	if o.Reps <= 0 {
		o.Reps = 5
		if o.Quick {
			o.Reps = 3
		}
	}
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
}

// DefaultThreads is 1, 2, 4, … below n, and n.
func DefaultThreads(n int) []int {
	var ts []int
	for t := 1; t < n; t *= 2 {
		ts = append(ts, t)
	}
	return append(ts, max(n, 1))
}

// DefaultMaxWorkingSet is the largest working set of the sweep: at least
// 1 GiB and twice the L3 (rounded up to a power of two), at most 4 GiB and
// a quarter of the machine's memory.
func DefaultMaxWorkingSet(info *cpu.Info) int64 {
	ws := int64(1 << 30)
	for ws < 2*info.Cache.L3 {
		ws *= 2
	}
	ws = min(ws, 4<<30)
	if info.MemBytes > 0 {
		for ws > info.MemBytes/4 && ws > 64<<20 {
			ws /= 2
		}
	}
	return ws
}

// WorkingSets lists the sweep's sizes: from lo to hi, 4 per octave
// (thorough) or 2 (quick), each a multiple of 4 KiB.
func WorkingSets(lo, hi int64, quick bool) []int64 {
	steps := 4.0
	if quick {
		steps = 2
	}
	var out []int64
	for i := 0; ; i++ {
		ws := int64(math.Round(float64(lo)*math.Pow(2, float64(i)/steps)/4096)) * 4096
		if ws > hi {
			break
		}
		if len(out) == 0 || ws > out[len(out)-1] {
			out = append(out, ws)
		}
	}
	if len(out) == 0 || out[len(out)-1] < hi {
		out = append(out, hi)
	}
	return out
}

// Measure runs the compute and bandwidth microbenchmarks and returns the
// ceilings. It runs on the default pool as placed (the pool does not pin
// the calling thread, so a compact placement would put worker 1 on the
// caller's CPU on a 2-CPU machine).
func Measure(ctx context.Context, o Options) (*Ceilings, error) {
	return measureWith(ctx, o, nil)
}

// measureWith is Measure with the cache sizes given (nil: detected; an
// unknown L3 is then measured from the read sweep).
func measureWith(ctx context.Context, o Options, cache *cpu.Cache) (*Ceilings, error) {
	info := cpu.Get()
	o.defaults(info)
	p := pool.Default()

	c := &Ceilings{
		Schema: Schema, Fingerprint: info.Fingerprint(), CPU: info.Brand, Arch: info.Arch,
		Measured: time.Now().UTC().Truncate(time.Second), Quick: o.Quick,
		NominalGHz: float64(info.NominalHz) / 1e9, Cache: info.Cache,
	}
	c.Cache.From = maps.Clone(info.Cache.From)
	if cache != nil {
		c.Cache = *cache
	}
	for _, t := range o.Threads {
		if t < 1 || t > p.Size() {
			return nil, fmt.Errorf("roofline: %d threads (the pool has %d)", t, p.Size())
		}
	}
	c.Threads = append([]int(nil), o.Threads...)
	sort.Ints(c.Threads)
	c.Threads = slices.Compact(c.Threads)

	var ks []*ComputeKernel
	for _, k := range ComputeKernels() {
		if len(o.Compute) == 0 || slices.Contains(o.Compute, k.Name) {
			ks = append(ks, k)
		}
	}
	sizes := WorkingSets(o.MinWorkingSet, o.MaxWorkingSet, o.Quick)
	total := 1 + len(ks)*len(c.Threads) + len(o.Kinds)*len(c.Threads)*len(sizes)
	done := 0
	step := func(what string) error {
		done++
		if o.Progress != nil {
			o.Progress(done, total, what)
		}
		return ctx.Err()
	}

	// The clock: a chain of dependent one-cycle adds on one thread.
	if clockFn != nil {
		rate := timeRate(o.MinTime, o.Reps, nil, func(n int64) { clockFn(n) })
		c.ClockGHz = rate * clockTrip / 1e9
	}
	if err := step("clock"); err != nil {
		return nil, err
	}

	for _, k := range ks {
		for _, t := range c.Threads {
			fn := k.Fn
			rate := timeRate(o.MinTime, o.Reps, fn, func(n int64) { p.Run(t, func(int) { fn(n) }) })
			cc := ComputeCeiling{Name: k.Name, DType: k.DType, ISA: k.ISA(), Threads: t, GFLOPS: rate * k.OpsPerTrip * float64(t) / 1e9}
			if c.ClockGHz > 0 {
				cc.PerCycle = cc.GFLOPS / float64(t) / c.ClockGHz
			}
			c.Compute = append(c.Compute, cc)
			if err := step(fmt.Sprintf("%s, %d threads", k.Name, t)); err != nil {
				return nil, err
			}
		}
	}

	// One arena for every kind, touched once so that page faults stay
	// out of the timings.
	arena := make([]float32, sizes[len(sizes)-1]/4)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&arena[0])), len(arena)*4)
	for i := range arena {
		arena[i] = 1
	}
	for _, kind := range o.Kinds {
		for _, t := range c.Threads {
			s := BandwidthSweep{Kind: kind, Threads: t}
			for _, ws := range sizes {
				job, bytes := bandwidthJob(kind, raw, arena, ws, t)
				if job == nil {
					continue
				}
				rate := timeRate(o.MinTime, o.Reps, func(n int64) { job(0, n) }, func(n int64) { p.Run(t, func(w int) { job(w, n) }) })
				pt := BWPoint{Bytes: bytes, GBs: rate * float64(bytes) / 1e9}
				if kind == KindRead {
					// the read ceiling is the best access pattern's: some
					// machines stream one sequence faster than four
					pt.Streams = readStreams
					for _, st := range ReadStreams {
						if st == readStreams {
							continue
						}
						sj, sb := readJob(raw, ws, t, st)
						if sj == nil {
							continue
						}
						r := timeRate(o.MinTime, o.Reps, func(n int64) { sj(0, n) }, func(n int64) { p.Run(t, func(w int) { sj(w, n) }) })
						if g := r * float64(sb) / 1e9; g > pt.GBs {
							pt.GBs, pt.Bytes, pt.Streams = g, sb, st
						}
					}
				}
				s.Points = append(s.Points, pt)
				if err := step(fmt.Sprintf("%s %s, %d threads", kind, HumanBytes(ws), t)); err != nil {
					return nil, err
				}
			}
			if kind == KindRead && t == c.Threads[0] && c.Cache.L3 <= 0 {
				if l3 := MeasureL3(s.Points, c.Cache.L2, t); l3 > 0 {
					c.Cache.L3, c.Cache.L3Total = l3, l3
					if c.Cache.From == nil {
						c.Cache.From = map[string]string{}
					}
					c.Cache.From["l3"] = "measured"
				}
			}
			s.Plateaus = Plateaus(s.Points, c.Cache, t)
			c.Sweeps = append(c.Sweeps, s)
		}
	}
	runtime.KeepAlive(arena)
	return c, nil
}

// bandwidthJob cuts a working set of about ws bytes of the arena into the
// arrays of kind, shared among threads in contiguous parts of
// granule-multiple sizes, and returns the per-worker job (n passes over
// its part) and the bytes one pass over all parts moves. job is nil when
// ws is too small for threads parts.
func bandwidthJob(kind string, raw []byte, arena []float32, ws int64, threads int) (job func(w int, n int64), bytes int64) {
	arrays := map[string]int64{KindRead: 1, KindWrite: 1, KindCopy: 2, KindTriad: 3}[kind]
	gran := int64(StreamAlign)
	if kind == KindRead {
		gran = int64(readStreams * ReadAlign)
	}
	units := ws / arrays / gran // granules per array
	if units < int64(threads) {
		return nil, 0
	}
	arr := units * gran // bytes per array
	part := func(w int) (lo, hi int64) {
		return units * int64(w) / int64(threads) * gran, units * int64(w+1) / int64(threads) * gran
	}
	at := func(i int, lo, hi int64) []byte { return raw[int64(i)*arr+lo : int64(i)*arr+hi] }
	f32 := func(i int, lo, hi int64) []float32 {
		return arena[(int64(i)*arr+lo)/4 : (int64(i)*arr+hi)/4]
	}
	switch kind {
	case KindRead:
		job = func(w int, n int64) {
			lo, hi := part(w)
			b := at(0, lo, hi)
			var s uint64
			for i := int64(0); i < n; i++ {
				s += Read(b, readStreams)
			}
			sinks[w%len(sinks)] += s
		}
	case KindWrite:
		job = func(w int, n int64) {
			lo, hi := part(w)
			b := at(0, lo, hi)
			for i := int64(0); i < n; i++ {
				Write(b, uint64(i))
			}
		}
	case KindCopy:
		job = func(w int, n int64) {
			lo, hi := part(w)
			d, s := at(0, lo, hi), at(1, lo, hi)
			for i := int64(0); i < n; i++ {
				Copy(d, s)
			}
		}
	case KindTriad:
		job = func(w int, n int64) {
			lo, hi := part(w)
			a, b, c := f32(0, lo, hi), f32(1, lo, hi), f32(2, lo, hi)
			for i := int64(0); i < n; i++ {
				Triad(a, b, c, 0.5)
			}
		}
	default:
		return nil, 0
	}
	return job, arrays * arr
}

// readJob is bandwidthJob's read kind with a given stream count.
func readJob(raw []byte, ws int64, threads, streams int) (job func(w int, n int64), bytes int64) {
	gran := int64(streams * ReadAlign)
	units := ws / gran
	if units < int64(threads) {
		return nil, 0
	}
	job = func(w int, n int64) {
		lo, hi := units*int64(w)/int64(threads)*gran, units*int64(w+1)/int64(threads)*gran
		b := raw[lo:hi]
		var s uint64
		for i := int64(0); i < n; i++ {
			s += Read(b, streams)
		}
		sinks[w%len(sinks)] += s
	}
	return job, units * gran
}

// readStreams is the stream count of the read sweep (the others are tried
// at each point and the best kept).
const readStreams = 4

// sinks keeps read checksums live (one slot per worker, padded).
var sinks [64 * 8]uint64

// timeRate calibrates n so that calib(n) lasts about minTime, then times
// reps runs of run(n) and returns the best rate in units of n per second.
// calib is one thread's share of run (worker 0's job alone), so that a
// descheduled worker during calibration (a shared machine) does not shrink
// n to nothing; nil means run.
func timeRate(minTime time.Duration, reps int, calib, run func(n int64)) float64 {
	if calib == nil {
		calib = run
	}
	n := int64(1)
	for {
		start := time.Now()
		calib(n)
		d := time.Since(start)
		if d >= minTime/4 {
			n = max(1, int64(float64(n)*float64(minTime)/float64(d)))
			break
		}
		if d <= 0 {
			n *= 16
		} else {
			n = max(n*2, int64(float64(n)*float64(minTime)/float64(d)/2))
		}
	}
	best := 0.0
	for r := 0; r < reps; r++ {
		start := time.Now()
		run(n)
		d := time.Since(start).Seconds()
		if d > 0 {
			best = max(best, float64(n)/d)
		}
	}
	return best
}

// HumanBytes writes a byte count as KiB, MiB or GiB (whole GiB exact).
func HumanBytes(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.4g KiB", float64(b)/(1<<10))
	}
}

// Drift compares ceilings measured at the start of a run with the same
// ceilings measured again at its end.
type Drift struct {
	Threads                  int
	ClockStart, ClockEnd     float64 // GHz
	Compute                  string  // the compute ceiling re-measured
	ComputeStart, ComputeEnd float64 // GFLOP/s (GOP/s) at 1 thread
	ReadStart, ReadEnd       float64 // DRAM read GB/s at Threads
}

// DriftLimit is how far a re-measured ceiling may move before the run's
// figures are called noisy.
const DriftLimit = 0.10

// Moved describes each ceiling that moved by more than DriftLimit.
func (d Drift) Moved() []string {
	var out []string
	check := func(what string, a, b float64, unit string) {
		if a > 0 && b > 0 && math.Abs(b-a)/a > DriftLimit {
			out = append(out, fmt.Sprintf("%s moved %+.0f%% during the run (%.3g → %.3g %s)", what, 100*(b-a)/a, a, b, unit))
		}
	}
	check("the clock", d.ClockStart, d.ClockEnd, "GHz")
	check(d.Compute+" (1 thread)", d.ComputeStart, d.ComputeEnd, "GFLOP/s")
	check(fmt.Sprintf("DRAM read bandwidth (%s)", plural(d.Threads, "thread")), d.ReadStart, d.ReadEnd, "GB/s")
	return out
}

// Recheck measures again the clock, c's fastest compute ceiling at one
// thread and its DRAM read bandwidth at its largest thread count, so a run
// can tell whether the machine it measured stayed the same machine (a VM's
// clock drifts; a neighbour takes the memory bus).
func Recheck(ctx context.Context, c *Ceilings) (Drift, error) {
	d := Drift{Threads: c.MaxThreads(), ClockStart: c.ClockGHz}
	o := Options{Quick: true, Threads: []int{d.Threads}, Kinds: []string{KindRead}}
	if cs := c.ComputeAt(1); len(cs) > 0 {
		d.Compute, d.ComputeStart = cs[0].Name, cs[0].GFLOPS
		o.Threads = []int{1, d.Threads}
		o.Compute = []string{cs[0].Name}
	}
	d.ReadStart = c.Bandwidth("DRAM", d.Threads)
	// one working set in the DRAM window (past twice every L3)
	ws := max(int64(256<<20), 4*max(c.Cache.L3, c.Cache.L3Total))
	if s := c.Sweep(KindRead, d.Threads); s != nil {
		for _, p := range s.Plateaus {
			if p.Level == "DRAM" && p.Lo > 0 {
				ws = max(ws, p.Lo)
			}
		}
	}
	o.MinWorkingSet, o.MaxWorkingSet = ws, ws
	// re-measuring must not re-estimate the cache sizes
	saved := c.Cache
	n, err := measureWith(ctx, o, &saved)
	if err != nil {
		return d, err
	}
	d.ClockEnd = n.ClockGHz
	for _, cc := range n.Compute {
		if cc.Name == d.Compute && cc.Threads == 1 {
			d.ComputeEnd = cc.GFLOPS
		}
	}
	if s := n.Sweep(KindRead, d.Threads); s != nil && len(s.Points) > 0 {
		d.ReadEnd = s.Points[len(s.Points)-1].GBs
	}
	return d, nil
}

// plural writes "1 thread", "2 threads".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

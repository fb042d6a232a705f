package tuner

import (
	"math"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/ktune/ktune/internal/kernel"
)

// MeasureOptions control timing of one candidate.
type MeasureOptions struct {
	// SampleTime is the least time one sample runs the kernel for (several
	// runs when one is shorter); Samples the samples per candidate (at least
	// 6: benchmath's 95% interval of a median needs 6).
	SampleTime time.Duration
	Samples    int
	// Noisy is the relative interval width (Hi−Lo)/median above which the
	// samples are judged noisy and the candidate is measured again, once.
	Noisy float64
	// StopRatio drops a candidate after two samples whose best is this much
	// slower than the best median so far.
	StopRatio float64
	// ColdBytes is how many bytes of weights a cold workload cycles through.
	ColdBytes int64
	// ConfirmRounds is how many alternating rounds confirm an entry's
	// choice against the untuned default (0: 3); MinGain the least
	// relative gain every round must show (0: 0.03). See tuner.confirm.
	ConfirmRounds int
	MinGain       float64
	// Now is the clock (tests may replace it); nil is time.Now.
	Now func() time.Time
}

// DefaultMeasure is the thorough setting; QuickMeasure the --quick one.
var (
	DefaultMeasure = MeasureOptions{SampleTime: 4 * time.Millisecond, Samples: 7, Noisy: 0.15, StopRatio: 1.3, ColdBytes: 512 << 20}
	QuickMeasure   = MeasureOptions{SampleTime: 2 * time.Millisecond, Samples: 6, Noisy: 0.25, StopRatio: 1.2, ColdBytes: 256 << 20}
)

func (m *MeasureOptions) confirmRounds() int {
	if m.ConfirmRounds > 0 {
		return m.ConfirmRounds
	}
	return 3
}

func (m *MeasureOptions) minGain() float64 {
	if m.MinGain > 0 {
		return m.MinGain
	}
	return 0.03
}

func (m *MeasureOptions) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// timing is a candidate's measured seconds per run.
type timing struct {
	median, lo, hi float64
	n              int
	stopped, noisy bool
}

// measure times insts (one per problem copy, run round-robin) and
// summarises with benchmath's median and 95% interval. best is the best
// median so far (0: none) for early stopping. Every problem is reset (the
// Problem contract: outputs, recurrent state) before the warm-up and
// before each sample, outside the timed interval, so that no sample runs
// on a state drifted by all the runs before it.
func (m *MeasureOptions) measure(insts []kernel.Instance, probs []kernel.Problem, best float64) timing {
	i := 0
	run := func() { insts[i].Run(); i = (i + 1) % len(insts) }
	reset := func() {
		for _, p := range probs {
			p.Reset()
		}
	}
	// warm-up, and the runs per sample
	reset()
	t0 := m.now()
	run()
	one := m.now().Sub(t0)
	for k := 1; k < len(insts) && one < m.SampleTime; k++ { // touch every copy once
		run()
	}
	reps := 1
	if one > 0 {
		reps = max(1, int(m.SampleTime/one))
	}
	reps = min(reps, 1<<16)
	sample := func() float64 {
		reset()
		t := m.now()
		for r := 0; r < reps; r++ {
			run()
		}
		return m.now().Sub(t).Seconds() / float64(reps)
	}
	var vals []float64
	n := max(m.Samples, 6)
	for len(vals) < n {
		vals = append(vals, sample())
		if len(vals) == 2 && best > 0 && slices.Min(vals) > m.StopRatio*best {
			return timing{median: median(vals), lo: slices.Min(vals), hi: slices.Max(vals), n: len(vals), stopped: true}
		}
	}
	s := summarize(vals)
	if s.median > 0 && (s.hi-s.lo)/s.median > m.Noisy {
		for k := 0; k < n; k++ {
			vals = append(vals, sample())
		}
		s = summarize(vals)
		s.noisy = (s.hi-s.lo)/s.median > m.Noisy
	}
	return s
}

func summarize(vals []float64) timing {
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(vals, &benchmath.DefaultThresholds), 0.95)
	t := timing{median: sum.Center, lo: sum.Lo, hi: sum.Hi, n: len(vals)}
	if math.IsInf(t.lo, 0) || math.IsInf(t.hi, 0) {
		t.lo, t.hi = slices.Min(vals), slices.Max(vals)
	}
	return t
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

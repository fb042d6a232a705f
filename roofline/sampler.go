package roofline

import (
	"fmt"
	"slices"
	"time"

	"github.com/ktune/ktune/internal/pool"
)

// DRAMSampler re-measures the DRAM read bandwidth now and then during a
// long run. On a shared host the bandwidth a VM gets moves with its
// neighbours' traffic, which no CPU-time count shows: a kernel timed in a
// good minute outran the ceiling measured in a bad one. Apply raises each
// thread count's DRAM read plateau to the best reading (a ceiling is what
// the machine can do) and describes a spread wide enough to make the
// run's figures suspect.
type DRAMSampler struct {
	buf     []byte
	threads []int
	start   map[int]float64
	// Samples are the readings per thread count (GB/s), in order.
	Samples map[int][]float64
	last    time.Time
}

// SpreadLimit is the ratio of the best to the worst DRAM reading of a
// thread count above which a run is called noisy.
const SpreadLimit = 1.3

// NewDRAMSampler prepares a buffer in c's DRAM window (past twice every
// L3, at least 256 MiB) for c's thread counts.
func NewDRAMSampler(c *Ceilings) *DRAMSampler {
	ws := max(int64(256<<20), 4*max(c.Cache.L3, c.Cache.L3Total))
	unit := int64(8 * ReadAlign)
	s := &DRAMSampler{buf: make([]byte, ws/unit*unit), threads: slices.Clone(c.Threads),
		start: map[int]float64{}, Samples: map[int][]float64{}}
	for i := 0; i < len(s.buf); i += 4096 {
		s.buf[i] = 1 // touched once: no page faults in the timings
	}
	for _, t := range s.threads {
		if sw := c.Sweep(KindRead, t); sw != nil && sw.Threads == t {
			for _, p := range sw.Plateaus {
				if p.Level == "DRAM" && p.Points > 0 { // measured in its window
					s.start[t] = p.GBs
				}
			}
		}
	}
	return s
}

// SampleEvery takes a reading when at least d passed since the last one.
func (s *DRAMSampler) SampleEvery(d time.Duration) {
	if time.Since(s.last) >= d {
		s.Sample()
	}
}

// Sample takes one reading per thread count: the best of two passes at
// each stream count (a few hundred milliseconds on 2 cores).
func (s *DRAMSampler) Sample() {
	s.last = time.Now()
	for _, t := range s.threads {
		if t > pool.Default().Size() {
			continue
		}
		best := 0.0
		for _, st := range ReadStreams {
			for r := 0; r < 2; r++ {
				t0 := time.Now()
				sinks[0] += ReadParallel(s.buf, st, t)
				if d := time.Since(t0).Seconds(); d > 0 {
					best = max(best, float64(len(s.buf))/d/1e9)
				}
			}
		}
		s.Samples[t] = append(s.Samples[t], best)
	}
	s.last = time.Now()
}

// Apply raises c's DRAM read plateaus to the best reading of each thread
// count and returns a note for each thread count whose readings (with the
// ceiling measured at the start) spread by more than SpreadLimit.
func (s *DRAMSampler) Apply(c *Ceilings) []string {
	var notes []string
	for _, t := range s.threads {
		vals := s.Samples[t]
		if len(vals) == 0 {
			continue
		}
		all := slices.Clone(vals)
		if s.start[t] > 0 {
			all = append(all, s.start[t])
		}
		lo, hi := slices.Min(all), slices.Max(all)
		if lo > 0 && hi/lo > SpreadLimit {
			notes = append(notes, fmt.Sprintf("DRAM read bandwidth at %s varied from %.1f to %.1f GB/s over %d readings during the run (other tenants of the host?)", plural(t, "thread"), lo, hi, len(all)))
		}
		for i := range c.Sweeps {
			sw := &c.Sweeps[i]
			if sw.Kind != KindRead || sw.Threads != t {
				continue
			}
			for j := range sw.Plateaus {
				if p := &sw.Plateaus[j]; p.Level == "DRAM" && hi > p.GBs {
					p.Note = fmt.Sprintf("raised from %.1f GB/s: the best of %d readings during the run", p.GBs, len(vals))
					p.GBs = hi
				}
			}
		}
	}
	return notes
}

// Close drops the buffer.
func (s *DRAMSampler) Close() { s.buf = nil }

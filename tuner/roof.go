package tuner

import (
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/roofline"
)

// computeCeiling names the compute roof an entry is held to: int8act
// (and bf16act) against their dot-product peak when the machine has one,
// everything else, and those without it, against the f32 FMA peak.
func computeCeiling(c *roofline.Ceilings, class kernel.Class, threads int) string {
	if class != kernel.ClassF32 && class != "" && c.PeakFLOPs(string(class), threads) > 0 {
		return string(class)
	}
	return "f32"
}

// RoofFraction is the achieved GFLOP/s over the roof at the entry's
// arithmetic intensity and the threads it ran on (NaN when unknown): the
// roofline's Roof (compute peak, DRAM read bandwidth) for entries timed
// with cold weights (mem=dram), and for warm ones the same with the read
// plateau of the smallest cache level that holds the bytes one run moves
// (a warm 20 KB rmsnorm is held to L1, not DRAM).
func (e *Entry) RoofFraction(c *roofline.Ceilings) float64 {
	r := e.Best
	if c == nil || !(r.Median > 0) || !(r.Bytes > 0) || !(r.FLOPs > 0) {
		return math.NaN()
	}
	t := max(r.Threads, 1)
	compute := computeCeiling(c, e.Class, t)
	ai := r.FLOPs / r.Bytes
	roof := c.Roof(ai, t, compute)
	if lv, bw := warmLevel(c, e, t); lv != "" {
		roof = math.Min(c.PeakFLOPs(compute, t), ai*bw)
	}
	if !(roof > 0) {
		return math.NaN()
	}
	return r.GFLOPs() / roof
}

// warmLevel is the smallest cache level whose capacity at t threads holds
// a warm entry's bytes, and its read bandwidth ("" for cold entries, or
// when no level with a known size fits).
func warmLevel(c *roofline.Ceilings, e *Entry, t int) (string, float64) {
	if e.Mem == "dram" {
		return "", 0
	}
	s := c.Sweep(roofline.KindRead, t)
	if s == nil {
		return "", 0
	}
	for _, lv := range roofline.Levels {
		for _, p := range s.Plateaus {
			if p.Level == lv && p.CacheBytes > 0 && e.Best.Bytes <= float64(p.CacheBytes) && p.GBs > 0 {
				return lv, p.GBs
			}
		}
	}
	return "", 0
}

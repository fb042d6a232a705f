package roofline

import (
	"math"
	"sort"

	"github.com/ktune/ktune/internal/cpu"
)

// Plateaus finds each level's bandwidth in a sweep measured on threads
// threads, from the cache sizes (detected, or measured by MeasureL3): the private L1d and L2 hold
// threads × their per-core size, the L3 is shared. Each level's window
// keeps a factor 2 away from the capacities on either side (L1:
// [L1/8, L1/2]; L2: [2·L1, L2/2]; L3: [2·L2, L3/2]; DRAM: from 2·L3, or
// from 256 MiB and 8·L2 when the L3 size is unknown); the plateau is the
// median rate in the window. A level whose window holds no point takes the
// point nearest the window and says so; unknown caches (-1) give no
// window, and the level is skipped.
func Plateaus(pts []BWPoint, c cpu.Cache, threads int) []Plateau {
	t := int64(max(threads, 1))
	l1, l2, l3 := scaled(c.L1D, t), scaled(c.L2, t), c.L3
	l3all := max(l3, c.L3Total) // several sockets or CCDs: DRAM starts past them all
	var out []Plateau
	add := func(level string, capacity, lo, hi int64) {
		if lo <= 0 || hi <= 0 || len(pts) == 0 {
			return
		}
		p := Plateau{Level: level, CacheBytes: capacity, Lo: lo, Hi: hi}
		var in []float64
		for _, x := range pts {
			if x.Bytes >= lo && x.Bytes <= hi {
				in = append(in, x.GBs)
			}
		}
		if len(in) == 0 {
			// nearest point to the window (in ratio)
			best, bd := pts[0], ratioDist(pts[0].Bytes, lo, hi)
			for _, x := range pts[1:] {
				if d := ratioDist(x.Bytes, lo, hi); d < bd {
					best, bd = x, d
				}
			}
			in = []float64{best.GBs}
			p.Note = "no point in the window; nearest used (" + HumanBytes(best.Bytes) + ")"
		}
		p.GBs, p.Points = median(in), len(in)
		if p.Note != "" {
			p.Points = 0
		}
		out = append(out, p)
	}
	const inf = int64(1) << 62
	if l1 > 0 {
		add("L1", l1, l1/8, l1/2)
	}
	if l2 > 0 && l1 > 0 {
		add("L2", l2, 2*l1, l2/2)
	}
	if l3 > 0 && l2 > 0 {
		add("L3", l3, 2*l2, l3/2)
	}
	switch {
	case l3 > 0:
		add("DRAM", 0, 2*l3all, inf)
	case l2 > 0:
		add("DRAM", 0, max(256<<20, 8*l2), inf)
	default:
		add("DRAM", 0, 256<<20, inf)
	}
	return out
}

func scaled(size, t int64) int64 {
	if size <= 0 {
		return -1
	}
	return size * t
}

// ratioDist is how far x lies outside [lo, hi], as a ratio (0 inside).
func ratioDist(x, lo, hi int64) float64 {
	switch {
	case x < lo:
		return float64(lo) / float64(x)
	case x > hi:
		return float64(x) / float64(hi)
	}
	return 0
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MeasureL3 estimates the shared last-level cache's capacity from a read
// sweep when detection reports none (VMs often hide it): above the private
// L2 (l2 per core × threads), the working sets that still read clearly
// faster than DRAM are cache. DRAM's rate is the median of the sweep's
// largest working sets (from a quarter of the largest); the L3 rate the
// best rate between 2·L2 and the DRAM window; the capacity is the largest
// working set reading at least the geometric mean of the two, when the L3
// rate beats DRAM by 1.5× (else 0: no level between L2 and DRAM shows).
func MeasureL3(pts []BWPoint, l2PerCore int64, threads int) int64 {
	if len(pts) < 4 {
		return 0
	}
	largest := pts[len(pts)-1].Bytes
	var dram []float64
	for _, p := range pts {
		if p.Bytes >= largest/4 {
			dram = append(dram, p.GBs)
		}
	}
	d := median(dram)
	lo := int64(64 << 10)
	if l2PerCore > 0 {
		lo = 2 * l2PerCore * int64(max(threads, 1))
	}
	best := 0.0
	for _, p := range pts {
		if p.Bytes >= lo && p.Bytes < largest/4 {
			best = max(best, p.GBs)
		}
	}
	if !(d > 0) || best < 1.5*d {
		return 0
	}
	mid := math.Sqrt(best * d)
	var size int64
	for _, p := range pts {
		if p.Bytes >= lo && p.Bytes < largest/4 && p.GBs >= mid {
			size = p.Bytes
		}
	}
	return size
}

// LevelFor is the memory level a warm kernel runs from: the smallest whose
// capacity at threads threads (the read sweep's plateaus: detected or
// measured sizes) holds footprint bytes, with its read bandwidth; "DRAM"
// when none does. A cold kernel (weights streamed from memory) is DRAM's.
func (c *Ceilings) LevelFor(footprint float64, threads int, cold bool) (level string, gbs float64) {
	s := c.Sweep(KindRead, threads)
	if s == nil {
		return "DRAM", 0
	}
	bw := func(lv string) float64 {
		for _, p := range s.Plateaus {
			if p.Level == lv {
				return p.GBs
			}
		}
		return 0
	}
	if !cold {
		for _, lv := range Levels[:len(Levels)-1] {
			for _, p := range s.Plateaus {
				if p.Level == lv && p.CacheBytes > 0 && footprint <= float64(p.CacheBytes) && p.GBs > 0 {
					return lv, p.GBs
				}
			}
		}
	}
	return "DRAM", bw("DRAM")
}

// RoofAt is the attainable rate (GFLOP/s) of a kernel at intensity ai on
// threads threads: the lower of the compute ceiling named by compute (see
// PeakFLOPs) and ai times the read bandwidth of the level it runs from
// (LevelFor). bound names what held it: that level, or "compute".
func (c *Ceilings) RoofAt(ai, footprint float64, threads int, cold bool, compute string) (roof float64, bound string) {
	level, bw := c.LevelFor(footprint, threads, cold)
	peak, mem := c.PeakFLOPs(compute, threads), ai*bw
	if peak > 0 && peak < mem {
		return peak, "compute"
	}
	return mem, level
}

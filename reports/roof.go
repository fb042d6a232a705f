package reports

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/roofline"
)

// AboveRoof is the fraction of its roof above which a figure is not
// believed: the roof model or the ceilings are wrong (or the machine was
// busy while they were measured), and reports say "above roof" instead of
// a percentage.
const AboveRoof = 1.05

// computeCeiling names the compute roof an entry is held to: int8act
// (and bf16act) against their dot-product peak when the machine has one,
// everything else, and those without it, against the f32 FMA peak.
func computeCeiling(c *roofline.Ceilings, class kernel.Class, threads int) string {
	if class != kernel.ClassF32 && class != "" && c.PeakFLOPs(string(class), threads) > 0 {
		return string(class)
	}
	return "f32"
}

// RoofFraction is a profile entry's achieved GFLOP/s over the roof at its
// arithmetic intensity and the threads it ran on (NaN when unknown): the
// compute peak of its class, or its intensity times the read bandwidth of
// the level it ran from — DRAM for entries timed with cold weights
// (mem=dram), else the smallest cache level (measured plateaus; an L3 the
// OS does not report is measured) that holds its working set.
func RoofFraction(c *roofline.Ceilings, e *profile.Entry) float64 {
	f, _ := Roof(c, e)
	return f
}

// Roof is RoofFraction and the memory level the roof was taken at.
func Roof(c *roofline.Ceilings, e *profile.Entry) (fraction float64, level string) {
	r := e.Best
	if c == nil || !(r.Median > 0) || !(r.Bytes > 0) || !(r.FLOPs > 0) {
		return math.NaN(), ""
	}
	t := max(r.Threads, 1)
	fp := r.Footprint
	if !(fp > 0) {
		fp = r.Bytes
	}
	roof, level := c.RoofAt(r.FLOPs/r.Bytes, fp, t, e.Mem == "dram", computeCeiling(c, e.Class, t))
	if !(roof > 0) {
		return math.NaN(), level
	}
	return r.GFLOPs() / roof, level
}

// RoofCell is the "% of roof" of a profile entry as reports print it: the
// percentage and what held it ("84% L2", "61% compute"), "above roof (237%
// of L3)" past AboveRoof — the roof model or the ceilings are wrong there,
// so no percentage is claimed — or "-" when unknown.
func RoofCell(c *roofline.Ceilings, e *profile.Entry) string {
	f, level := Roof(c, e)
	switch {
	case math.IsNaN(f):
		return "-"
	case f > AboveRoof:
		return fmt.Sprintf("above roof (%.0f%% of %s)", 100*f, level)
	}
	return fmt.Sprintf("%.0f%% %s", 100*f, level)
}

package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/roofline"
)

// ChoicesHeader heads ChoicesTable.
var ChoicesHeader = []string{"op", "dtype", "shape", "threads", "class", "chosen", "untuned default", "achieved", "% of roof", "vs default"}

// ChoicesTable is the one table of a profile's choices, printed by ktune
// after a run and by kprofile show: per (op, dtype, projection, shape,
// threads) the fastest class's choice, what the engine runs untuned
// ("same" when the choice kept it), the choice's rate, its % of roof (c
// nil: unknown) and its speedup over the untuned default.
func ChoicesTable(p *profile.Profile, c *roofline.Ceilings) [][]string {
	var tab [][]string
	for _, r := range ChoiceRows(p) {
		e := r.E
		v, unit := Rate(e)
		class := string(e.Class)
		if r.Extra > 0 {
			class += fmt.Sprintf(" (of %d)", r.Extra+1)
		}
		tab = append(tab, []string{e.Op, string(e.DType), ShapeCell(e), fmt.Sprint(e.Threads), class, ChoiceCell(e), DefaultCell(e),
			FormatRate(v) + " " + unit, RoofCellOrDash(c, e), SpeedupCell(e)})
	}
	return tab
}

// A ChoiceRow is one (op, dtype, label, shape, threads) of a profile: the entry
// of the fastest class there, which is what the engine runs (it takes the
// fastest entry among the allowed classes).
type ChoiceRow struct {
	Key   string
	E     *profile.Entry
	Extra int // entries of other classes at the same key
}

func choiceKey(e *profile.Entry) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", e.Op, e.DType, e.Label, e.Shape, e.Threads)
}

// ChoiceRows lists a profile's rows in the profile's order (Profile.Sort).
func ChoiceRows(p *profile.Profile) []ChoiceRow {
	idx := map[string]int{}
	var out []ChoiceRow
	for i := range p.Entries {
		e := &p.Entries[i]
		k := choiceKey(e)
		j, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, ChoiceRow{Key: k, E: e})
			continue
		}
		out[j].Extra++
		if e.Best.Median > 0 && e.Best.Median < out[j].E.Best.Median {
			out[j].E = e
		}
	}
	return out
}

// BandwidthBound says whether an entry's figure is GB/s rather than
// GFLOP/s: no FLOPs, or fewer than 4 FLOPs per byte (so every machine's
// row of an op has the same unit).
func BandwidthBound(e *profile.Entry) bool {
	r := e.Best
	return r.FLOPs == 0 || (r.Bytes > 0 && r.FLOPs/r.Bytes < 4)
}

// Rate is an entry's achieved rate and its unit.
func Rate(e *profile.Entry) (float64, string) {
	if BandwidthBound(e) {
		return e.Best.GBs(), "GB/s"
	}
	return e.Best.GFLOPs(), "GFLOP/s"
}

// FormatRate prints a rate with 3 significant digits ("—" for NaN).
func FormatRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// RoofCellOrDash is RoofCell, "—" when unknown (no ceilings).
func RoofCellOrDash(c *roofline.Ceilings, e *profile.Entry) string {
	if c == nil {
		return "—"
	}
	if s := RoofCell(c, e); s != "-" {
		return s
	}
	return "—"
}

// ChoiceCell is "variant params", with the threads used when fewer than the
// budget.
func ChoiceCell(e *profile.Entry) string { return resultCell(&e.Best, e.Threads) }

// DefaultCell is the untuned default's variant, parameters, threads and
// placement where they differ from the choice ("same" where the choice
// kept it, "—" where no default was timed).
func DefaultCell(e *profile.Entry) string {
	switch {
	case e.Default == nil:
		return "—"
	case e.KeepsDefault():
		return "same"
	}
	s := resultCell(e.Default, e.Threads)
	if e.Default.Placement != e.Best.Placement && e.Default.Placement != "" {
		s += " " + e.Default.Placement
	}
	return s
}

// resultCell is a result's variant, parameters, and threads where fewer
// than the budget.
func resultCell(r *profile.Result, budget int) string {
	s := r.Variant
	if len(r.Params) > 0 {
		s += " " + r.Params.String()
	}
	if r.Threads > 0 && r.Threads != budget {
		s += fmt.Sprintf(" (%d thr)", r.Threads)
	}
	return s
}

// ShapeCell is the shape class, the projection it stands for, and the shape.
func ShapeCell(e *profile.Entry) string {
	s := e.ShapeClass
	if e.Label != "" && e.Label != strings.SplitN(e.Op, ".", 2)[0] {
		s += " " + e.Label
	}
	if s == "" {
		return e.Shape.String()
	}
	return s + " (" + e.Shape.String() + ")"
}

// SpeedupCell is the speedup over the untuned default ("—" unknown).
func SpeedupCell(e *profile.Entry) string {
	if s := e.Speedup(); s > 0 {
		return fmt.Sprintf("%.2f×", s)
	}
	return "—"
}

// ConfirmSummary says how the profile's choices were confirmed against the
// untuned default (tuner.confirm): "" when no entry records it (a profile
// from before the check).
func ConfirmSummary(p *profile.Profile) string {
	c := p.ConfirmCounts()
	if c.Challenged == 0 {
		return ""
	}
	s := fmt.Sprintf("confirmed in %d alternating rounds against the default: %d of %d challenged choices beat it, %d kept the default (not faster by the margin), %d took a smaller thread budget's choice",
		c.Rounds, c.Tuned, c.Challenged, c.Kept, c.Fewer)
	if c.Busy > 0 {
		s += fmt.Sprintf("; %d kept their base because other processes were busy during the rounds", c.Busy)
	}
	if c.Skipped > 0 {
		s += fmt.Sprintf("; %d kept the default unconfirmed because the budget ran out", c.Skipped)
	}
	return s
}

// EndToEndHeader heads EndToEndRows.
var EndToEndHeader = []string{"test", "threads", "without profile (tok/s)", "with (tok/s)", "with ÷ without (rounds)"}

// EndToEndRows is the end-to-end check's table: per row the median tokens/s
// each way and the ratio's median and range over the rounds.
func EndToEndRows(e *profile.EndToEnd) [][]string {
	var rows [][]string
	for _, r := range e.Rows {
		rows = append(rows, []string{r.Test, fmt.Sprint(r.Threads), fmt.Sprintf("%.1f", r.Without), fmt.Sprintf("%.1f", r.With),
			fmt.Sprintf("%.3f (%.3f–%.3f)", r.Ratio(), slices.Min(r.Ratios), slices.Max(r.Ratios))})
	}
	return rows
}

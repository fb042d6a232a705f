package reports

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// RegressOptions are the thresholds of a regression check.
type RegressOptions struct {
	// Threshold is the relative change, in the bad direction, beyond which
	// a significant change is a regression: 0.05 flags a time per op up by
	// more than 5% or a throughput down by more than 5%.
	Threshold float64
	// Alpha is the significance level of the Mann–Whitney U test
	// (benchmath.AssumeNothing): a change counts when p <= Alpha.
	Alpha float64
	// Confidence is the level of the medians' confidence intervals
	// (0 means 0.95).
	Confidence float64
}

// DefaultRegressOptions: 5% at α = 0.05, 95% intervals.
var DefaultRegressOptions = RegressOptions{Threshold: 0.05, Alpha: 0.05, Confidence: 0.95}

// Verdict is the outcome of comparing one benchmark and unit.
type Verdict int

const (
	Same          Verdict = iota // no significant difference ("~")
	Improved                     // significantly better
	Worse                        // significantly worse, but within the threshold
	Regressed                    // significantly worse beyond the threshold: fails the check
	TooFewSamples                // not significant, and the sample sizes could not have shown a difference at α
	Changed                      // significant change in a unit whose better direction is unknown
	OnlyOld                      // present only in the old file
	OnlyNew                      // present only in the new file
)

func (v Verdict) String() string {
	switch v {
	case Same:
		return "~"
	case Improved:
		return "better"
	case Worse:
		return "worse (within threshold)"
	case Regressed:
		return "REGRESSION"
	case TooFewSamples:
		return "too few samples"
	case Changed:
		return "changed (direction unknown)"
	case OnlyOld:
		return "only in old"
	case OnlyNew:
		return "only in new"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// BenchDiff compares one benchmark in one unit between the two files.
type BenchDiff struct {
	Config  string // the configuration that varies inside a file ("pkg=…"), "" if none
	Name    string // full benchmark name, as in the files
	Unit    string // tidied unit (sec/op, B/s, GFLOP/s, …)
	Better  int    // +1 higher is better, -1 lower is better, 0 unknown
	Old     *benchmath.Summary
	New     *benchmath.Summary
	OldN    int
	NewN    int
	Cmp     benchmath.Comparison // valid when both sides exist
	Delta   float64              // New.Center/Old.Center - 1
	Verdict Verdict
	Notes   []string // benchmath's warnings
}

// Label is the benchmark's name with its configuration, if any.
func (d *BenchDiff) Label() string {
	if d.Config == "" {
		return d.Name
	}
	return d.Config + " " + d.Name
}

// RegressReport is the outcome of Regress.
type RegressReport struct {
	Old, New string         // file names
	Options  RegressOptions // as used (defaults filled in)
	Common   [][2]string    // configuration shared by both files: key, value
	Differ   [][3]string    // configuration that differs between the files: key, old, new
	Warnings []string       // e.g. different machines, unparsable lines
	Diffs    []BenchDiff
}

// Regressions lists the diffs that fail the check.
func (r *RegressReport) Regressions() []BenchDiff {
	var out []BenchDiff
	for _, d := range r.Diffs {
		if d.Verdict == Regressed {
			out = append(out, d)
		}
	}
	return out
}

// Missing lists the benchmarks and units of the old file that the new one
// lacks: a renamed or dropped benchmark, or a unit no longer reported
// (sec/op against GFLOP/s only). kprofile regress fails on them unless
// told to allow them, so that a rename cannot switch the gate off.
func (r *RegressReport) Missing() []BenchDiff {
	var out []BenchDiff
	for _, d := range r.Diffs {
		if d.Verdict == OnlyOld {
			out = append(out, d)
		}
	}
	return out
}

// Compared counts the benchmarks and units present in both files.
func (r *RegressReport) Compared() int {
	n := 0
	for _, d := range r.Diffs {
		if d.Old != nil && d.New != nil {
			n++
		}
	}
	return n
}

// machineKeys are configuration keys that identify the machine: a
// difference in one of them means the files come from different machines.
var machineKeys = map[string]bool{"cpu": true, "fingerprint": true, "goos": true, "goarch": true, "effective-features": true}

// Regress compares two benchmark files benchstat-style: per benchmark and
// unit, medians with confidence intervals and a Mann–Whitney U test
// (benchmath.AssumeNothing, or AssumeExact for units marked assume=exact),
// and a verdict that takes the unit's better direction into account.
//
// Configuration lines are respected as benchstat's default tables do,
// with one difference: a key that is constant inside each file but
// differs between them (ktune-version, go-version: the two builds being
// compared) does not split the comparison; it is reported in Differ. Keys
// that vary inside a file (pkg, …) group the benchmarks.
func Regress(old, new *BenchFile, opt RegressOptions) *RegressReport {
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	rep := &RegressReport{Old: old.Name, New: new.Name, Options: opt}
	for _, f := range []*BenchFile{old, new} {
		for _, w := range f.Warnings {
			rep.Warnings = append(rep.Warnings, "skipped line: "+w.Error())
		}
	}

	// Split configuration keys into grouping keys and file-level ones.
	ov, nv := old.configValues(), new.configValues()
	keys := map[string]bool{}
	for k := range ov {
		keys[k] = true
	}
	for k := range nv {
		keys[k] = true
	}
	var group []string
	for _, k := range sortedKeys(keys) {
		if len(ov[k]) > 1 || len(nv[k]) > 1 {
			group = append(group, k)
			continue
		}
		o, n := single(ov[k]), single(nv[k])
		if o == n {
			rep.Common = append(rep.Common, [2]string{k, o})
			continue
		}
		rep.Differ = append(rep.Differ, [3]string{k, o, n})
		if machineKeys[k] {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s differs (%q vs %q): the files come from different machines or feature masks", k, o, n))
		}
	}

	// Collect samples per (group config, name, unit), in file order.
	type key struct{ config, name, unit string }
	var order []key
	samples := map[key]*[2][]float64{}
	for side, f := range []*BenchFile{old, new} {
		for _, k := range f.order {
			gk := key{projectConfig(f.configs[k.config], group), k.name, k.unit}
			s := samples[gk]
			if s == nil {
				s = &[2][]float64{}
				samples[gk] = s
				order = append(order, gk)
			}
			s[side] = append(s[side], f.entries[k].values...)
		}
	}

	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = opt.Alpha
	for _, k := range order {
		s := samples[k]
		d := BenchDiff{Config: k.config, Name: k.name, Unit: k.unit, Better: Better(k.unit, old.Units, new.Units)}
		assume := assumption(k.unit, old.Units, new.Units)
		var so, sn *benchmath.Sample
		if len(s[0]) > 0 {
			so = benchmath.NewSample(s[0], &thr)
			sum := assume.Summary(so, opt.Confidence)
			d.Old, d.OldN = &sum, len(s[0])
		}
		if len(s[1]) > 0 {
			sn = benchmath.NewSample(s[1], &thr)
			sum := assume.Summary(sn, opt.Confidence)
			d.New, d.NewN = &sum, len(s[1])
		}
		switch {
		case so == nil:
			d.Verdict = OnlyNew
		case sn == nil:
			d.Verdict = OnlyOld
		default:
			d.Cmp = assume.Compare(so, sn)
			for _, w := range d.Cmp.Warnings {
				d.Notes = append(d.Notes, w.Error())
			}
			d.Delta = relDelta(d.Old.Center, d.New.Center)
			d.Verdict = verdict(&d, assume, opt)
		}
		rep.Diffs = append(rep.Diffs, d)
	}
	return rep
}

func verdict(d *BenchDiff, assume benchmath.Assumption, opt RegressOptions) Verdict {
	if d.Cmp.P > d.Cmp.Alpha {
		if assume == benchmath.AssumeNothing && uTestMinP(d.OldN, d.NewN) > d.Cmp.Alpha {
			return TooFewSamples
		}
		return Same
	}
	if d.Delta == 0 {
		return Same
	}
	if d.Better == 0 {
		return Changed
	}
	worse := d.Delta * float64(-d.Better) // > 0 when the change is in the bad direction
	switch {
	case worse < 0:
		return Improved
	case worse > opt.Threshold:
		return Regressed
	}
	return Worse
}

// uTestMinP is the smallest two-sided p-value the Mann–Whitney U test can
// give for samples of sizes n1 and n2 (complete separation): 2/C(n1+n2, n1).
// benchmath warns ("need >= N samples") on the same condition for equal
// sizes; this form also covers unequal ones.
func uTestMinP(n1, n2 int) float64 {
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	l1, _ := math.Lgamma(float64(n1 + 1))
	l2, _ := math.Lgamma(float64(n2 + 1))
	return math.Min(1, 2*math.Exp(l1+l2-lc))
}

func relDelta(old, new float64) float64 {
	if old == new {
		return 0
	}
	if old == 0 {
		return math.Inf(int(math.Copysign(1, new)))
	}
	return new/old - 1
}

func assumption(unit string, metas ...benchfmt.UnitMetadataMap) benchmath.Assumption {
	for _, m := range metas {
		if md := m.Get(unit, "assume"); md != nil {
			return m.GetAssumption(unit)
		}
	}
	return benchmath.AssumeNothing
}

func projectConfig(cfg map[string]string, keys []string) string {
	var parts []string
	for _, k := range keys {
		if v := cfg[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func single(s map[string]bool) string {
	for v := range s {
		return v
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FormatSummary formats a summary as benchstat does: the centre with an
// SI/IEC prefix and the unit's base (e.g. "1.23m" for sec/op), then "± x%"
// for the confidence interval ("± ∞" when there are too few samples).
func FormatSummary(s benchmath.Summary, unit string) string {
	sc := benchunit.CommonScale([]float64{s.Center}, benchunit.ClassOf(unit))
	return sc.Format(s.Center) + " ± " + s.PctRangeString()
}

// Table renders the diffs benchstat-style as strings, for cli.Table:
// benchmark, unit, old and new (median ± CI), delta ("~" when not
// significant), p-value and sample sizes, verdict.
func (r *RegressReport) Table() (header []string, rows [][]string) {
	oldName, newName := filepath.Base(r.Old), filepath.Base(r.New)
	if oldName == newName {
		oldName, newName = "old "+oldName, "new "+newName
	}
	header = []string{"benchmark", "unit", oldName, newName, "delta", "p (n)", "verdict"}
	for _, d := range r.Diffs {
		row := []string{d.Label(), unitLabel(d.Unit, d.Better), "", "", "", "", d.Verdict.String()}
		var centers []float64
		if d.Old != nil {
			centers = append(centers, d.Old.Center)
		}
		if d.New != nil {
			centers = append(centers, d.New.Center)
		}
		sc := benchunit.CommonScale(centers, benchunit.ClassOf(d.Unit))
		if d.Old != nil {
			row[2] = sc.Format(d.Old.Center) + " ± " + d.Old.PctRangeString()
		}
		if d.New != nil {
			row[3] = sc.Format(d.New.Center) + " ± " + d.New.PctRangeString()
		}
		if d.Old != nil && d.New != nil {
			row[4] = d.Cmp.FormatDelta(d.Old.Center, d.New.Center)
			row[5] = d.Cmp.String()
		}
		if d.Verdict == Worse || d.Verdict == Regressed {
			row[6] = fmt.Sprintf("%s (%+.1f%%, threshold %.3g%%)", d.Verdict, 100*d.Delta, 100*r.Options.Threshold)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// unitLabel marks the better direction: "sec/op ↓" (lower is better),
// "GFLOP/s ↑" (higher is better), "x ?" (unknown, not checked).
func unitLabel(unit string, better int) string {
	switch better {
	case 1:
		return unit + " ↑"
	case -1:
		return unit + " ↓"
	}
	return unit + " ?"
}

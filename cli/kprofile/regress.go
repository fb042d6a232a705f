package kprofile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/reports"
)

// RegressOptions are the flags and arguments of kprofile regress.
type RegressOptions struct {
	Old, New  string
	Threshold float64 // fraction (0.05 for "5%")
	Alpha     float64
	Format    string // text or md
	// AllowMissing lets benchmarks of OLD that NEW lacks (and files with
	// none in common) pass, reported on stderr.
	AllowMissing bool
}

// NewCmdRegress builds `kprofile regress OLD NEW`. runF replaces the run
// (tests capture the options); nil runs it.
func NewCmdRegress(f *cli.Factory, runF func(*RegressOptions) error) *cobra.Command {
	o := &RegressOptions{}
	var threshold string
	cmd := &cobra.Command{
		Use:   "regress OLD NEW",
		Short: "Compare two benchmark files and fail on a significant slowdown",
		Long: cli.Doc(`
			regress compares two files in the Go benchmark format (ktune's
			benchmarks, kprofile bench, or any go test -bench output) the way
			benchstat does: for each benchmark and unit, the median of each
			file with its 95% confidence interval, the change, and the p-value
			of a Mann-Whitney U test (golang.org/x/perf/benchmath).

			A benchmark fails when it got worse by more than --threshold with
			p <= --alpha. "Worse" follows the unit: more sec/op, B/op or
			allocs/op, or fewer GFLOP/s, GB/s, MB/s or tokens/s ("Unit X
			better=higher|lower" lines decide; otherwise a unit ending in /s is
			a rate, one ending in /op a cost).

			A benchmark (or unit) of OLD that NEW lacks is an error, and so are
			two files with no benchmark and unit in common (sec/op against
			GFLOP/s only): a renamed benchmark must not switch the check off.
			--allow-missing lets them pass and names them on stderr.
			Benchmarks new in NEW are listed, not failed. With too few runs to
			ever reach significance (fewer than 4 per side at α = 0.05; use
			-count 10 or more) a change is reported as "too few samples" and
			does not fail.

			A value no benchmark measures (NaN, ±Inf, a negative or zero time
			or rate) is an error naming its file and line.

			Configuration lines (goos, pkg, cpu, fingerprint, ktune-version,
			...) are respected: keys that vary inside a file (pkg) group the
			benchmarks; keys constant in each file but different between them
			(the two builds' versions) are printed above the table, with a
			warning when the machines differ.

			Exit status: 0 no regression; 1 a regression found (each one named);
			2 a usage or input error (a bad flag or argument, an unreadable
			file, a bad value, a missing benchmark), with one error line.
		`),
		Example: cli.Doc(`
			$ go test -run '^$' -bench . -count 10 ./kernels/gemm > new.txt
			$ kprofile regress base.txt new.txt
			$ kprofile regress --threshold 10% --alpha 0.01 -o md base.txt new.txt
			$ kprofile regress --allow-missing base.txt new.txt
		`),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Old, o.New = args[0], args[1]
			t, err := ParseThreshold(threshold)
			if err != nil {
				return err
			}
			o.Threshold = t
			if !(o.Alpha > 0 && o.Alpha < 1) {
				return cli.Usagef("--alpha %v: must be between 0 and 1", o.Alpha)
			}
			if err := checkFormat(o.Format); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runRegress(f, o)
		},
	}
	cmd.Flags().StringVar(&threshold, "threshold", "5%", "slowdown that fails the check, as a percentage (5%) or a fraction (0.05)")
	cmd.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test")
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "table format: text or md")
	cmd.Flags().BoolVar(&o.AllowMissing, "allow-missing", false, "let benchmarks of OLD that NEW lacks pass (named on stderr) instead of failing with exit 2")
	return cmd
}

// ParseThreshold reads "5%" or "0.05" as 0.05; errors are UsageErrors.
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, cli.Usagef("--threshold %q: want a percentage such as 5%% or a fraction such as 0.05", s)
	}
	if pct {
		v /= 100
	} else if v >= 1 {
		return 0, cli.Usagef("--threshold %q: a bare number is a fraction; write %s%% for a percentage", s, t)
	}
	if v < 0 {
		return 0, cli.Usagef("--threshold %q: must not be negative", s)
	}
	return v, nil
}

func runRegress(f *cli.Factory, o *RegressOptions) error {
	old, err := reports.ReadBenchFile(o.Old)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	new, err := reports.ReadBenchFile(o.New)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	opt := reports.DefaultRegressOptions
	opt.Threshold, opt.Alpha = o.Threshold, o.Alpha
	rep := reports.Regress(old, new, opt)
	missing := rep.Missing()
	switch {
	case rep.Compared() == 0 && !o.AllowMissing:
		return &exitError{code: 2, err: fmt.Errorf("%s and %s have no benchmark and unit in common (%s against %s): nothing to check (--allow-missing to accept)",
			o.Old, o.New, benchSummary(old), benchSummary(new))}
	case len(missing) > 0 && !o.AllowMissing:
		return &exitError{code: 2, err: fmt.Errorf("%d benchmark(s) of %s missing from %s: %s (renamed or dropped? --allow-missing to accept)",
			len(missing), o.Old, o.New, diffNames(missing, 3))}
	}

	w := f.Out
	for _, c := range rep.Common {
		fmt.Fprintf(w, "%s: %s\n", c[0], c[1])
	}
	for _, d := range rep.Differ {
		fmt.Fprintf(w, "%s: %s (old) vs %s (new)\n", d[0], orNone(d[1]), orNone(d[2]))
	}
	header, rows := rep.Table()
	if err := cli.Table(w, o.Format, header, rows); err != nil {
		return err
	}
	for _, m := range rep.Warnings {
		fmt.Fprintf(f.Err, "warning: %s\n", m)
	}
	for _, d := range missing {
		fmt.Fprintf(f.Err, "warning: %s (%s) is missing from %s (allowed by --allow-missing): not checked\n", d.Label(), d.Unit, o.New)
	}
	if rep.Compared() == 0 {
		fmt.Fprintf(f.Err, "warning: %s and %s have no benchmark and unit in common (allowed by --allow-missing): nothing was checked\n", o.Old, o.New)
	}
	notes := map[string]bool{}
	for _, d := range rep.Diffs {
		for _, n := range d.Notes {
			if !notes[n] {
				notes[n] = true
				fmt.Fprintf(w, "note: %s\n", n)
			}
		}
	}
	few := 0
	for _, d := range rep.Diffs {
		if d.Verdict == reports.TooFewSamples {
			few++
		}
	}
	if few > 0 {
		fmt.Fprintf(f.Err, "warning: %d comparison(s) had too few samples to show any change at α = %g (run -count 10 or more); they cannot fail this check\n", few, o.Alpha)
	}
	reg := rep.Regressions()
	if len(reg) == 0 {
		fmt.Fprintf(w, "no regression beyond %.3g%% at α = %g\n", 100*o.Threshold, o.Alpha)
		return nil
	}
	var names []string
	for _, d := range reg {
		fmt.Fprintf(w, "REGRESSION: %s: %s %+.1f%% (%s)\n", d.Label(), d.Unit, 100*d.Delta, d.Cmp)
		names = append(names, d.Label()+" ("+d.Unit+")")
	}
	return &exitError{code: 1, err: fmt.Errorf("%d regression(s) beyond %.3g%% at α = %g: %s",
		len(reg), 100*o.Threshold, o.Alpha, strings.Join(names, ", "))}
}

// diffNames lists up to n diffs as "name (unit)", then how many more.
func diffNames(ds []reports.BenchDiff, n int) string {
	var names []string
	for i, d := range ds {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(ds)-n))
			break
		}
		names = append(names, d.Label()+" ("+d.Unit+")")
	}
	return strings.Join(names, ", ")
}

// benchSummary says what a file holds: "3 benchmarks in sec/op, GFLOP/s".
func benchSummary(bf *reports.BenchFile) string {
	return fmt.Sprintf("%d benchmark(s) in %s", len(bf.Benchmarks()), strings.Join(bf.UnitNames(), ", "))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// exitError carries a command's exit status: regress exits 1 for a
// regression; every command exits 2 for an unreadable or invalid input.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

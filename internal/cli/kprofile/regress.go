package kprofile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/cli"
	"github.com/ktune/ktune/reports"
)

// RegressOptions are the flags and arguments of kprofile regress.
type RegressOptions struct {
	Old, New  string
	Threshold float64 // fraction (0.05 for "5%")
	Alpha     float64
	Format    string // text or md
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

			It exits 1 when a benchmark got worse by more than --threshold with
			p <= --alpha, and names each such benchmark; 0 otherwise; 2 when a
			file cannot be read. "Worse" follows the unit: more sec/op, B/op or
			allocs/op, or fewer GFLOP/s, GB/s, MB/s or tokens/s ("Unit X
			better=higher|lower" lines decide; otherwise a unit ending in /s is
			a rate, one ending in /op a cost).

			Benchmarks present in one file only are listed, not failed. With
			too few runs to ever reach significance (fewer than 4 per side at
			α = 0.05; use -count 10 or more) a change is reported as "too few
			samples" and does not fail.

			Configuration lines (goos, pkg, cpu, fingerprint, ktune-version,
			...) are respected: keys that vary inside a file (pkg) group the
			benchmarks; keys constant in each file but different between them
			(the two builds' versions) are printed above the table, with a
			warning when the machines differ.
		`),
		Example: cli.Doc(`
			$ go test -run '^$' -bench . -count 10 ./kernels/gemm > new.txt
			$ kprofile regress base.txt new.txt
			$ kprofile regress --threshold 10% --alpha 0.01 -o md base.txt new.txt
		`),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Old, o.New = args[0], args[1]
			t, err := ParseThreshold(threshold)
			if err != nil {
				return err
			}
			o.Threshold = t
			if o.Alpha <= 0 || o.Alpha >= 1 {
				return fmt.Errorf("--alpha %v: must be between 0 and 1", o.Alpha)
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
	return cmd
}

// ParseThreshold reads "5%" or "0.05" as 0.05.
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("--threshold %q: want a percentage such as 5%% or a fraction such as 0.05", s)
	}
	if pct {
		v /= 100
	} else if v >= 1 {
		return 0, fmt.Errorf("--threshold %q: a bare number is a fraction; write %s%% for a percentage", s, t)
	}
	if v < 0 {
		return 0, fmt.Errorf("--threshold %q: must not be negative", s)
	}
	return v, nil
}

func runRegress(f *cli.Factory, o *RegressOptions) error {
	switch o.Format {
	case "text", "", "md", "markdown":
	default:
		return fmt.Errorf("unknown table format %q (text or md)", o.Format)
	}
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

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// exitError carries a command's exit status: regress exits 1 for a
// regression and 2 for an unreadable file.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

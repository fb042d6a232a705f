package ktune

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/roofline"
	"github.com/ktune/ktune/tuner"
	"github.com/ktune/ktune/tuner/endtoend"
)

// TuneOptions are the main job's options.
type TuneOptions struct {
	*cli.Factory
	Quick   bool
	Budget  time.Duration
	Dir     string
	Only    string
	Allow   string
	Threads string
	Config  string
	Format  string
	// ListWorkloads prints the workloads (timed and verification shapes)
	// instead of tuning.
	ListWorkloads bool
	// NoCeilings skips measuring the machine's roofs (tests).
	NoCeilings bool
	// Ceilings replaces roofline.Measure (tests).
	Ceilings func(ctx context.Context, o roofline.Options) (*roofline.Ceilings, error)
	// Tune replaces tuner.Run (tests).
	Tune func(ctx context.Context, opt tuner.Options) (*profile.Profile, string, error)
	// Check runs the end-to-end check (--check).
	Check bool
}

// runEndToEnd is the end-to-end check (tests shrink it).
var runEndToEnd = endtoend.Run

func (o *TuneOptions) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&o.Quick, "quick", false, "a short run (≤ 2 minutes here): fewer shapes, fewer samples")
	fl.DurationVar(&o.Budget, "budget", 0, "bound on the tuning wall time (default 10m, 2m with --quick)")
	fl.StringVar(&o.Dir, "out", "", "folder for the profile and plots (default: the ktune folder in the user config directory)")
	fl.StringVar(&o.Only, "only", "", "re-tune only these ops or families (comma-separated, e.g. gemm.gemv,kda) in the existing profile")
	fl.StringVar(&o.Allow, "allow", "", "accuracy classes allowed besides f32 and int8act (e.g. bf16act)")
	fl.StringVar(&o.Threads, "threads", "", "thread budgets to tune, comma-separated (default 1, 2, 4, …, the physical cores and the usable CPUs: see ktune detect)")
	fl.StringVar(&o.Config, "config", "", "a model config.json (default: the built-in Kimi-Linear-48B-A3B)")
	fl.StringVarP(&o.Format, "output", "o", "text", "summary table format: text or md")
	fl.BoolVar(&o.Check, "check", true, "end with the end-to-end check: the engine on a synthetic model at Kimi Linear's widths (2 layers, q4), with the new profile and without it, alternating (pp64, pp512, tg16 at 1 thread and the most tuned); a profile slower end to end is marked so and krun does not use it unless named")
	fl.BoolVar(&o.ListWorkloads, "list-workloads", false, "list what would be tuned (with --quick, --only, --config): each workload's timed shape and the shape its candidates are checked at against the reference, then exit")
}

func (o *TuneOptions) tunerOptions() (tuner.Options, error) {
	opt := tuner.Options{Quick: o.Quick, Budget: o.Budget, Dir: o.Dir, Only: o.Only}
	// every flag is checked here, before a second of measuring
	if err := checkFormat(o.Format); err != nil {
		return opt, err
	}
	switch {
	case opt.Budget < 0:
		return opt, cli.Usagef("--budget %v: a duration of 0 (the default) or more", opt.Budget)
	case opt.Budget == 0:
		opt.Budget = 10 * time.Minute
		if o.Quick {
			opt.Budget = 2 * time.Minute
		}
	}
	if o.Config != "" {
		c, err := arch.Load(o.Config)
		if err != nil {
			return opt, &cli.UsageError{Err: fmt.Errorf("--config: %v", err)}
		}
		opt.Config, opt.ModelName = c, o.Config
	}
	cfg := opt.Config
	if cfg == nil {
		cfg = arch.Kimi48B()
	}
	if _, err := tuner.FilterOps(tuner.Workloads(cfg, tuner.FullClasses, o.Quick), o.Only); err != nil {
		return opt, &cli.UsageError{Err: err}
	}
	opt.Classes = append([]kernel.Class{}, kernel.DefaultClasses...)
	if o.Allow != "" {
		cs, err := kernel.ParseClasses(o.Allow)
		if err != nil {
			return opt, cli.Usagef("--allow: %v", err)
		}
		for _, c := range cs {
			if !containsClass(opt.Classes, c) {
				opt.Classes = append(opt.Classes, c)
			}
		}
	}
	if o.Threads != "" {
		ts, err := cli.ThreadList(o.Err, "--threads", o.Threads, nil)
		if err != nil {
			return opt, err
		}
		opt.Threads = ts
	}
	if o.Dir != "" {
		d, err := outDir(o.Dir)
		if err != nil {
			return opt, err
		}
		opt.Dir = d
	} else if err := writable(profile.DefaultDir()); err != nil {
		return opt, cli.Usagef("the profile folder %s: %v (give --out DIR)", profile.DefaultDir(), err)
	}
	return opt, nil
}

// listWorkloads prints the workloads a run with these flags tunes: op,
// dtype, class, projection, the timed shape, and the shape candidates are
// verified at (the timed one unless the family declares a smaller one with
// the same panels, chunks and context splits).
func listWorkloads(o *TuneOptions) error {
	if err := checkFormat(o.Format); err != nil {
		return err
	}
	cfg := arch.Kimi48B()
	if o.Config != "" {
		c, err := arch.Load(o.Config)
		if err != nil {
			return &cli.UsageError{Err: fmt.Errorf("--config: %v", err)}
		}
		cfg = c
	}
	sc := tuner.FullClasses
	if o.Quick {
		sc = tuner.QuickClasses
	}
	ws, err := tuner.FilterOps(tuner.Workloads(cfg, sc, o.Quick), o.Only)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if err := tuner.CheckWorkloads(ws); err != nil {
		return err
	}
	var rows [][]string
	for _, w := range ws {
		verify := "same"
		if v := w.VerifyShape(); v.String() != w.Shape.String() {
			verify = v.String()
		}
		rows = append(rows, []string{w.Op, string(w.DType), w.ShapeClass, w.Label, w.Shape.String(), verify})
	}
	return cli.Table(o.Out, o.Format, []string{"op", "dtype", "class", "for", "timed at", "verified at"}, rows)
}

func containsClass(cs []kernel.Class, c kernel.Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// endReserve is the part of the budget kept for the end of a run: the
// ceilings re-measured (about 5 s on 2 cores), the plots and the table.
const endReserve = 15 * time.Second

// checkReserve is the part kept for the end-to-end check (--check): 46 s
// in a quiet default run on 2 cores, 52 s in CI's smoke (3 rounds of
// pp64, pp512, tg16 both ways at two budgets, each the median of ≥ 3
// passes and ≥ 250 ms, and the model's build); 25 s, its figure before the
// passes were repeated, let the default run end 46 s past its 10 minutes.
const checkReserve = 50 * time.Second

// dramSampleEvery is how often the DRAM read ceiling is re-measured while
// tuning (a few hundred milliseconds each time on 2 cores); tests whose
// verdict must not hang on the host's real bandwidth turn dramSampling off.
const dramSampleEvery = 30 * time.Second

var dramSampling = true

// measureCeilings is roofline.Measure, recheckCeilings roofline.Recheck
// (tests shrink or fake them); sampleLoad is cpu.SampleLoad.
var (
	measureCeilings = roofline.Measure
	recheckCeilings = roofline.Recheck
	sampleLoad      = cpu.SampleLoad
)

// runTune is the main job: detect, ceilings, tune, write, summarise.
func runTune(o *TuneOptions) error {
	if o.ListWorkloads {
		return listWorkloads(o)
	}
	opt, err := o.tunerOptions()
	if err != nil {
		return err
	}
	ctx, stop, interrupted := cli.SignalContext(context.Background())
	defer stop()
	start := time.Now()
	info := cpu.Get()
	fmt.Fprintf(o.Out, "ktune: %s, %d usable CPUs (%d cores), fingerprint %s\n", info.Brand, info.Usable, info.PhysicalCores, info.Fingerprint())
	if info.Mask != "" {
		fmt.Fprintf(o.Out, "masks: %s\n", info.Mask)
	}
	var ceil *roofline.Ceilings
	prog := cli.NewProgress(o.Err)
	load0, loadErr := sampleLoad()
	var noisy []string
	var sampler *roofline.DRAMSampler // DRAM read re-measured during the run
	if !o.NoCeilings {
		measure := o.Ceilings
		if measure == nil {
			measure = measureCeilings
		}
		threads := opt.Threads
		if threads == nil {
			threads = tuner.DefaultThreads()
		}
		c, err := measure(ctx, roofline.Options{Quick: true, Threads: threads,
			Progress: func(done, total int, what string) { prog("ceilings", done, total, what) }})
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(fmt.Errorf("interrupted while measuring the ceilings: nothing was written"))
			}
			return fmt.Errorf("ceilings: %v", err)
		}
		raw, err := c.JSON()
		if err != nil {
			return err
		}
		ceil, opt.Ceilings = c, raw
		if dramSampling {
			sampler = roofline.NewDRAMSampler(c)
			defer sampler.Close()
		}
		took := time.Since(start)
		fmt.Fprintf(o.Err, "ceilings measured in %s\n", took.Round(time.Second))
		if loadErr == nil {
			if l, err := sampleLoad(); err == nil {
				if w := l.Since(load0).Warning(); w != "" {
					fmt.Fprintf(o.Err, "warning: %s: the ceilings (and every %% of roof) may be low; run ktune on a quiet machine\n", w)
				}
			}
		}
		// the budget covers the whole job: the ceilings, the tuning, the
		// re-check, plots and table at the end (endReserve) and the
		// end-to-end check
		reserve := endReserve
		if o.Check {
			reserve += checkReserve
		}
		opt.Budget = max(opt.Budget-took-reserve, opt.Budget/4)
	}
	opt.Log = o.Err
	opt.Progress = func(ev tuner.Event) {
		what := ev.What
		if ev.Entry != nil {
			what += ": " + ev.Entry.Best.Variant + " " + ev.Entry.Best.Params.String()
			if sampler != nil {
				sampler.SampleEvery(dramSampleEvery)
			}
		}
		prog("tuning", ev.Done, ev.Total, what)
	}
	tune := o.Tune
	if tune == nil {
		tune = tuner.Run
	}
	p, path, err := tune(ctx, opt)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(fmt.Errorf("interrupted: what was measured is kept and the next run resumes (%v)", err))
		}
		return err
	}
	// was the machine the same machine all along?
	if ceil != nil && !o.NoCeilings {
		if d, err := recheckCeilings(ctx, ceil); err == nil {
			noisy = append(noisy, d.Moved()...)
		} else if ctx.Err() == nil {
			fmt.Fprintf(o.Err, "warning: re-measuring the ceilings: %v\n", err)
		}
	}
	if loadErr == nil {
		if l, err := sampleLoad(); err == nil {
			if w := l.Since(load0).Warning(); w != "" {
				noisy = append(noisy, w)
			}
		}
	}
	rewrite := len(noisy) > 0
	if sampler != nil && ctx.Err() == nil {
		sampler.Sample()
		noisy = append(noisy, sampler.Apply(ceil)...)
		raw, err := ceil.JSON()
		if err != nil {
			return err
		}
		p.Ceilings, rewrite = raw, true
	}
	stopped := ctx.Err() != nil
	if stopped { // during the re-check: the profile stands, its quiet is unproven
		noisy = append(noisy, "the end-of-run re-check was interrupted: whether the machine stayed quiet is unknown")
		rewrite = true
	}
	if rewrite {
		p.Noisy = noisy
		if err := p.Write(path); err != nil {
			return err
		}
	}
	if stopped {
		return interrupted(fmt.Errorf("interrupted during the end-of-run re-check: %s is written and marked noisy (not re-checked); plots and the table are skipped", path))
	}
	if o.Check {
		if err := o.endToEnd(ctx, p, path, opt.Threads, prog, interrupted); err != nil {
			return err
		}
	}
	fmt.Fprintln(o.Out)
	if err := summaryTable(o.Out, o.Format, p, ceil, strings.TrimSuffix(path, ".json")+"-choices.md"); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nprofile: %s\n", path)
	if ceil != nil {
		plots, err := profilePlots(filepath.Dir(path), ceil, p)
		if err != nil {
			return err
		}
		for _, pl := range plots {
			fmt.Fprintf(o.Out, "plot:    %s\n", pl)
		}
	}
	fmt.Fprintf(o.Out, "tuned %d entries, %d of %d candidates measured (%.0f%%), %d rejected by the correctness gate, in %s\n",
		len(p.Entries), p.Stats.Measured, p.Stats.Space, 100*float64(p.Stats.Measured)/float64(max(p.Stats.Space, 1)),
		p.Stats.Rejected, time.Since(start).Round(time.Second))
	if c := reports.ConfirmSummary(p); c != "" {
		fmt.Fprintln(o.Out, c)
	}
	for _, n := range noisy {
		fmt.Fprintf(o.Err, "warning: %s\n", n)
	}
	if len(noisy) > 0 {
		fmt.Fprintf(o.Err, "warning: the profile is marked noisy (kprofile show says so): its choices stand, its figures and %% of roof are suspect; run ktune again on a quiet machine\n")
	}
	return nil
}

// endToEnd runs the end-to-end check on p (written at path), records it in
// the profile and prints its table; a loss is a warning (krun then does not
// use the profile unless it is named).
func (o *TuneOptions) endToEnd(ctx context.Context, p *profile.Profile, path string, threads []int,
	prog func(phase string, done, total int, what string), interrupted func(error) error) error {
	if threads == nil {
		threads = tuner.DefaultThreads()
	}
	budgets := []int{slices.Min(threads)}
	if mx := slices.Max(threads); mx != budgets[0] {
		budgets = append(budgets, mx)
	}
	start := time.Now()
	rec, err := runEndToEnd(ctx, p, endtoend.Options{Threads: budgets,
		Progress: func(done, total int, what string) { prog("end-to-end check", done, total, what) }})
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(fmt.Errorf("interrupted during the end-to-end check: %s is written without it; plots and the table are skipped", path))
		}
		// the profile is written and stands; the check is what is missing
		fmt.Fprintf(o.Err, "warning: the end-to-end check could not run (%v): %s has none\n", err, path)
		return nil
	}
	p.EndToEnd = rec
	if err := p.Write(path); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nend-to-end check (%s, %d alternating rounds, %s):\n", rec.Model, rec.Rounds, time.Since(start).Round(time.Second))
	if err := cli.Table(o.Out, o.Format, reports.EndToEndHeader, reports.EndToEndRows(rec)); err != nil {
		return err
	}
	fmt.Fprintln(o.Out, rec.Gain())
	if rec.Busy != "" {
		fmt.Fprintf(o.Err, "warning: end-to-end check: %s: its figures are suspect\n", rec.Busy)
	}
	if rec.Verdict == profile.VerdictLoss {
		fmt.Fprintf(o.Err, "warning: the engine ran slower with the new profile than without it (%s): krun will not use it unless it is named (--profile %s); run ktune again on a quiet machine\n", rec.Worst(), path)
	}
	return nil
}

// summaryTable prints the profile's choices: the table kprofile show prints
// (reports.ChoicesTable).
func summaryTable(w io.Writer, format string, p *profile.Profile, ceil *roofline.Ceilings, full string) error {
	rows := reports.ChoicesTable(p, ceil)
	if len(rows) <= summaryRows {
		return cli.Table(w, format, reports.ChoicesHeader, rows)
	}
	// a terminal's worth: one row per op; the whole table in a file
	var b strings.Builder
	if err := cli.Table(&b, "md", reports.ChoicesHeader, rows); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(full, []byte(b.String())); err != nil {
		return err
	}
	type opSum struct {
		n       int
		threads []int
		speedup []float64
	}
	var order []string
	by := map[string]*opSum{}
	for _, r := range reports.ChoiceRows(p) {
		s := by[r.E.Op]
		if s == nil {
			s = &opSum{}
			by[r.E.Op] = s
			order = append(order, r.E.Op)
		}
		s.n++
		if !slices.Contains(s.threads, r.E.Threads) {
			s.threads = append(s.threads, r.E.Threads)
		}
		if x := r.E.Speedup(); x > 0 {
			s.speedup = append(s.speedup, x)
		}
	}
	var tab [][]string
	for _, op := range order {
		s := by[op]
		slices.Sort(s.threads)
		vs := "—"
		if len(s.speedup) > 0 {
			slices.Sort(s.speedup)
			vs = fmt.Sprintf("%.2f× (%.2f–%.2f×)", s.speedup[len(s.speedup)/2], s.speedup[0], s.speedup[len(s.speedup)-1])
		}
		th := make([]string, len(s.threads))
		for i, t := range s.threads {
			th[i] = fmt.Sprint(t)
		}
		tab = append(tab, []string{op, fmt.Sprint(s.n), strings.Join(th, ","), vs})
	}
	if err := cli.Table(w, format, []string{"op", "choices", "threads", "vs default (median, range)"}, tab); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d choices in all: %s (kprofile show prints them too)\n", len(rows), full)
	return nil
}

// summaryRows is the most rows ktune prints of its choices; a run with more
// prints one row per op and writes the whole table beside the profile.
const summaryRows = 40

// profilePlots draws a roofline per thread count with the tuned kernels'
// points (the best entry per op, shape class and thread count it ran on;
// roofline.png/.svg is the largest count's) and the bandwidth sweep into
// dir, PNG and SVG.
func profilePlots(dir string, c *roofline.Ceilings, p *profile.Profile) ([]string, error) {
	best := map[string]*profile.Entry{}
	var order []string
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.FLOPsZero() {
			continue
		}
		// one point per op and shape class (the plot stays readable): Q4 or
		// f32 weights, the first projection of the class
		if e.DType == kernel.Q8 || e.DType == kernel.BF16 {
			continue
		}
		k := fmt.Sprintf("%s %s %d", e.Op, e.ShapeClass, e.Best.Threads)
		if b, ok := best[k]; !ok {
			order = append(order, k)
			best[k] = e
		} else if e.Label == b.Label && e.Best.Median < b.Best.Median {
			best[k] = e
		}
	}
	var pts []roofline.Point
	for _, k := range order {
		e := best[k]
		label := e.Op + " " + e.ShapeClass
		if e.Label != "" && !strings.HasPrefix(e.Op, e.Label) {
			label = e.Label + " " + e.ShapeClass
		}
		pts = append(pts, roofline.Point{Label: label + " " + string(e.DType), Op: e.Op, Variant: e.Best.Variant, DType: string(e.DType),
			Class: string(e.Class), Shape: e.Shape.String(), Threads: e.Best.Threads, Cold: e.Mem == "dram",
			FLOPs: e.Best.FLOPs, Bytes: e.Best.Bytes, Footprint: e.Best.Footprint, Seconds: e.Best.Median})
	}
	out, err := reports.PlotRooflines(c, pts, dir, "png", "svg")
	if err != nil {
		return out, err
	}
	for _, ext := range []string{"png", "svg"} {
		bp := filepath.Join(dir, "bandwidth."+ext)
		if err := reports.PlotBandwidth(c, bp); err != nil {
			return out, err
		}
		out = append(out, bp)
	}
	return out, nil
}

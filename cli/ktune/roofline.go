package ktune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/roofline"
)

// RooflineOptions are roofline's flags.
type RooflineOptions struct {
	*cli.Factory
	Quick   bool
	Threads string
	OutDir  string
	Points  bool
	Format  string

	// tune, if set, adjusts what is measured before it runs (tests make
	// the sweep tiny).
	tune func(*roofline.Options, *roofline.PointOptions, *[]roofline.PointSpec)
}

// NewCmdRoofline builds `ktune roofline`.
func NewCmdRoofline(f *cli.Factory, runF func(*RooflineOptions) error) *cobra.Command {
	opts := &RooflineOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "roofline",
		Short: "Measure this machine's compute and bandwidth ceilings and place the kernels on its roofline",
		Long: cli.Doc(`
			Measure the machine's ceilings: the core clock (a dependent add
			chain), peak FLOP/s or OP/s of every compute instruction class
			this CPU runs (scalar and vector FMA, VNNI int8 dot products,
			BF16 dot products), and read, write, copy and triad bandwidth
			over working sets from 4 KiB to past the last-level cache, for
			each thread count; each memory level's plateau is reported beside
			the cache size detection found. Then time the default kernel
			variants at Kimi Linear shapes (MoE, KDA and GEMV decode with
			the caches flushed, KDA and GEMM prefill, MLA decode at 4K, 32K
			and 128K of context) and place them on the roofline.

			Writes into --out: ceilings.json (what a tuning profile embeds),
			points.json, a roofline per thread count (roofline-t1.png/.svg,
			roofline-t2.png/.svg, …; roofline.png/.svg is the largest count's,
			where the kernel points are), and bandwidth.png/.svg. On the
			roofline the points are coloured and shaped by op family,
			numbered, and listed by number in a table below the plot; a red
			ring marks a point above its roof. --quick takes under a minute on
			a 2-core machine; the default sweep takes a few minutes.
		`) + exitCodes,
		Example: "  ktune roofline --quick\n  ktune roofline --threads 1,2 --out ./out -o md",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRoofline(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Quick, "quick", false, "fewer working sets, shorter timings (under a minute)")
	cmd.Flags().StringVar(&opts.Threads, "threads", "", "thread counts, e.g. 1,2 or 1-8 (default 1, 2, 4, …, the physical cores and the usable CPUs: see ktune detect)")
	cmd.Flags().StringVar(&opts.OutDir, "out", "", "output folder (default the ktune folder under the user config directory)")
	cmd.Flags().BoolVar(&opts.Points, "points", true, "also measure the kernel points at Kimi shapes")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	return cmd
}

// checkFormat refuses a table format other than text and md.
func checkFormat(f string) error {
	switch f {
	case "text", "", "md", "markdown":
		return nil
	}
	return cli.Usagef("-o: unknown table format %q (text or md)", f)
}

// outDir is dir (default DefaultOutDir), created if needed and checked
// writable before any work, so a bad --out fails at once.
func outDir(dir string) (string, error) {
	if dir == "" {
		d, err := DefaultOutDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", cli.Usagef("--out %s: %v", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".ktune-write-check-")
	if err != nil {
		return "", cli.Usagef("--out %s: not writable (%v)", dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return dir, nil
}

// writable checks, creating nothing, that dir (or, where it does not
// exist yet, its nearest existing parent, where it would be made) takes a
// new file: a probe file is created and removed.
func writable(dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a folder", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return errors.Unwrap(err)
		}
		d = filepath.Dir(d)
	}
	f, err := os.CreateTemp(d, ".ktune-write-check-")
	if err != nil {
		return fmt.Errorf("%s not writable (%v)", d, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// DefaultOutDir is the ktune folder under the user's config directory.
func DefaultOutDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ktune"), nil
}

func runRoofline(ctx context.Context, opts *RooflineOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop, interrupted := cli.SignalContext(ctx)
	defer stop()
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	threads, err := cli.ThreadList(opts.Err, "--threads", opts.Threads, nil)
	if err != nil {
		return err
	}
	out, err := outDir(opts.OutDir)
	if err != nil {
		return err
	}

	mo := roofline.Options{Quick: opts.Quick, Threads: threads}
	po := roofline.PointOptions{Quick: opts.Quick}
	specs := roofline.KimiPoints(arch.Kimi48B().Shapes(), opts.Quick)
	if !opts.Points {
		specs = nil
	}
	if opts.tune != nil {
		opts.tune(&mo, &po, &specs)
	}
	prog := cli.NewProgress(opts.Err)
	mo.Progress = func(done, total int, what string) { prog("ceilings", done, total, what) }
	c, err := roofline.Measure(ctx, mo)
	if err != nil {
		return interrupted(err)
	}
	var pts []roofline.Point
	if len(specs) > 0 {
		po.Threads = c.MaxThreads()
		po.Progress = func(done, total int, what string) { prog("kernel points", done, total, what) }
		var skipped []error
		pts, skipped, err = roofline.MeasurePoints(ctx, specs, po)
		if err != nil {
			return interrupted(err)
		}
		for _, e := range skipped {
			fmt.Fprintf(opts.Err, "skipped point: %v\n", e)
		}
	}

	wrote := []string{filepath.Join(out, "ceilings.json"), filepath.Join(out, "points.json")}
	if err := c.Save(wrote[0]); err != nil {
		return err
	}
	pb, err := json.MarshalIndent(pts, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(wrote[1], append(pb, '\n')); err != nil {
		return err
	}
	plots, err := reports.PlotRooflines(c, pts, out, "png", "svg")
	if err != nil {
		return err
	}
	wrote = append(wrote, plots...)
	for _, ext := range []string{"png", "svg"} {
		p := filepath.Join(out, "bandwidth."+ext)
		if err := reports.PlotBandwidth(c, p); err != nil {
			return err
		}
		wrote = append(wrote, p)
	}
	if err := printCeilings(opts.Out, opts.Format, c, pts); err != nil {
		return err
	}
	fmt.Fprintln(opts.Out)
	for _, p := range wrote {
		fmt.Fprintf(opts.Out, "wrote %s\n", p)
	}
	return nil
}

func printCeilings(w io.Writer, format string, c *roofline.Ceilings, pts []roofline.Point) error {
	fmt.Fprintf(w, "%s, clock %.2f GHz measured (%.2f GHz nominal)\n\n", c.CPU, c.ClockGHz, c.NominalGHz)
	var rows [][]string
	for _, t := range c.Threads {
		for _, cc := range c.ComputeAt(t) {
			fig := fmt.Sprintf("%.1f %s", cc.GFLOPS, cc.Unit())
			if cc.PerCycle > 0 {
				fig += fmt.Sprintf(" (%.1f/cycle/thread)", cc.PerCycle)
			}
			rows = append(rows, []string{cc.Name, cc.ISA, strconv.Itoa(t), fig, ""})
		}
	}
	for _, s := range c.Sweeps {
		for _, p := range s.Plateaus {
			cache := "-"
			if p.CacheBytes > 0 {
				cache = cli.HumanBytes(p.CacheBytes)
			}
			note := fmt.Sprintf("%s: %s (%d pts in %s–%s)", p.Level, cache, p.Points, cli.HumanBytes(p.Lo), hiBytes(p.Hi))
			if p.Note != "" {
				note = p.Level + ": " + cache + "; " + p.Note
			}
			rows = append(rows, []string{s.Kind + " " + p.Level, "", strconv.Itoa(s.Threads), fmt.Sprintf("%.1f GB/s", p.GBs), note})
		}
	}
	if err := cli.Table(w, format, []string{"ceiling", "isa", "threads", "figure", "level: cache size (window)"}, rows); err != nil {
		return err
	}
	if len(pts) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, p := range pts {
		frac := p.RoofCell(c)
		mode := "warm"
		if p.Cold {
			mode = "cold"
		}
		rows = append(rows, []string{p.Label, p.Op + "/" + p.Variant, p.DType, p.Shape, strconv.Itoa(p.Threads), mode,
			fmt.Sprintf("%.3g", p.AI()), fmt.Sprintf("%.3g", p.GFLOPS()), fmt.Sprintf("%.3g", p.GBs()), fmt.Sprintf("%.3g", p.Seconds*1e3), frac})
	}
	return cli.Table(w, format, []string{"point", "variant", "dtype", "shape", "threads", "caches", "FLOP/B", "GFLOP/s", "GB/s", "ms", "% of roof"}, rows)
}

func hiBytes(b int64) string {
	if b >= 1<<61 {
		return "∞"
	}
	return cli.HumanBytes(b)
}

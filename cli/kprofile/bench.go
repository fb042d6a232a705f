package kprofile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/benchconf"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/tuner"
)

// BenchOptions are the arguments of kprofile bench.
type BenchOptions struct {
	Profile   string // "": this machine's profile in the default folder, else the defaults
	Count     int
	Ops       string // comma-separated ops or families ("" all)
	Out       string // "" or "-": stdout
	BenchTime time.Duration
}

// NewCmdBench builds `kprofile bench [PROFILE]`.
func NewCmdBench(f *cli.Factory, runF func(*BenchOptions) error) *cobra.Command {
	o := &BenchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [PROFILE]",
		Short: "Benchmark the kernels with a profile's choices, in Go benchmark format",
		Long: cli.Doc(`
			bench runs each op, shape and thread budget of a tuning profile with
			the choice the engine makes from it (the profile installed as the
			kernel chooser; an entry this build or CPU cannot run falls back to
			the default, as in the engine) and writes Go benchmark format that
			benchstat and kprofile regress read.

			Without PROFILE it uses this machine's profile in the default ktune
			folder, and without one the defaults at Kimi Linear's quick shapes
			and this machine's default thread counts (ktune detect: 1, 2, 4, …,
			the usable CPUs). A profile of
			another machine is refused in use mode (warning): its shapes are
			then benchmarked with this build's defaults.

			Names follow the kernels' benchmarks: Benchmark<Family>/op=/dtype=/
			variant=/<shape>[/mem=dram]/threads=<n>[-<GOMAXPROCS> when not 1,
			as go test writes]; mem=dram runs
			cycle through copies of the weights that exceed the caches. Each
			line reports sec/op, GFLOP/s and GB/s (the variant's cost count),
			after file configuration lines (goos, goarch, cpu, fingerprint,
			ktune-version, go-version, profile).

			--count repeats the whole list round-robin: every benchmark runs once
			per round, so frequency drift and noisy neighbours spread evenly
			over all of them. The iteration count of each benchmark is fixed in
			the first round (about --benchtime of work) and reused, so rounds
			and builds do the same work. To compare two builds, alternate their
			binaries one round at a time (see kprofile regress --help).

			Exit status: 0 benchmarked; 2 a usage or input error (a bad flag or
			argument, an unreadable or corrupt profile, an -o folder that does
			not exist), checked before anything runs, with one error line; 1
			any other failure.
		`),
		Example: cli.Doc(`
			$ kprofile bench --count 10 -o new.txt
			$ kprofile bench profile.json --ops gemm.gemv,kda --count 10 --benchtime 200ms -o new.txt
			$ kprofile regress old.txt new.txt
		`),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Profile = args[0]
			}
			if o.Count < 1 {
				return cli.Usagef("--count %d: must be at least 1", o.Count)
			}
			if o.BenchTime <= 0 {
				return cli.Usagef("--benchtime %v: must be positive", o.BenchTime)
			}
			if err := checkOutput("-o", o.Out, o.Profile); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runBench(f, o)
		},
	}
	cmd.Flags().IntVar(&o.Count, "count", 1, "rounds over all benchmarks (10 or more for kprofile regress)")
	cmd.Flags().StringVar(&o.Ops, "ops", "", "only these ops or families, comma-separated (e.g. gemm.gemv,kda)")
	cmd.Flags().StringVarP(&o.Out, "output", "o", "", "output file, written atomically at the end (default: standard output as it runs)")
	cmd.Flags().DurationVar(&o.BenchTime, "benchtime", 100*time.Millisecond, "work per benchmark per round")
	return cmd
}

// familyNames are the Benchmark<Family> names the kernel packages use.
var familyNames = map[string]string{"gemm": "GEMM", "kda": "KDA", "mla": "MLA", "moe": "MoE", "norm": "Norm"}

func benchFamily(op string) string {
	fam, _, _ := strings.Cut(op, ".")
	if n, ok := familyNames[fam]; ok {
		return n
	}
	if fam == "" {
		return "Kernel"
	}
	return strings.ToUpper(fam[:1]) + fam[1:]
}

// benchCase is one benchmark: an op at a shape and dtype with the choice
// the engine makes at a thread budget.
type benchCase struct {
	name   string // "GEMM/op=gemv/..." (without the Benchmark prefix)
	op     *kernel.Op
	shape  kernel.Shape
	dt     kernel.DType
	choice kernel.Choice
	cold   bool
	cost   kernel.Cost

	n     int               // iterations per round, fixed in the first
	insts []kernel.Instance // kept between rounds when small
	probs []kernel.Problem
}

// keepBytes bounds the problems a case keeps between rounds; bigger ones
// (MoE blocks, cold weight copies) are rebuilt each round.
const keepBytes = 64 << 20

// benchCases lists what to run: the profile's keys, or the model's quick
// workloads at the default thread budgets; each with the pick of the
// chooser use (a profile; nil: the defaults).
func benchCases(p *profile.Profile, use kernel.Chooser, ops string) ([]*benchCase, []string, error) {
	type key struct {
		op    string
		dt    kernel.DType
		shape kernel.Shape
		t     int
		cold  bool
	}
	var keys []key
	var notes []string
	if p != nil {
		for _, r := range reports.ChoiceRows(p) {
			if err := r.E.Check(p.CPU.Arch); err != nil {
				// the engine's validation: not a shape and budget to run
				notes = append(notes, fmt.Sprintf("%v; skipped", err))
				continue
			}
			keys = append(keys, key{r.E.Op, r.E.DType, r.E.Shape, r.E.Threads, r.E.Mem == "dram"})
		}
	} else {
		for _, w := range tuner.Workloads(arch.Kimi48B(), tuner.QuickClasses, true) {
			for _, t := range tuner.DefaultThreads() {
				keys = append(keys, key{w.Op, w.DType, w.Shape, t, w.Cold})
			}
		}
	}
	var want []string
	if ops != "" {
		want = strings.Split(ops, ",")
		for _, o := range want {
			found := false
			for _, op := range kernel.Ops() {
				found = found || op.Name == o || op.Family() == o
			}
			if !found {
				return nil, nil, cli.Usagef("--ops: unknown op or family %q", o)
			}
		}
	}
	seen := map[string]bool{}
	var out []*benchCase
	for _, k := range keys {
		if len(want) > 0 {
			ok := false
			for _, o := range want {
				ok = ok || k.op == o || strings.HasPrefix(k.op, o+".")
			}
			if !ok {
				continue
			}
		}
		op := kernel.LookupOp(k.op)
		if op == nil {
			notes = append(notes, fmt.Sprintf("%s: op not in this build; skipped", k.op))
			continue
		}
		if u := pool.Default().Size(); k.t > u {
			// a name saying threads=16 over a run on 2 would mislead benchstat
			notes = append(notes, fmt.Sprintf("%s %s %s at %d threads: this machine runs %d at most; skipped", k.op, k.dt, k.shape, k.t, u))
			continue
		}
		ch := kernel.Rules{Chooser: use, Classes: profileClasses(p)}.Choose(k.op, k.dt, k.shape, k.t)
		if ch.Variant == nil {
			notes = append(notes, fmt.Sprintf("%s %s: no variant; skipped", k.op, k.dt))
			continue
		}
		var extra []string
		if k.cold {
			extra = append(extra, "mem=dram")
		}
		name := benchFamily(k.op) + "/" + kernel.BenchName(ch.Variant, k.dt, k.shape, ch.Config.Threads, extra...)
		if seen[name] { // two budgets that run the same choice
			continue
		}
		seen[name] = true
		out = append(out, &benchCase{name: name, op: op, shape: k.shape, dt: k.dt, choice: ch, cold: k.cold,
			cost: ch.Variant.CostAt(k.shape, k.dt, ch.Config)})
	}
	if len(out) == 0 {
		return nil, notes, fmt.Errorf("nothing to benchmark")
	}
	return out, notes, nil
}

func profileClasses(p *profile.Profile) []kernel.Class {
	if p == nil || len(p.Classes) == 0 {
		return nil
	}
	return p.Classes
}

// prepare builds the case's problems (copies whose weights exceed the
// caches for mem=dram cases) and instances.
func (c *benchCase) prepare() error {
	if c.insts != nil {
		return nil
	}
	copies := 1
	if c.cold && c.cost.Bytes > 0 {
		copies = int(min(max(float64(tuner.QuickMeasure.ColdBytes)/c.cost.Bytes, 1), 64))
	}
	for i := 0; i < copies; i++ {
		p, err := c.op.NewProblem(c.shape, c.dt, uint64(1000+i))
		if err != nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
		inst, err := c.choice.Variant.Instantiate(p, c.choice.Config)
		if err != nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
		c.probs = append(c.probs, p)
		c.insts = append(c.insts, inst)
	}
	return nil
}

func (c *benchCase) release() {
	if float64(len(c.insts))*c.cost.Bytes <= keepBytes {
		return
	}
	for _, p := range c.probs {
		if cl, ok := p.(interface{ Close() }); ok {
			cl.Close()
		}
	}
	c.probs, c.insts = nil, nil
}

// run times one round: a warm-up pass over the copies, then n runs
// cycling through them; the first round sets n for about benchTime.
func (c *benchCase) run(benchTime time.Duration) (n int, sec float64, err error) {
	if err := c.prepare(); err != nil {
		return 0, 0, err
	}
	defer c.release()
	i := 0
	step := func() { c.insts[i].Run(); i = (i + 1) % len(c.insts) }
	timeN := func(n int) time.Duration {
		t := time.Now()
		for k := 0; k < n; k++ {
			step()
		}
		return time.Since(t)
	}
	timeN(len(c.insts)) // warm-up
	if c.n == 0 {
		n, d := 1, timeN(1)
		for d < benchTime/2 && n < 1e9 {
			next := n * 2
			if d > 0 {
				next = int(min(max(float64(benchTime)*float64(n)/float64(d)*1.1, float64(n+1)), float64(100*n), 1e9))
			}
			n = next
			d = timeN(n)
		}
		c.n = n
		return n, d.Seconds() / float64(n), nil
	}
	return c.n, timeN(c.n).Seconds() / float64(c.n), nil
}

// benchLine is one result line in Go benchmark format.
func benchLine(c *benchCase, n int, sec float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Benchmark%s", c.name)
	if p := runtime.GOMAXPROCS(0); p != 1 {
		fmt.Fprintf(&b, "-%d", p)
	}
	fmt.Fprintf(&b, "\t%d\t%.1f ns/op", n, sec*1e9)
	if c.cost.FLOPs > 0 {
		fmt.Fprintf(&b, "\t%.3f GFLOP/s", c.cost.FLOPs/sec/1e9)
	}
	if c.cost.Bytes > 0 {
		fmt.Fprintf(&b, "\t%.3f GB/s", c.cost.Bytes/sec/1e9)
	}
	return b.String()
}

func runBench(f *cli.Factory, o *BenchOptions) error {
	path := o.Profile
	if path == "" {
		if def := profile.DefaultPath(); fileExists(def) {
			path = def
		}
	}
	var prof *profile.Profile
	var chooser kernel.Chooser // nil, not a nil *Profile, without one
	source := "defaults (no profile)"
	if path != "" {
		shapes, err := readProfile(path)
		if err != nil {
			return err
		}
		prof = shapes
		use, warns := profile.Load(path)
		for _, w := range warns {
			fmt.Fprintf(f.Err, "warning: %s\n", w)
		}
		source = path
		if use != nil {
			chooser = use
		} else {
			source += " (its shapes; choices: defaults)"
		}
	}
	cases, notes, err := benchCases(prof, chooser, o.Ops)
	for _, n := range notes {
		fmt.Fprintf(f.Err, "note: %s\n", n)
	}
	if err != nil {
		return err
	}

	var buf bytes.Buffer
	var w io.Writer = f.Out
	if o.Out != "" && o.Out != "-" {
		w = &buf
	}
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, strings.TrimSpace(cpu.Get().Brand))
	benchconf.Write(w)
	fmt.Fprintf(w, "profile: %s\n", source)
	fmt.Fprintf(f.Err, "kprofile bench: %d benchmarks × %d rounds, about %v each (%s)\n", len(cases), o.Count, o.BenchTime, source)
	for round := 1; round <= o.Count; round++ {
		for _, c := range cases {
			n, sec, err := c.run(o.BenchTime)
			if err != nil {
				return err
			}
			fmt.Fprintln(w, benchLine(c, n, sec))
		}
		if o.Count > 1 {
			fmt.Fprintf(f.Err, "round %d/%d done\n", round, o.Count)
		}
	}
	if w == &buf {
		if err := atomicfile.WriteBytes(o.Out, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(f.Err, "wrote %s\n", o.Out)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

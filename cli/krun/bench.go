package krun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
	ggufpkg "github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/bench"
	"github.com/ktune/ktune/model/kfile"
)

// BenchOptions are bench's flags.
type BenchOptions struct {
	*cli.Factory
	Model     string
	Synthetic bool
	Layers    int
	DTypes    string
	Prompt    string // -p list
	Gen       string // -n list
	Threads   string // -t list
	Reps      int
	Depth     string // -d list
	Format    string
	Ops       bool
	NoVerify  bool
	Load      string
	// NoWarmup skips the untimed run before each test (llama-bench's
	// --no-warmup).
	NoWarmup bool
	// CPUProfile is a file for a pprof CPU profile of the timed runs ("": none).
	CPUProfile string
	// CacheSpill is a folder for the MLA cache's file-backed pages ("": heap).
	CacheSpill string
	// CacheDType is --cache-dtype.
	CacheDType string
	// GGUFRepack is --gguf-repack.
	GGUFRepack string
	// CeilingBytes is the buffer the read ceiling streams (tests shrink it).
	CeilingBytes int
	// NoPrefetch turns a model file's expert prefetch off (--no-prefetch;
	// model.SetPrefetch).
	NoPrefetch bool
	// LockHot is --lock-hot: each MoE layer's N most-routed experts (by an
	// untimed 64-token prefill) locked in RAM before measuring.
	LockHot int
	// DiskCeilingBytes is what the disk read ceiling reads (tests shrink it).
	DiskCeilingBytes int

	// synthConfig makes the synthetic config (tests use a tiny one).
	synthConfig func(layers int) (*arch.Config, error)
	// verified: check verified the .kt file (loading need not again).
	verified bool
	// chooser is the tuning profile the models follow (nil: none).
	chooser kernel.Chooser
}

// NewCmdBench builds `krun bench`.
func NewCmdBench(f *cli.Factory, runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{Factory: f, CeilingBytes: bench.DefaultCeilingBytes, DiskCeilingBytes: bench.DefaultDiskCeilingBytes, synthConfig: model.SyntheticConfig}
	cmd := &cobra.Command{
		Use:   "bench [MODEL | --synthetic]",
		Short: "Benchmark prefill and decode tokens/s against the bandwidth bound (llama-bench style)",
		Long: cli.Doc(`
			Time prompt processing (pp: one prefill of -p tokens) and token
			generation (tg: -n decode steps of one sequence) for every
			combination of the list flags, -r times each, after a context of -d
			tokens (untimed), and report tokens/s as mean ± sd. Each test
			starts with an untimed warm-up run (a prefill of -p tokens, one
			decode step), as llama-bench's; --no-warmup skips it.

			MODEL is a .kt file or a checkpoint folder (converted with each
			--dtype preset); --synthetic builds random weights at Kimi Linear's
			real widths (hidden 2304, 32 heads, 256 experts of 1024, vocabulary
			163840) cut to --layers layers, in each --dtype preset.

			tg rows also report the fraction of the bandwidth bound: the weight
			bytes one decode token reads (every matrix, the top-k experts, one
			embedding row) times tokens/s, divided by the read ceiling measured
			in this run at the same thread count (a 512 MiB buffer streamed by
			roofline.ReadParallel, best of 3). pp rows report the same for the
			weights the prefill pass read (every matrix, and each expert its
			prompt's tokens touched, once): a floor on the pass's time, which
			its compute adds to. --ops adds a per-op breakdown of
			one decode token (time per op family and each op's roof: its weight
			bytes at the read ceiling) and of the first prefill (per op family
			and per layer, in ms per prompt token). --cpuprofile FILE writes a
			pprof CPU profile of the measurements (model building and the read
			ceiling excluded). --cache-spill DIR keeps the MLA caches
			in files in DIR (mapped) instead of the heap, to time the spilled
			cache.

			Every row also reports what the timed runs paged in: major page
			faults per token (getrusage ru_majflt) and, on Linux, the bytes
			read from storage per token and their rate (/proc/self/io
			read_bytes over the timed seconds). A model file larger than the
			free RAM pages its cold experts in as tokens route to them; each
			MoE layer's chosen experts are prefetched (madvise WILLNEED) as
			soon as the router has chosen, unless --no-prefetch (or
			KTUNE_PREFETCH=0). When a row read from storage, it adds the paged
			bound: its weights resident at the read ceiling plus the
			missing ones (the bytes read per token, at most the weights) at
			the disk read ceiling, measured once (Linux: 256 MiB of the model
			file in O_DIRECT reads of one expert matrix each, spread over
			the file, 8 in flight: what paged decode reads). --lock-hot N locks
			each MoE layer's N most-routed experts (by an untimed 64-token
			prefill) in RAM first, where RLIMIT_MEMLOCK allows (a refusal is
			reported, not fatal). See docs/larger-than-ram.md.

			Every flag and the model are checked before anything is
			measured: a .kt file is verified (as generate's loading does,
			unless --no-verify), a checkpoint folder's config and tensor
			table are read, and each model's memory budget is compared with
			the available memory (a refusal names the preset's formats and
			the presets, or the layer count, that fit).
		`) + exitCodes,
		Example: "  krun bench --synthetic --dtype q4,q8 -t 1,2\n" +
			"  krun bench kimi-q4.kt -p 512 -n 128 -t 1,2 -r 5 -d 0,4096 -o csv\n" +
			"  krun bench --synthetic --dtype q4 -t 2 --ops",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			}
			if err := opts.checkFlags(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runBench(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Synthetic, "synthetic", false, "random weights at Kimi Linear widths")
	fl.IntVar(&opts.Layers, "layers", 3, "synthetic: decoder layers (layer 0 dense, Kimi's 3:1 KDA/MLA pattern, the last MLA; all but 0 MoE)")
	fl.StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage)
	fl.StringVar(&opts.DTypes, "dtype", "q4,q8", "presets to benchmark (synthetic or a checkpoint folder): "+strings.Join(PresetNames(), ", "))
	fl.StringVarP(&opts.Prompt, "n-prompt", "p", "64", "prompt lengths, comma-separated (0: no pp rows)")
	fl.StringVarP(&opts.Gen, "n-gen", "n", "16", "generated tokens, comma-separated (0: no tg rows)")
	fl.StringVarP(&opts.Threads, "threads", "t", "", "thread counts, e.g. 1,2 or 1-4 (default the usable CPUs, see ktune detect)")
	fl.IntVarP(&opts.Reps, "repetitions", "r", 3, "repetitions of each test")
	fl.StringVarP(&opts.Depth, "n-depth", "d", "0", "context depths before each test, comma-separated")
	fl.StringVarP(&opts.Format, "output", "o", "md", "output: md, csv, json or text")
	fl.BoolVar(&opts.Ops, "ops", false, "add a per-op breakdown of a decode token against each op's roof")
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "skip a model file's checks, which read the whole file: a .kt file's tensor checksums and scale checks, a GGUF file's scale scan (made once per file and remembered); a corrupt file then fails later, or gives NaN logits")
	fl.StringVar(&opts.Load, "load", "auto", loadUsage)
	fl.BoolVar(&opts.NoWarmup, "no-warmup", false, "skip the untimed run before each test (as llama-bench's --no-warmup)")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the timed runs to `FILE` (samples outside them are labelled krun=setup)")
	fl.StringVar(&opts.CacheSpill, "cache-spill", "", "keep the MLA caches in files in `DIR` (mapped) instead of the heap")
	fl.StringVar(&opts.CacheDType, "cache-dtype", "bf16", cacheDTypeUsage)
	fl.BoolVar(&opts.NoPrefetch, "no-prefetch", false, "model file: do not prefetch the experts the router chose (madvise WILLNEED)")
	fl.IntVar(&opts.LockHot, "lock-hot", 0, "model file: mlock each MoE layer's `N` most-routed experts before measuring")
	return cmd
}

// checkFlags refuses bad or contradictory flags (exit 2) before anything
// is read or measured.
func (o *BenchOptions) checkFlags(cmd *cobra.Command) error {
	if (o.Model == "") == !o.Synthetic {
		return cli.Usagef("bench: give a MODEL or --synthetic (not both)")
	}
	switch o.Format {
	case "md", "csv", "json", "text":
	default:
		return cli.Usagef("bench: -o %q; want md, csv, json or text", o.Format)
	}
	if o.Reps < 1 {
		return cli.Usagef("bench: -r %d; want at least 1", o.Reps)
	}
	if o.Synthetic && (o.Layers < 1 || o.Layers > 27) {
		return cli.Usagef("bench: --layers %d; a synthetic model has 1 to 27 layers", o.Layers)
	}
	for _, f := range []string{"load", "no-verify", "gguf-repack"} {
		if o.Synthetic && cmd.Flags().Changed(f) {
			return cli.Usagef("bench: --%s is for a model file; --synthetic builds random weights in memory and loads no file", f)
		}
	}
	if _, err := cacheDType(o.CacheDType); err != nil {
		return err
	}
	if _, err := loadMode(o.Load); err != nil {
		return err
	}
	if o.LockHot < 0 {
		return cli.Usagef("bench: --lock-hot %d; want 0 or more", o.LockHot)
	}
	if err := writableDir("--cpuprofile", o.CPUProfile); err != nil {
		return err
	}
	return nil
}

// BenchRow is one line of bench's table, OpRow one of the --ops
// breakdown (package bench measures them).
type (
	BenchRow = bench.Row
	OpRow    = bench.OpRow
)

// parseInts parses the comma list of flag -flag, each a count ≥ min
// (empty items skipped).
func parseInts(flag, s string, min int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < min {
			return nil, cli.Usagef("bench: -%s: %q is not a count ≥ %d", flag, f, min)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("bench: -%s %q: give at least one count ≥ %d", flag, s, min)
	}
	return out, nil
}

// benchLists are bench's list flags, parsed.
type benchLists struct {
	threads, pps, tgs, depths []int
	dtypes                    []string
}

// lists parses and checks the list flags.
func (o *BenchOptions) lists() (l benchLists, err error) {
	if l.threads, err = cli.ThreadList(o.Err, "-t", o.Threads, []int{pool.Default().Size()}); err != nil {
		return l, err
	}
	if l.pps, err = parseInts("p", o.Prompt, 0); err != nil {
		return l, err
	}
	if l.tgs, err = parseInts("n", o.Gen, 0); err != nil {
		return l, err
	}
	if l.depths, err = parseInts("d", o.Depth, 0); err != nil {
		return l, err
	}
	l.dtypes = strings.Split(o.DTypes, ",")
	for _, d := range l.dtypes {
		if _, err := presetOptions(d); err != nil {
			return l, cli.Usagef("bench: --dtype: %v", err)
		}
	}
	if slices.Max(l.pps) == 0 && slices.Max(l.tgs) == 0 {
		return l, cli.Usagef("bench: -p and -n are all 0: nothing to measure")
	}
	return l, nil
}

// runBench checks every flag and the model, then measures (package
// bench) and writes the tables.
func runBench(o *BenchOptions) error {
	l, err := o.lists()
	if err != nil {
		return err
	}
	presets, err := o.check(l.dtypes)
	if err != nil {
		return err
	}
	if err := o.checkLengths(l.pps, l.tgs, l.depths); err != nil {
		return err
	}
	o.chooser = installProfile(o.Factory)
	ceilingRuns.Add(1) // bench.Run measures the read ceiling first
	rows, ops, err := bench.Run(context.Background(), o.benchOptions(l, presets))
	if err != nil {
		return err
	}
	return o.write(rows, ops)
}

// benchOptions is what bench.Run measures: a model per preset.
func (o *BenchOptions) benchOptions(l benchLists, presets []string) bench.Options {
	b := bench.Options{Path: o.Model, Threads: l.threads, Prompts: l.pps, Gens: l.tgs, Depths: l.depths, Reps: o.Reps,
		NoWarmup: o.NoWarmup, Ops: o.Ops, NoPrefetch: o.NoPrefetch, LockHot: o.LockHot,
		CeilingBytes: o.CeilingBytes, DiskCeilingBytes: o.DiskCeilingBytes, Report: o.report()}
	for _, preset := range presets {
		b.Models = append(b.Models, bench.Model{Name: o.modelName(), DType: o.dtypeName(preset), Preset: preset,
			Open: func() (*model.Model, error) { return o.open(preset) }})
	}
	if o.CPUProfile != "" {
		b.Around = func(m bench.Model) (func(error) error, error) { return o.startProfile(m.Preset, len(presets)) }
	}
	return b
}

// modelName is the rows' model column.
func (o *BenchOptions) modelName() string {
	if o.Synthetic {
		return fmt.Sprintf("synthetic-%dL", o.Layers)
	}
	return modelName(o.Model)
}

// dtypeName is the rows' dtype column for preset: its name, or for a
// model file's own formats "" (bench labels them), or a GGUF file's.
func (o *BenchOptions) dtypeName(preset string) string {
	switch {
	case preset != "":
		return preset
	case isGGUF(o.Model) && o.Load == "repack":
		return "gguf/repack-" + o.GGUFRepack // the file's types, repacked so
	case isGGUF(o.Model):
		return "gguf" // the file's types, run in place
	}
	return ""
}

// ceilingRuns counts the read-ceiling measurements started (tests check
// that a refused run measured nothing).
var ceilingRuns atomic.Int64

// availableMemory is the memory a model may budget (cpu.AvailableMemory;
// 0: unknown; tests replace it).
var availableMemory = cpu.AvailableMemory

// checkLengths refuses a depth and prompt or generation that run past
// the model's maximum length (model_max_length, when the config has one).
func (o *BenchOptions) checkLengths(pps, tgs, depths []int) error {
	var cfg *arch.Config
	var err error
	if o.Synthetic {
		cfg, err = o.synthConfig(o.Layers)
	} else {
		cfg, err = peekConfig(o.Model)
	}
	if err != nil {
		return err
	}
	limit := cfg.ModelMaxLength
	if limit <= 0 {
		return nil
	}
	d := slices.Max(depths)
	if need := max(d, 1) + max(slices.Max(pps), slices.Max(tgs)); need > limit {
		return cli.Usagef("bench: -d %d with -p %d / -n %d needs %d tokens, past the model's maximum length %d", d, slices.Max(pps), slices.Max(tgs), need, limit)
	}
	return nil
}

// check checks the model against everything that can be known before
// measuring — the file verified, the checkpoint's config and tensor
// table, each preset's memory budget — and returns the presets to run
// ("" alone for a .kt or GGUF file: its own formats).
func (o *BenchOptions) check(dtypes []string) ([]string, error) {
	if o.Synthetic {
		cfg, err := o.synthConfig(o.Layers)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return dtypes, o.checkPresets(cfg, dtypes)
	}
	file, err := isModelFile(o.Model)
	switch {
	case err != nil:
		return nil, &cli.UsageError{Err: err}
	case file && isGGUF(o.Model):
		return []string{""}, o.checkGGUF() // the file's own types
	case file:
		return []string{""}, o.checkKT()
	}
	return dtypes, o.checkCheckpoint(dtypes)
}

// checkPresets refuses a preset whose budget for cfg exceeds the
// available memory.
func (o *BenchOptions) checkPresets(cfg *arch.Config, dtypes []string) error {
	avail := availableMemory()
	for _, preset := range dtypes {
		if err := o.checkFits(cfg, preset, avail); err != nil {
			return err
		}
	}
	return nil
}

// checkGGUF reads a GGUF file's config and tensor table.
func (o *BenchOptions) checkGGUF() error {
	f, err := ggufpkg.Open(o.Model)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer f.Close()
	cfg, err := model.ConfigFromGGUF(f)
	if err == nil {
		_, err = model.NewGGUFSource(f, cfg, 1)
	}
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	return nil
}

// checkKT verifies a .kt file (unless --no-verify: then its stored config
// is parsed).
func (o *BenchOptions) checkKT() error {
	f, err := kfile.Open(o.Model)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer f.Close()
	if !o.NoVerify {
		if err := model.VerifyFile(f, pool.Default().Size()); err != nil {
			return &cli.UsageError{Err: err}
		}
		o.verified = true
	} else if _, err := arch.Parse(f.Header.Config, o.Model+" (stored config.json)"); err != nil {
		return &cli.UsageError{Err: err}
	}
	return nil
}

// checkCheckpoint reads a checkpoint folder's config, its small tensors
// and embedding table as they are (the matrices are checked as each
// preset converts them), and each preset's budget.
func (o *BenchOptions) checkCheckpoint(dtypes []string) error {
	cfg, err := arch.Load(o.Model)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	src, err := model.NewCheckpointSource(o.Model, cfg, 1)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer src.Close()
	for _, t := range cfg.TensorNames() {
		var err error
		switch {
		case t.Name == "model.embed_tokens.weight":
			_, _, err = src.Embedding(t.Name)
		case len(t.Shape) != 2:
			_, err = src.Float32(t.Name)
		}
		if err != nil {
			return cli.Usagef("model: %s: tensor %q: %v", src.Where(t.Name), t.Name, err)
		}
	}
	return o.checkPresets(cfg, dtypes)
}

// presetLoadOptions is preset's formats in bench's load options.
func (o *BenchOptions) presetLoadOptions(preset string) model.LoadOptions {
	p, _ := presetOptions(preset)
	cdt, _ := cacheDType(o.CacheDType)
	return model.LoadOptions{Formats: p.Formats, Memory: model.Memory{CacheSpillDir: o.CacheSpill, CacheDType: cdt}}
}

// budget is the memory model.Load or model.Random budgets for cfg in
// preset (the figure their memory check compares).
func (o *BenchOptions) budget(cfg *arch.Config, preset string) (int64, error) {
	mem, err := model.EstimateMemory(cfg, o.presetLoadOptions(preset), 2)
	return mem.Budgeted, err
}

// checkFits refuses a preset whose budget exceeds the available memory
// (avail ≤ 0: unknown, not checked), naming the preset's formats and what
// would fit: other presets, or fewer synthetic layers.
func (o *BenchOptions) checkFits(cfg *arch.Config, preset string, avail int64) error {
	if avail <= 0 {
		return nil
	}
	need, err := o.budget(cfg, preset)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if need <= avail {
		return nil
	}
	what := o.Model
	if o.Synthetic {
		what = fmt.Sprintf("a synthetic %d-layer model", o.Layers)
	}
	doc := ""
	for _, p := range Presets {
		if p.Name == preset {
			doc = p.Doc
		}
	}
	hint := o.fitHint(cfg, preset, avail)
	return cli.Usagef("bench: %s in preset %s [%s] needs %s resident, but %s is available; %s",
		what, preset, doc, cli.HumanBytes(need), cli.HumanBytes(avail), hint)
}

// fitHint names what fits in avail: the presets, and for a synthetic
// model the layer count that fits in preset.
func (o *BenchOptions) fitHint(cfg *arch.Config, preset string, avail int64) string {
	var fit []string
	for _, p := range Presets {
		if b, err := o.budget(cfg, p.Name); err == nil && b <= avail {
			fit = append(fit, fmt.Sprintf("%s (%s)", p.Name, cli.HumanBytes(b)))
		}
	}
	hint := "no preset fits"
	if len(fit) > 0 {
		hint = "presets that fit: " + strings.Join(fit, ", ")
	}
	if !o.Synthetic {
		return hint
	}
	for l := o.Layers - 1; l >= 1; l-- {
		if c, err := o.synthConfig(l); err == nil {
			if b, err := o.budget(c, preset); err == nil && b <= avail {
				return hint + fmt.Sprintf("; in %s, --layers %d or fewer fit", preset, l)
			}
		}
	}
	return hint
}

// writableDir makes the folder of an output file (as its atomic write
// will) and checks, before any measuring, that it takes new files (""
// passes).
func writableDir(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Usagef("%s %s: folder %s not writable (%v)", flag, path, dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".krun-write-check-")
	if err != nil {
		return cli.Usagef("%s %s: folder %s not writable (%v)", flag, path, dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// startProfile starts the --cpuprofile CPU profile of one model's
// measurements (after its loading, before its closing) and returns the
// function that stops it and, when the measurements succeeded, writes
// the file atomically: FILE itself for one model, FILE with the preset
// before its extension for several.
func (o *BenchOptions) startProfile(preset string, models int) (stop func(error) error, err error) {
	path := o.CPUProfile
	if models > 1 {
		ext := filepath.Ext(path)
		path = strings.TrimSuffix(path, ext) + "." + preset + ext
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("bench: --cpuprofile: %v", err)
	}
	return func(measured error) error {
		pprof.StopCPUProfile()
		if measured != nil {
			return nil
		}
		if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
			return fmt.Errorf("bench: --cpuprofile: %w", err)
		}
		fmt.Fprintf(o.Err, "krun: CPU profile written to %s (go tool pprof %s)\n", path, path)
		return nil
	}, nil
}

// open builds or loads the model for one preset ("" for a .kt file).
func (o *BenchOptions) open(preset string) (*model.Model, error) {
	cdt, err := cacheDType(o.CacheDType)
	if err != nil {
		return nil, err
	}
	repack, err := ggufRepack(o.GGUFRepack)
	if err != nil {
		return nil, err
	}
	load, _ := loadMode(o.Load)
	opt := model.LoadOptions{
		Conversion: model.Conversion{GGUFRepack: repack},
		Runtime:    model.Runtime{Chooser: o.chooser},
		Memory:     model.Memory{CacheSpillDir: o.CacheSpill, CacheDType: cdt, AvailableMemory: availableMemory()},
		Files:      model.Files{NoVerify: o.NoVerify || o.verified, Weights: load},
	}
	if !o.Synthetic {
		return openModel(o.Model, preset, opt)
	}
	cfg, err := o.synthConfig(o.Layers)
	if err != nil {
		return nil, err
	}
	p, _ := presetOptions(preset)
	opt.Formats = p.Formats
	fmt.Fprintf(o.Err, "krun: building a synthetic %d-layer model (%s)…\n", o.Layers, preset)
	return model.Random(cfg, opt, 1)
}

// paramsLabel writes a parameter count as llama-bench does (2.45 B, 1.20 M).
func paramsLabel(n int64) string { return bench.ParamsLabel(n) }

package krun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	ggufpkg "github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model"
)

// ConvertOptions are convert's flags.
type ConvertOptions struct {
	*cli.Factory
	Dir     string
	Output  string
	Preset  string
	Experts string
	Attn    string
	FFN     string
	Head    string
	Gates   string
	Threads int
	// GGUFRepack is --gguf-repack.
	GGUFRepack string
	// Search is --search.
	Search bool
	// Imatrix is --imatrix: an importance matrix file (krun calibrate)
	// whose energies weight the search (implies it).
	Imatrix string
	// Fit is --fit: a memory budget to plan the formats for (plan.go),
	// with the plan's assumptions in FitFlags.
	Fit string
	FitFlags
	// Synthetic is --synthetic: random weights at Kimi Linear's widths
	// (model.SyntheticConfig of Layers layers, from Seed) instead of a
	// checkpoint.
	Synthetic bool
	Layers    int
	Seed      uint64

	presetSet bool // --preset given
}

// synthConfig makes the synthetic config of N layers that convert
// --synthetic and synth write (tests and probes swap in a tiny one).
var synthConfig = model.SyntheticConfig

// NewCmdConvert builds `krun convert`.
func NewCmdConvert(f *cli.Factory, runF func(*ConvertOptions) error) *cobra.Command {
	opts := &ConvertOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "convert (HF_DIR | FILE.gguf | --synthetic) -o OUT.kt",
		Short: "Convert a Hugging Face checkpoint or a GGUF file into a krun model file",
		Long: cli.Doc(`
			Convert a Hugging Face Kimi Linear checkpoint folder (config.json and
			model.safetensors, or shards with model.safetensors.index.json) into
			one mmap-able model file: the config, a checked tensor table, and every
			weight already in the kernels' packed layout, page-aligned, each with
			a CRC32C. Loading it is a mapping: nothing is converted or copied,
			and experts no token routes to stay on disk. The format is described
			in docs/kt-format.md. The file is written atomically.

			A Kimi Linear GGUF file (llama.cpp's kimi-linear architecture, any
			of its types but the IQ ones) converts too: without --preset each
			matrix is repacked from its ggml type, not requantized (Q8_0, Q3_K
			→ q8, Q5_0 → q5 (q8 where no SIMD kernel serves q5), Q4_0 → q4,
			Q4_1 → q4 with a min, exactly; the K-quants
			and Q5_1 as --gguf-repack says: fast, the nearest format, or exact,
			f32); with --preset (or a group flag) those groups are requantized
			from the dequantized weights. krun generate, bench and info also
			run a GGUF file directly.

			Presets:
			`) + presetList() + cli.Doc(`
			Norms, conv taps, biases, the MoE router and MLA's kv_b_proj are
			always f32; the KDA gate projections f32 unless --gates is given.
			--experts, --attn, --ffn (dense MLP and shared expert), --head
			(lm_head) and --gates override a preset's format for their group.

			The formats: f32, bf16, q8, q6, q5, q4, q3, q2 (one f16 scale per
			32 weights; q2's also carries an offset code) and the K formats
			q6k, q5k, q4k, q3k (ggml's K-quant structure: the same bits per
			weight, a min and 6-bit scale codes per 32 under an f16 pair per
			256; less error at each of their widths: docs/quant-error.md).

			--search chooses each group's scale (a K format's codes and
			super-block scales) by a search for the least squared error instead
			of the max-abs (min-max) rule. --imatrix FILE
			(written by krun calibrate on this model) weights that error by
			each input channel's mean squared activation over the calibration
			prompts (and implies --search); matrices the file lacks — routed
			experts no prompt reached — get the unweighted search, as the
			summary says. A file gathered on a model of another shape is
			refused, naming both.

			--fit SIZE (like 24G) chooses instead each group's format — the
			routed experts per layer — to fit a machine of SIZE bytes with the
			least expected error, as krun plan --fit prints it (--ctx, --seqs,
			--cache-dtype, --reserve and --formats are its assumptions); the
			file records the mixed groups per tensor.

			--synthetic writes, instead of a converted checkpoint, a model file
			of random weights at Kimi Linear's widths (hidden 2304, 256 experts
			of 1024, vocabulary 163840) and layer pattern, cut to --layers
			layers (27: the whole 48B shape), in the formats the flags above
			choose (--fit too), to benchmark the full model without the
			checkpoint: krun bench and krun generate --ids run it as any model
			file, mapped, its experts paged in on demand. Its weights are drawn
			straight in their packed formats, zero-mean with variance 1/K per
			matrix, tensor by tensor (a few in memory at a time), from --seed:
			the same flags give the same bytes at any --threads. The header's
			meta says synthetic; there is no tokenizer (give --ids). Before
			writing, convert refuses an output whose filesystem lacks room for
			the file, naming both sizes.

			Before any work convert refuses an output that is a folder, one of
			the checkpoint's own files (through a link too) or in a folder it
			cannot write. A tensor holding NaN or ±Inf, or a weight too large
			for its format (bf16, a group's f16 scale, a K format's super-block
			scale), is refused,
			naming the file and the tensor. Interrupted (Ctrl-C, SIGTERM),
			convert removes its temporary file (.OUT.tmp-…) and exits 130 or
			143; a temporary file of the same output left by a killed run is
			removed by the next convert, which says so.

			Exit status: 0 written; 2 a usage error or a bad input (flag,
			argument, output path, config.json, checkpoint, tensor values);
			1 another failure (writing the output).
		`),
		Example: "  krun convert ./Kimi-Linear-48B-A3B-Instruct -o kimi-q4.kt --preset q4\n  krun convert ./tiny -o tiny.kt --preset q8 --experts q4 --head bf16\n" +
			"  krun convert --synthetic --layers 27 -o synth-q4.kt --preset q4\n  krun convert --synthetic -o synth-24g.kt --fit 24G",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			opts.presetSet = cmd.Flags().Changed("preset")
			if err := opts.checkSynthetic(cmd); err != nil {
				return err
			}
			if opts.Output == "" {
				return cli.Usagef("convert: -o OUT.kt is required")
			}
			if opts.Fit == "" {
				for _, f := range []string{"ctx", "seqs", "cache-dtype", "reserve", "formats"} {
					if cmd.Flags().Changed(f) {
						return cli.Usagef("convert: --%s is a --fit assumption; give --fit SIZE too", f)
					}
				}
			}
			if _, err := opts.loadOptions(); err != nil {
				return &cli.UsageError{Err: err}
			}
			if runF != nil {
				return runF(opts)
			}
			return runConvert(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "out", "o", "", "output model file")
	cmd.Flags().StringVar(&opts.Preset, "preset", "q8", "weight formats: "+strings.Join(PresetNames(), ", "))
	cmd.Flags().StringVar(&opts.Experts, "experts", "", "routed experts' format (f32, bf16, q8, q6k, q6, q5k, q5, q4k, q4, q3k, q3, q2)")
	cmd.Flags().StringVar(&opts.Attn, "attn", "", "attention projections' format (KDA q/k/v/o, MLA q/kv_a/o)")
	cmd.Flags().StringVar(&opts.FFN, "ffn", "", "dense MLP and shared expert format")
	cmd.Flags().StringVar(&opts.Head, "head", "", "lm_head format")
	cmd.Flags().StringVar(&opts.Gates, "gates", "", "KDA gate projections' format (default f32)")
	cmd.Flags().IntVar(&opts.Threads, "threads", 0, "conversion threads (default all CPUs)")
	cmd.Flags().BoolVar(&opts.Search, "search", false, "choose each quantized group's scale by a search for the least squared error (about 10% less error at q4 than the max-abs scale; about 5× slower; q2: 7–15% less, about 14× slower; the K formats: 10–15% less, about 25× slower)")
	cmd.Flags().StringVar(&opts.Imatrix, "imatrix", "", "weight the scale search by the activation energies in this file (krun calibrate; implies --search)")
	cmd.Flags().StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage+"; without --preset")
	cmd.Flags().StringVar(&opts.Fit, "fit", "", "choose each group's format to fit this memory budget (like 24G) with the least expected error, as krun plan does (instead of --preset and the group flags)")
	opts.FitFlags.register(cmd, "with --fit: ")
	cmd.Flags().BoolVar(&opts.Synthetic, "synthetic", false, "write random weights at Kimi Linear's widths instead of converting a checkpoint (no MODEL)")
	cmd.Flags().IntVar(&opts.Layers, "layers", 27, "with --synthetic: decoder layers, 1 to 27 (layer 0 dense, Kimi's 3:1 KDA/MLA pattern, the last MLA)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "with --synthetic: the random weights' seed (the same seed and flags, the same bytes)")
	return cmd
}

// checkSynthetic checks the input: a MODEL, or --synthetic with its own
// flags and none of a checkpoint's.
func (o *ConvertOptions) checkSynthetic(cmd *cobra.Command) error {
	if !o.Synthetic {
		if o.Dir == "" {
			return cli.Usagef("convert: give a checkpoint folder or GGUF file to convert, or --synthetic")
		}
		for _, f := range []string{"layers", "seed"} {
			if cmd.Flags().Changed(f) {
				return cli.Usagef("convert: --%s is for --synthetic weights, not a checkpoint's", f)
			}
		}
		return nil
	}
	switch {
	case o.Dir != "":
		return cli.Usagef("convert: --synthetic writes random weights; give no MODEL (got %s)", o.Dir)
	case o.Layers < 1 || o.Layers > 27:
		return cli.Usagef("convert: --layers %d; a synthetic model has 1 to 27 layers", o.Layers)
	}
	for _, f := range []string{"search", "imatrix", "gguf-repack"} {
		if cmd.Flags().Changed(f) {
			return cli.Usagef("convert: --%s is for a checkpoint's weights; --synthetic draws its weights in their formats", f)
		}
	}
	return nil
}

// config is the input's config: the synthetic one, or the checkpoint's.
func (o *ConvertOptions) config() (*arch.Config, error) {
	if o.Synthetic {
		cfg, err := synthConfig(o.Layers)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return cfg, nil
	}
	return peekConfig(o.Dir)
}

// loadOptions is the preset with the group overrides applied (for a GGUF
// file without --preset, the overrides alone: the other groups keep the
// file's types).
func (o *ConvertOptions) loadOptions() (model.LoadOptions, error) {
	if o.Fit != "" {
		p, err := o.fitPlan()
		if err != nil {
			return model.LoadOptions{}, err
		}
		opt := p.Opt
		opt.Memory = model.Memory{} // run-time choices, not the file's
		if isGGUF(o.Dir) {
			opt.GGUFRepack, _ = ggufRepack(o.GGUFRepack)
		}
		opt.Threads = o.Threads
		return opt, nil
	}
	opt, err := presetOptions(o.Preset)
	if err != nil {
		return opt, err
	}
	repack, err := ggufRepack(o.GGUFRepack)
	if err != nil {
		return opt, err
	}
	if isGGUF(o.Dir) {
		if !o.presetSet {
			opt = model.LoadOptions{}
		}
		opt.GGUFRepack = repack
	}
	opt.QuantSearch = o.search()
	for _, g := range []struct {
		flag, val string
		dst       *kernel.DType
	}{{"experts", o.Experts, &opt.ExpertDType}, {"attn", o.Attn, &opt.AttnDType}, {"ffn", o.FFN, &opt.FFNDType},
		{"head", o.Head, &opt.HeadDType}, {"gates", o.Gates, &opt.GateDType}} {
		if g.val == "" {
			continue
		}
		if *g.dst, err = parseDType(g.flag, g.val); err != nil {
			return opt, err
		}
	}
	opt.Threads = o.Threads
	return opt, nil
}

// search reports whether scales are searched: --search, or --imatrix.
func (o *ConvertOptions) search() bool { return o.Search || o.Imatrix != "" }

// fitPlan is --fit's plan for the input's config (a usage error when the
// flags conflict or the budget is too small).
func (o *ConvertOptions) fitPlan() (*model.FitPlan, error) {
	if o.presetSet || o.Experts != "" || o.Attn != "" || o.FFN != "" || o.Head != "" || o.Gates != "" {
		return nil, cli.Usagef("convert: --fit chooses every group's format; give it without --preset, --experts, --attn, --ffn, --head or --gates")
	}
	budgets, err := parseBudgets(o.Fit)
	if err != nil {
		return nil, err
	}
	if len(budgets) != 1 {
		return nil, cli.Usagef("convert: --fit %q: give one size", o.Fit)
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	fo, err := o.FitFlags.options(o.Err, cfg, o.search())
	if err != nil {
		return nil, err
	}
	p, err := model.PlanFit(cfg, budgets[0], fo)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	return p, nil
}

// inputFiles are the files a command reads from paths, which an output
// must not replace: a folder's files (a checkpoint: its shards, index,
// config, tokenizer), every part of a split GGUF file, any other path
// itself; "" is skipped.
func inputFiles(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				out = append(out, filepath.Join(p, e.Name()))
			}
		case err == nil && isGGUF(p):
			out = append(out, ggufInputs(p)...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// ggufInputs are the files of a GGUF input convert must not overwrite:
// every part of a split file (the path alone if it does not open).
func ggufInputs(path string) []string {
	f, err := ggufpkg.Open(path)
	if err != nil {
		return []string{path}
	}
	defer f.Close()
	return f.Parts
}

// checkOutputOf is checkOutput for the input files inputs (and the
// checkpoint folder dir, "" for a GGUF file).
func checkOutputOf(inputs []string, dir, out string) error {
	return checkOutputFor("convert", inputs, dir, out)
}

// checkOutputFor is checkOutputOf for command cmd (its messages' prefix).
// Beyond the folder and the inputs, what the path names must be writable
// as a file (atomicfile.Target): a socket or a dangling link is refused,
// and a named pipe too, since these files' headers are written last.
func checkOutputFor(cmd string, inputs []string, dir, out string) error {
	st, err := os.Stat(out)
	if err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		return cli.Usagef(cmd+": -o %s is a named pipe; this file's header is written last, so it needs a file (or a device such as %s)", out, os.DevNull)
	}
	if _, _, terr := atomicfile.Target(out); terr != nil && !(err == nil && st.IsDir()) {
		return cli.Usagef(cmd+": -o %v", terr)
	}
	switch {
	case err == nil && st.IsDir():
		example := "model.kt"
		if cmd == "synth" {
			example = "model.gguf"
		}
		return cli.Usagef(cmd+": -o %s is a folder; give a file name (e.g. %s)", out, filepath.Join(out, example))
	case err == nil:
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				if dir == "" {
					return cli.Usagef(cmd+": -o %s is the input file %s; it would destroy it (write elsewhere)", out, in)
				}
				return cli.Usagef(cmd+": -o %s is the input file %s; it would destroy the checkpoint (write elsewhere)", out, in)
			}
		}
		if dst, err := os.Stat(dir); dir != "" && err == nil && os.SameFile(st, dst) {
			return cli.Usagef(cmd+": -o %s is the checkpoint folder", out)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return cli.Usagef(cmd+": -o %s: %v", out, errors.Unwrap(err))
	}
	// the folder must exist (as every command's outputs: a typo in it is
	// not a tree to create) and take a new file
	d := filepath.Dir(out)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		if err == nil || errors.Is(err, syscall.ENOTDIR) {
			return cli.Usagef(cmd+": -o %s: %s is not a folder", out, d)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return cli.Usagef(cmd+": -o %s: folder %s does not exist", out, d)
		}
		return cli.Usagef(cmd+": -o %s: %v", out, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(d, ".krun-write-check-")
	if err != nil {
		return cli.Usagef(cmd+": -o %s: folder %s not writable (%v)", out, d, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// quietFor is how long a conversion runs before it reports progress (a
// short one prints only its result, or its one-line error; tests under
// -race or an emulator lengthen it).
var quietFor = time.Second

func runConvert(o *ConvertOptions) error {
	opt, err := o.loadOptions()
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	var (
		write    func(meta map[string]string, progress func(done, total int, name string)) error
		synth    *arch.Config // --synthetic's config
		fromGGUF bool
		imNote   string
	)
	if o.Synthetic {
		if synth, err = o.config(); err != nil {
			return err
		}
		if err := checkOutputOf(nil, "", o.Output); err != nil {
			return err
		}
		write = func(meta map[string]string, progress func(done, total int, name string)) error {
			return model.WriteSynthetic(synth, o.Output, opt, o.Seed, meta, progress)
		}
	} else {
		st, err := os.Stat(o.Dir)
		if err != nil {
			return cli.Usagef("convert: %v", err)
		}
		fromGGUF = !st.IsDir() && isGGUF(o.Dir)
		if !st.IsDir() && !fromGGUF {
			return cli.Usagef("convert: %s is not a checkpoint folder (config.json and safetensors) nor a GGUF file", o.Dir)
		}
		extra := inputFiles(o.Imatrix) // --imatrix is an input too
		if fromGGUF {
			if err := checkOutputOf(append(ggufInputs(o.Dir), extra...), "", o.Output); err != nil {
				return err
			}
		} else if err := checkOutputOf(append(inputFiles(o.Dir), extra...), o.Dir, o.Output); err != nil {
			return err
		}
		if o.Imatrix != "" {
			if opt.Imatrix, imNote, err = o.readImatrix(opt); err != nil {
				return err
			}
		}
		convert := model.ConvertFile
		if fromGGUF {
			convert = model.ConvertGGUF
		}
		write = func(meta map[string]string, progress func(done, total int, name string)) error {
			return convert(o.Dir, o.Output, opt, meta, progress)
		}
	}
	stale, err := atomicfile.RemoveStale(o.Output)
	for _, s := range stale {
		fmt.Fprintf(o.Err, "krun: removed %s (%s), a temporary file left by an interrupted convert\n", s.Path, cli.HumanBytes(s.Size))
	}
	if err != nil {
		return fmt.Errorf("convert: removing stale temporary files: %w", err)
	}
	stop := atomicfile.CleanupOnSignal(func(sig os.Signal, removed []string) {
		what := "no temporary file yet"
		if len(removed) > 0 {
			what = "removed " + strings.Join(removed, ", ")
		}
		fmt.Fprintf(o.Err, "krun: convert interrupted (%v): %s; %s is unchanged\n", sig, what, o.Output)
		exit(atomicfile.SignalExitCode(sig))
	})
	defer stop()
	prog := cli.NewProgress(o.Err)
	t0 := time.Now()
	meta := map[string]string{"preset": o.Preset}
	if o.Fit != "" {
		p, err := o.fitPlan()
		if err != nil {
			return err
		}
		meta["preset"] = "fit " + cli.HumanBytes(p.Budget)
		meta["fit"] = fmt.Sprintf("%s; %d × %d tokens, %s MLA cache; resident %s, %s reserve; rms error %.4f",
			expertSummary(p), p.Seqs, p.Context, p.CacheDType, cli.HumanBytes(p.Resident), cli.HumanBytes(p.Reserve), p.RMS())
		fmt.Fprintf(o.Out, "plan for %s: %s\n", cli.HumanBytes(p.Budget), meta["fit"])
	}
	if fromGGUF && !o.presetSet {
		meta["preset"] = "stored (the GGUF's types, --gguf-repack " + o.GGUFRepack + ")"
	}
	if opt.Imatrix != nil {
		meta["imatrix"] = fmt.Sprintf("%s (%s, %d prompts, %d tokens)", filepath.Base(o.Imatrix), opt.Imatrix.Model, opt.Imatrix.Prompts, opt.Imatrix.Tokens)
		fmt.Fprintln(o.Out, imNote)
	}
	var size int64 // --synthetic: the file's size, known beforehand
	if o.Synthetic {
		if size, err = o.checkRoom(synth, opt, meta); err != nil {
			return err
		}
		t0 = time.Now()
	}
	if err := write(meta, func(done, total int, name string) {
		if convertHook != nil {
			convertHook(done, total)
		}
		if time.Since(t0) >= quietFor {
			prog("convert", done, total, name)
		}
	}); err != nil {
		return err
	}
	st, err := os.Stat(o.Output)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	if o.Synthetic {
		fmt.Fprintf(o.Out, "wrote %s: %s in %.1fs, %.0f MB/s (synthetic, %d layers, seed %d, preset %s)\n",
			o.Output, cli.HumanBytes(st.Size()), secs, float64(size)/1e6/secs, o.Layers, o.Seed, meta["preset"])
		return nil
	}
	fmt.Fprintf(o.Out, "wrote %s: %s in %.1fs (preset %s)\n", o.Output, cli.HumanBytes(st.Size()), secs, meta["preset"])
	return nil
}

// diskFree is atomicfile.Free (the probes replace it).
var diskFree = atomicfile.Free

// checkRoom says what --synthetic will write and refuses, before writing,
// an output whose filesystem lacks room for it; it returns the size.
func (o *ConvertOptions) checkRoom(cfg *arch.Config, opt model.LoadOptions, meta map[string]string) (int64, error) {
	size, err := model.SyntheticFileSize(cfg, opt, o.Seed, meta)
	if err != nil {
		return 0, err
	}
	free, err := diskFree(o.Output)
	if err != nil {
		return 0, cli.Usagef("convert: -o %s: %v", o.Output, err)
	}
	if free >= 0 && free < size {
		return 0, cli.Usagef("convert: -o %s: the synthetic file needs %s (%d bytes), but its filesystem has %s free; write it elsewhere, or choose smaller formats or fewer --layers",
			o.Output, cli.HumanBytes(size), size, cli.HumanBytes(free))
	}
	room := "free space unknown"
	if free >= 0 {
		room = cli.HumanBytes(free) + " free"
	}
	fmt.Fprintf(o.Out, "writing %s: %s of random weights, %s (%s)\n", o.Output, cfg.Source, cli.HumanBytes(size), room)
	return size, nil
}

// exit ends the process (a signal handler's last act; tests replace it).
var exit = os.Exit

// convertHook, when set (tests), is called after each converted tensor.
var convertHook func(done, total int)

// readImatrix reads --imatrix, checks it against the input's config and
// returns it with the summary line: the matrices it weights, and those it
// lacks, which get the unweighted search.
func (o *ConvertOptions) readImatrix(opt model.LoadOptions) (*model.Imatrix, string, error) {
	im, err := model.ReadImatrix(o.Imatrix)
	if err != nil {
		return nil, "", err
	}
	cfg, err := peekConfig(o.Dir)
	if err != nil {
		return nil, "", err
	}
	if err := im.Match(cfg, o.Dir); err != nil {
		return nil, "", err
	}
	opt.Imatrix = im
	weighted, missing, err := model.ImatrixCoverage(cfg, opt, im)
	if err != nil {
		return nil, "", &cli.UsageError{Err: err}
	}
	if len(weighted)+len(missing) == 0 {
		switch {
		case o.Fit != "": // the plan chose the formats: nothing to refuse
			return im, fmt.Sprintf("imatrix %s: the plan quantizes no matrix to q8, q6, q5, q4 or q3; the energies weigh nothing", o.Imatrix), nil
		case isGGUF(o.Dir) && !o.presetSet:
			return nil, "", cli.Usagef("convert: --imatrix %s: a GGUF's matrices are repacked in their stored types, not requantized; give --preset", o.Imatrix)
		}
		return nil, "", cli.Usagef("convert: --imatrix %s: preset %s quantizes no matrix to q8, q6, q5, q4 or q3; the energies weigh nothing", o.Imatrix, o.Preset)
	}
	note := fmt.Sprintf("imatrix %s: energies weight %d quantized matrices", o.Imatrix, len(weighted))
	if len(missing) > 0 {
		const show = 4
		names := missing
		if len(names) > show {
			names = append(names[:show:show], fmt.Sprintf("… %d more", len(missing)-show))
		}
		note += fmt.Sprintf("; %d absent from it get the unweighted search (%s)", len(missing), strings.Join(names, ", "))
	}
	return im, note, nil
}

// presetList is convert's help list of the presets, one per line.
func presetList() string {
	var b strings.Builder
	for _, p := range Presets {
		fmt.Fprintf(&b, "  %-7s %s\n", p.Name, p.Doc)
	}
	return b.String()
}

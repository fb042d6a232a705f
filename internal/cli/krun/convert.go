package krun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cli"
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

	presetSet bool // --preset given
}

// NewCmdConvert builds `krun convert`.
func NewCmdConvert(f *cli.Factory, runF func(*ConvertOptions) error) *cobra.Command {
	opts := &ConvertOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "convert (HF_DIR | FILE.gguf) -o OUT.kt",
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
			matrix is repacked from its ggml type, not requantized (Q8_0, Q5_0,
			Q3_K → q8, Q4_0 → q4, Q4_1 → q4 with a min, exactly; the K-quants
			and Q5_1 as --gguf-repack says: fast, the nearest format, or exact,
			f32); with --preset (or a group flag) those groups are requantized
			from the dequantized weights. krun generate, bench and info also
			run a GGUF file directly.

			Presets:
			  f32     every matrix f32 (exact; 4 bytes per weight)
			  bf16    every matrix bf16 (exact for a BF16 checkpoint)
			  q8      every matrix q8 (8-bit, f16 scale per 32 weights)
			  q4      routed experts q4; attention, dense MLP, shared expert and lm_head q8
			  q4-all  every matrix q4
			  q6      every matrix q6 (6-bit, f16 scale per 32 weights)
			  q3      routed experts q3 (3-bit, f16 scale per 32); the rest as q4
			Norms, conv taps, biases, the MoE router and MLA's kv_b_proj are
			always f32; the KDA gate projections f32 unless --gates is given.
			--experts, --attn, --ffn (dense MLP and shared expert), --head
			(lm_head) and --gates override a preset's format for their group.

			--search chooses each q8/q6/q4/q3 group's scale by a search for the
			least squared error instead of the max-abs scale. --imatrix FILE
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

			Before any work convert refuses an output that is a folder, one of
			the checkpoint's own files (through a link too) or in a folder it
			cannot write. A tensor holding NaN or ±Inf, or a weight too large
			for its format (bf16, or a q8/q4 group's f16 scale), is refused,
			naming the file and the tensor. Interrupted (Ctrl-C, SIGTERM),
			convert removes its temporary file (.OUT.tmp-…) and exits 130 or
			143; a temporary file of the same output left by a killed run is
			removed by the next convert, which says so.

			Exit status: 0 written; 2 a usage error or a bad input (flag,
			argument, output path, config.json, checkpoint, tensor values);
			1 another failure (writing the output).
		`),
		Example: "  krun convert ./Kimi-Linear-48B-A3B-Instruct -o kimi-q4.kt --preset q4\n  krun convert ./tiny -o tiny.kt --preset q8 --experts q4 --head bf16",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.presetSet = cmd.Flags().Changed("preset")
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
	cmd.Flags().StringVar(&opts.Experts, "experts", "", "routed experts' format (f32, bf16, q8, q6, q4, q3, q2)")
	cmd.Flags().StringVar(&opts.Attn, "attn", "", "attention projections' format (KDA q/k/v/o, MLA q/kv_a/o)")
	cmd.Flags().StringVar(&opts.FFN, "ffn", "", "dense MLP and shared expert format")
	cmd.Flags().StringVar(&opts.Head, "head", "", "lm_head format")
	cmd.Flags().StringVar(&opts.Gates, "gates", "", "KDA gate projections' format (default f32)")
	cmd.Flags().IntVar(&opts.Threads, "threads", 0, "conversion threads (default all CPUs)")
	cmd.Flags().BoolVar(&opts.Search, "search", false, "choose each q8/q4/q3/q6/q2 group's scale by a search for the least squared error (about 10% less error at q4 than the max-abs scale; about 5× slower; q2: 7–15% less, about 14× slower)")
	cmd.Flags().StringVar(&opts.Imatrix, "imatrix", "", "weight the scale search by the activation energies in this file (krun calibrate; implies --search)")
	cmd.Flags().StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage+"; without --preset")
	cmd.Flags().StringVar(&opts.Fit, "fit", "", "choose each group's format to fit this memory budget (like 24G) with the least expected error, as krun plan does (instead of --preset and the group flags)")
	opts.FitFlags.register(cmd, "with --fit: ")
	return cmd
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
		opt.MaxSeqs, opt.MaxTokens, opt.CacheDType = 0, 0, "" // run-time choices, not the file's
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
	cfg, err := peekConfig(o.Dir)
	if err != nil {
		return nil, err
	}
	fo, err := o.FitFlags.options(cfg, o.search())
	if err != nil {
		return nil, err
	}
	p, err := model.PlanFit(cfg, budgets[0], fo)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	return p, nil
}

// checkOutput refuses, before any work, an output path that is a folder,
// that is one of the checkpoint folder's files (the same file through a
// link or another name too: os.SameFile), or whose folder does not take
// new files.
func checkOutput(dir, out string) error {
	var inputs []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		inputs = append(inputs, filepath.Join(dir, e.Name()))
	}
	return checkOutputOf(inputs, dir, out)
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
	st, err := os.Stat(out)
	switch {
	case err == nil && st.IsDir():
		return cli.Usagef("convert: -o %s is a folder; give a file name (e.g. %s)", out, filepath.Join(out, "model.kt"))
	case err == nil:
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				if dir == "" {
					return cli.Usagef("convert: -o %s is the input file %s; it would destroy it (write elsewhere)", out, in)
				}
				return cli.Usagef("convert: -o %s is the input file %s; it would destroy the checkpoint (write elsewhere)", out, in)
			}
		}
		if dst, err := os.Stat(dir); dir != "" && err == nil && os.SameFile(st, dst) {
			return cli.Usagef("convert: -o %s is the checkpoint folder", out)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return cli.Usagef("convert: -o %s: %v", out, errors.Unwrap(err))
	}
	// the nearest existing folder must take a new file (the atomic write
	// makes the missing ones)
	d := filepath.Dir(out)
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return cli.Usagef("convert: -o %s: %s is not a folder", out, d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return cli.Usagef("convert: -o %s: %v", out, errors.Unwrap(err))
		}
		d = filepath.Dir(d)
	}
	f, err := os.CreateTemp(d, ".krun-write-check-")
	if err != nil {
		return cli.Usagef("convert: -o %s: folder %s not writable (%v)", out, d, errors.Unwrap(err))
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
	st, err := os.Stat(o.Dir)
	if err != nil {
		return cli.Usagef("convert: %v", err)
	}
	fromGGUF := !st.IsDir() && isGGUF(o.Dir)
	if !st.IsDir() && !fromGGUF {
		return cli.Usagef("convert: %s is not a checkpoint folder (config.json and safetensors) nor a GGUF file", o.Dir)
	}
	if fromGGUF {
		if err := checkOutputOf(ggufInputs(o.Dir), "", o.Output); err != nil {
			return err
		}
	} else if err := checkOutput(o.Dir, o.Output); err != nil {
		return err
	}
	var imNote string
	if o.Imatrix != "" {
		if opt.Imatrix, imNote, err = o.readImatrix(opt); err != nil {
			return err
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
	convert := model.ConvertFile
	if fromGGUF {
		convert = model.ConvertGGUF
	}
	if err := convert(o.Dir, o.Output, opt, meta, func(done, total int, name string) {
		if convertHook != nil {
			convertHook(done, total)
		}
		if time.Since(t0) >= quietFor {
			prog("convert", done, total, name)
		}
	}); err != nil {
		return err
	}
	st, err = os.Stat(o.Output)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s in %.1fs (preset %s)\n", o.Output, cli.HumanBytes(st.Size()), time.Since(t0).Seconds(), meta["preset"])
	return nil
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
			return im, fmt.Sprintf("imatrix %s: the plan quantizes no matrix to q8, q6, q4 or q3; the energies weigh nothing", o.Imatrix), nil
		case isGGUF(o.Dir) && !o.presetSet:
			return nil, "", cli.Usagef("convert: --imatrix %s: a GGUF's matrices are repacked in their stored types, not requantized; give --preset", o.Imatrix)
		}
		return nil, "", cli.Usagef("convert: --imatrix %s: preset %s quantizes no matrix to q8, q6, q4 or q3; the energies weigh nothing", o.Imatrix, o.Preset)
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

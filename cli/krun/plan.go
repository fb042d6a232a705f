package krun

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model"
)

// PlanOptions are plan's flags.
type PlanOptions struct {
	*cli.Factory
	Model   string
	Kimi48B bool   // --kimi48b (--synthetic): the built-in 48B config, no files
	Fit     string // --fit: budgets, comma-separated
	Preset  string // --preset: presets to evaluate, comma-separated
	// GGUF (--gguf) plans llama.cpp's GGUF file types instead of krun's
	// formats: the default for a GGUF MODEL (plan_gguf.go).
	GGUF     bool
	DiskRead string // --disk-read: the storage's read rate per second, for paged runs
	FitFlags
	Format string // -o
}

// FitFlags are the plan's assumptions, shared by plan and convert --fit.
type FitFlags struct {
	Ctx        int
	Seqs       int
	CacheDType string
	Reserve    string
	Formats    string
}

// register adds the flags to cmd.
func (f *FitFlags) register(cmd *cobra.Command, prefix string) {
	cmd.Flags().IntVar(&f.Ctx, "ctx", defaultFitCtx, prefix+"context tokens per sequence the MLA cache is budgeted for (capped at the model's maximum length)")
	cmd.Flags().IntVar(&f.Seqs, "seqs", 1, prefix+"sequences run at once")
	cmd.Flags().StringVar(&f.CacheDType, "cache-dtype", "bf16", prefix+"MLA cache format the plan budgets: f32, bf16 or q8")
	cmd.Flags().StringVar(&f.Reserve, "reserve", "", prefix+"memory left to the OS (default 15% of the budget, at most 3GiB; 0: none)")
	cmd.Flags().StringVar(&f.Formats, "formats", "", prefix+"formats the plan may use, comma-separated (default every one the engine runs: "+strings.Join(fitFormatNames(), ", ")+")")
}

// fitFormatNames lists the formats a plan may use.
func fitFormatNames() []string {
	var n []string
	for _, f := range model.FitFormatsFor(nil) {
		n = append(n, string(f.DType))
	}
	return n
}

// defaultFitCtx is --ctx's default.
const defaultFitCtx = 32768

// The largest --seqs and --ctx a plan takes (far past any machine's
// memory; their product sizes the cache in 64-bit arithmetic).
const (
	maxFitSeqs = 1 << 16
	maxFitCtx  = 1 << 24
)

// options checks the flags and returns the planner's options; a --ctx
// above the model's maximum length is capped, with a warning on w where
// it was given (the default is capped quietly).
func (f *FitFlags) options(w io.Writer, cfg *arch.Config, search bool) (model.FitOptions, error) {
	o := model.FitOptions{Context: f.Ctx, Seqs: f.Seqs, Search: search}
	if f.Ctx < 1 || f.Ctx > maxFitCtx {
		return o, cli.Usagef("--ctx %d: want 1 to %d tokens", f.Ctx, maxFitCtx)
	}
	if f.Seqs < 1 || f.Seqs > maxFitSeqs {
		return o, cli.Usagef("--seqs %d: want 1 to %d", f.Seqs, maxFitSeqs)
	}
	if cfg != nil && cfg.ModelMaxLength > 0 && o.Context > cfg.ModelMaxLength {
		if f.Ctx != defaultFitCtx {
			fmt.Fprintf(w, "warning: --ctx %d: the model's maximum length is %d tokens; budgeting %d\n", o.Context, cfg.ModelMaxLength, cfg.ModelMaxLength)
		}
		o.Context = cfg.ModelMaxLength
	}
	var err error
	if o.CacheDType, err = cacheDType(f.CacheDType); err != nil {
		return o, err
	}
	if f.Reserve != "" {
		r, err := parseBytes(f.Reserve)
		if err != nil {
			return o, cli.Usagef("--reserve: %v", err)
		}
		o.Reserve = r
		if r == 0 {
			o.Reserve = -1 // none
		}
	}
	if f.Formats != "" {
		known := fitFormatNames()
		for _, s := range strings.Split(f.Formats, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if !contains(known, s) {
				return o, cli.Usagef("--formats %q: %q is not one of %s", f.Formats, s, strings.Join(known, ", "))
			}
			o.Formats = append(o.Formats, kernel.DType(s))
		}
	}
	if cfg != nil && (strings.EqualFold(cfg.Dtype, "float32") || strings.EqualFold(cfg.TorchDtype, "float32")) {
		o.SourceDType, o.EmbedBytes = kernel.F32, 4
	}
	return o, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// parseBudgets reads --fit: sizes, comma-separated.
func parseBudgets(s string) ([]int64, error) {
	var out []int64
	for _, x := range strings.Split(s, ",") {
		b, err := parseBytes(x)
		if err != nil {
			return nil, cli.Usagef("--fit: %v", err)
		}
		if b <= 0 {
			return nil, cli.Usagef("--fit %q: want a size above 0 (like 24G)", x)
		}
		out = append(out, b)
	}
	return out, nil
}

// NewCmdPlan builds `krun plan`.
func NewCmdPlan(f *cli.Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "plan (MODEL | --kimi48b) [--gguf] --fit SIZE[,SIZE...]",
		Short: "Choose the weight formats, or the GGUF file type, that fit the model in a memory budget",
		Long: cli.Doc(`
			Plan the weight format of each tensor group — lm_head, attention
			(KDA q/k/v/o, MLA q/kv_a/o), the KDA gates, the dense MLP, the
			shared experts, and the routed experts of each MoE layer — so that
			the model fits in SIZE bytes of memory with the least expected
			error: the weights, the KDA state and the MLA cache of --seqs
			sequences of --ctx tokens, and a reserve for the OS (--reserve).
			The expected error is the sum over groups of importance × weights ×
			(the format's relative RMS error)², importance being the share of
			the group a token reads times a sensitivity (head and attention 2,
			the first and last two layers' experts and dense MLP 2); see
			docs/plan.md. The embedding table stays in its checkpoint dtype and,
			read one row per token, is not counted as resident.

			MODEL is a checkpoint folder, a .kt model file or, with --gguf=false,
			a GGUF file (only its config is read); --kimi48b plans the built-in
			48B config with no files. --fit takes sizes like 24G (binary units),
			comma-separated for several plans and a summary; --preset evaluates
			presets the same way (their size and expected error). krun convert
			--fit writes the plan's model file.

			GGUF files (--gguf, the default when MODEL is a GGUF file): which
			llama.cpp file type of the model to download for a machine, and how
			krun runs it. For a GGUF MODEL, the file first: its type
			(general.file_type), size, bits per weight, the bytes a decoded
			token reads (the matrices every token reads — attention, KDA gates,
			dense MLP, shared experts, lm_head —, the routers and MLA's kv_b,
			and the top-k routed experts of each MoE layer; not the embedding
			row), and per budget whether it runs from RAM (the f32 copies, the
			matrices, the KDA state, the MLA cache of --seqs × --ctx tokens and
			the reserve fit: krun copies the matrices into memory, or maps them
			and the page cache holds them) or paged (the file stays mapped and
			the OS reads experts from disk as they are routed to). A paged run
			is estimated assuming the page cache keeps the hot matrices and, in
			the rest of the budget, an equal share of each layer's experts, and
			that the router spreads tokens evenly over the experts: a token then
			reads (1 − that share) of its routed experts' bytes from disk (less
			where routing favours a few experts; read-ahead waste not counted).
			--disk-read RATE (bytes per second, like 2G) turns those bytes into
			a time per token. Then every file type llama-quantize makes (sizes
			as it allocates the tensors without an importance matrix, computed
			without writing a file: krun synth writes the same layout), best
			first by bits per weight (f32, bf16 and f16 hold a bf16 checkpoint's
			values: first, as equals), with each budget's verdict: RAM; mapped
			(too large to copy, each matrix page-aligned, but the page cache
			holds the whole file); paged N% (N% of the experts in RAM); or no
			(the f32 copies and states alone exceed it). The best type that
			runs from RAM or mapped is the recommendation (★), with how the
			next better type and the file run paged. rel. error is ggml's
			quantizer's relative RMS weight error on Gaussian rows
			(docs/quant-error.md), weighted as the plans above weigh groups;
			— for a type never measured (iq4_nl, iq4_xs, mxfp4). --kimi48b
			--gguf prints the table for the built-in 48B config; a checkpoint
			folder with --gguf for its config.
		`) + exitCodes,
		Example: "  krun plan --kimi48b --fit 24G\n" +
			"  krun plan ./Kimi-Linear-48B-A3B-Instruct --fit 16G,24G,32G,64G --ctx 32768 -o md\n" +
			"  krun plan --kimi48b --preset q8,q4,q4-all\n" +
			"  krun plan Kimi-Linear-48B-A3B-Instruct-Q4_K_M.gguf --fit 16G,24G,32G\n" +
			"  krun plan --kimi48b --gguf --fit 16G,24G,32G --disk-read 2G",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			}
			if (opts.Model == "") == !opts.Kimi48B {
				return cli.Usagef("plan: give a MODEL (checkpoint folder, .kt or GGUF file) or --kimi48b, not both")
			}
			if !cmd.Flags().Changed("gguf") && opts.Model != "" && looksGGUF(opts.Model) {
				opts.GGUF = true
			}
			if err := checkFormat(opts.Format); err != nil {
				return err
			}
			if opts.GGUF {
				if opts.Preset != "" || opts.Formats != "" {
					return cli.Usagef("plan: --preset and --formats plan krun's own formats; not with --gguf (the default for a GGUF file: give --gguf=false)")
				}
			} else {
				if opts.Fit == "" && opts.Preset == "" {
					return cli.Usagef("plan: --fit SIZE (like 24G) or --preset NAME is required")
				}
				if opts.DiskRead != "" {
					return cli.Usagef("plan: --disk-read is for --gguf plans")
				}
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.GGUF {
				return runPlanGGUF(opts)
			}
			return runPlan(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Kimi48B, "kimi48b", false, "plan the built-in Kimi-Linear-48B-A3B config (no files)")
	cmd.Flags().BoolVar(&opts.Kimi48B, "synthetic", false, "same as --kimi48b")
	cmd.Flags().StringVar(&opts.Fit, "fit", "", "memory budgets, comma-separated (like 24G or 16G,24G,32G,64G)")
	cmd.Flags().StringVar(&opts.Preset, "preset", "", "presets to evaluate, comma-separated ("+strings.Join(PresetNames(), ", ")+")")
	cmd.Flags().BoolVar(&opts.GGUF, "gguf", false, "plan llama.cpp's GGUF file types: which one to run in each budget, from RAM or paged (default for a GGUF MODEL)")
	cmd.Flags().StringVar(&opts.DiskRead, "disk-read", "", "--gguf: the storage's read rate per second (like 2G), for a paged run's time per token")
	opts.FitFlags.register(cmd, "")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	return cmd
}

// planPreset is the load options of a preset plan evaluates.
func planPreset(name string) (model.LoadOptions, error) { return presetOptions(name) }

// fitBudgets parses the fit flags for cfg and the --fit budgets (none
// without --fit).
func (o *PlanOptions) fitBudgets(cfg *arch.Config) (model.FitOptions, []int64, error) {
	fo, err := o.FitFlags.options(o.Err, cfg, false)
	if err != nil {
		return fo, nil, err
	}
	var budgets []int64
	if o.Fit != "" {
		if budgets, err = parseBudgets(o.Fit); err != nil {
			return fo, nil, err
		}
	}
	return fo, budgets, nil
}

func runPlan(o *PlanOptions) error {
	var cfg *arch.Config
	name := "Kimi-Linear-48B-A3B (built-in config)"
	if o.Kimi48B {
		cfg = arch.Kimi48B()
	} else {
		var err error
		if cfg, err = peekConfig(o.Model); err != nil {
			return err
		}
		name = modelName(o.Model)
	}
	fo, budgets, err := o.fitBudgets(cfg)
	if err != nil {
		return err
	}
	var presets []string
	if o.Preset != "" {
		for _, p := range strings.Split(o.Preset, ",") {
			if _, err := planPreset(strings.TrimSpace(p)); err != nil {
				return cli.Usagef("--preset: %v", err)
			}
			presets = append(presets, strings.TrimSpace(p))
		}
	}
	type row struct {
		label string
		p     *model.FitPlan
		err   error
	}
	var rows []row
	for _, b := range budgets {
		p, err := model.PlanFit(cfg, b, fo)
		var fe *model.FitError
		switch {
		case errors.As(err, &fe) && len(budgets)+len(presets) > 1:
			rows = append(rows, row{"fit " + cli.HumanBytes(b), nil, err})
			continue
		case errors.As(err, &fe):
			return &cli.UsageError{Err: err}
		case err != nil:
			return err
		}
		rows = append(rows, row{"fit " + cli.HumanBytes(b), p, nil})
	}
	for _, name := range presets {
		lo, _ := planPreset(name)
		p, err := model.PlanFormats(cfg, lo, fo)
		if err != nil {
			return err
		}
		rows = append(rows, row{"preset " + name, p, nil})
	}
	for _, r := range rows {
		if r.p == nil {
			fmt.Fprintf(o.Out, "%s: %s\n\n", r.label, cli.OneLine(r.err))
			continue
		}
		if err := printPlan(o.Out, o.Format, name, r.label, r.p, fo.Reserve); err != nil {
			return err
		}
	}
	if len(rows) > 1 {
		var sum [][]string
		for _, r := range rows {
			if r.p == nil {
				var fe *model.FitError
				errors.As(r.err, &fe)
				sum = append(sum, []string{r.label, "no", cli.HumanBytes(fe.Smallest) + " (smallest)", "needs " + cli.HumanBytes(fe.MinBudget), "", ""})
				continue
			}
			fits, budget := "yes", cli.HumanBytes(r.p.Budget)
			if r.p.Budget == 0 {
				fits, budget = "", "needs "+cli.HumanBytes(r.p.MinBudget(fo.Reserve))
			}
			sum = append(sum, []string{r.label, fits, cli.HumanBytes(r.p.Resident), budget, expertSummary(r.p), fmt.Sprintf("%.4f", r.p.RMS())})
		}
		fmt.Fprintln(o.Out, "summary:")
		return cli.Table(o.Out, o.Format, []string{"plan", "fits", "resident", "budget", "formats", "rms error"}, sum)
	}
	return nil
}

// expertSummary is a plan's formats in a few words: the non-expert
// groups', then the routed experts' counts per format.
func expertSummary(p *model.FitPlan) string {
	var parts []string
	count := map[kernel.DType]int{}
	var order []kernel.DType
	for i := range p.Groups {
		g := &p.Groups[i]
		dt := g.Chosen().DType
		if g.Class != model.FitExperts {
			parts = append(parts, fmt.Sprintf("%s %s", g.Name, dt))
			continue
		}
		if count[dt] == 0 {
			order = append(order, dt)
		}
		count[dt]++
	}
	var ex []string
	for _, dt := range order {
		ex = append(ex, fmt.Sprintf("%d×%s", count[dt], dt))
	}
	if len(ex) > 0 {
		parts = append([]string{"experts " + strings.Join(ex, "+")}, parts...)
	}
	return strings.Join(parts, ", ")
}

// printPlan prints one plan's table and totals.
func printPlan(w io.Writer, format, model_, label string, p *model.FitPlan, reserveRule int64) error {
	cache := fmt.Sprintf("%d × %d tokens, %s MLA cache", p.Seqs, p.Context, p.CacheDType)
	if p.Budget > 0 {
		fmt.Fprintf(w, "%s, %s: %s reserved for the OS, %s\n", model_, label, cli.HumanBytes(p.Reserve), cache)
	} else {
		fmt.Fprintf(w, "%s, %s: %s\n", model_, label, cache)
	}
	var rows [][]string
	for i := 0; i < len(p.Groups); {
		g := &p.Groups[i]
		c := g.Chosen()
		// consecutive MoE layers of one format and importance share a row
		name, params, bytes, cost, j := g.Name, g.Params, c.Bytes, c.Cost, i+1
		for ; g.Class == model.FitExperts && j < len(p.Groups); j++ {
			h := &p.Groups[j]
			if h.Class != model.FitExperts || h.Importance != g.Importance || h.Chosen().DType != c.DType {
				break
			}
			params, bytes, cost = params+h.Params, bytes+h.Chosen().Bytes, cost+h.Chosen().Cost
			name = fmt.Sprintf("experts.%d-%d", g.Layer, h.Layer)
		}
		i = j
		share := 0.0
		if p.Error > 0 {
			share = 100 * cost / p.Error
		}
		rows = append(rows, []string{name, paramsLabel(params), string(c.DType), cli.HumanBytes(bytes),
			fmt.Sprintf("%.4f", c.RelErr), fmt.Sprintf("%.3g", g.Importance), fmt.Sprintf("%.4g (%.1f%%)", cost, share)})
	}
	var params int64
	for i := range p.Groups {
		params += p.Groups[i].Params
	}
	rows = append(rows, []string{"f32 (norms, router, kv_b, …)", "", "f32", cli.HumanBytes(p.Fixed), "0", "", ""})
	emb := "embedding (mapped, not counted)"
	if p.CountEmbedding {
		emb = "embedding"
	}
	rows = append(rows, []string{emb, "", "stored", cli.HumanBytes(p.Embedding), "0", "", ""})
	rows = append(rows, []string{"KDA state", "", "f32", cli.HumanBytes(p.KDAState), "", "", ""})
	rows = append(rows, []string{"MLA cache", "", string(p.CacheDType), cli.HumanBytes(p.MLACache), "", "", ""})
	rows = append(rows, []string{"total resident", paramsLabel(params), "", cli.HumanBytes(p.Resident), fmt.Sprintf("%.4f rms", p.RMS()), "", fmt.Sprintf("%.4g", p.Error)})
	if err := cli.Table(w, format, []string{"group", "params", "format", "bytes", "rel. error", "importance", "expected error"}, rows); err != nil {
		return err
	}
	if p.Budget > 0 {
		fmt.Fprintf(w, "fits: %s resident + %s reserve of %s (%s spare)\n\n", cli.HumanBytes(p.Resident), cli.HumanBytes(p.Reserve),
			cli.HumanBytes(p.Budget), cli.HumanBytes(p.Budget-p.Reserve-p.Resident))
	} else {
		fmt.Fprintf(w, "needs a budget of %s (with the reserve)\n\n", cli.HumanBytes(p.MinBudget(reserveRule)))
	}
	return nil
}

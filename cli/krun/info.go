package krun

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	ggufpkg "github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
)

// InfoOptions are info's flags.
type InfoOptions struct {
	*cli.Factory
	Model   string
	Verify  bool
	Format  string
	Threads int
}

// NewCmdInfo builds `krun info`.
func NewCmdInfo(f *cli.Factory, runF func(*InfoOptions) error) *cobra.Command {
	opts := &InfoOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "info MODEL.kt|MODEL.gguf",
		Short: "Describe a model file and what of it is resident in RAM",
		Long: cli.Doc(`
			Print a model file's header (format version, config, weight formats)
			and, per tensor group, its bytes and how many of them are resident in
			RAM now (mincore) versus only on disk: the file is mmap'd, so experts
			no token has routed to stay on disk until touched. It refuses a file
			whose stored config or tensor table contradicts itself (a tensor
			missing, extra, of the wrong shape, or in a format other than the
			header names) or whose small unpacked tensors (norms, biases) are not
			finite, as loading would, without reading the packed weights.
			--verify makes every check generate's loading makes (this reads,
			and so pages in, the whole file): every tensor's CRC32C and finite
			values too.
		`) + exitCodes,
		Example: "  krun info kimi-q4.kt\n  krun info kimi-q4.kt --verify -o md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInfo(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Verify, "verify", false, "check every tensor's checksum (reads the whole file)")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	cmd.Flags().IntVar(&opts.Threads, "threads", 2, "threads for --verify")
	return cmd
}

// Tensor groups of the residency report, in display order.
var groups = []string{"embedding", "attention", "gates", "attn small (f32)", "dense mlp", "router", "routed experts", "shared expert", "norms", "lm_head"}

// tensorGroup classifies a tensor by its checkpoint name.
func tensorGroup(t *kfile.Tensor) string {
	n := t.Name
	switch {
	case n == "model.embed_tokens.weight" && t.Layout == kfile.LayoutRaw:
		return "embedding"
	case n == "lm_head.weight" || n == "model.embed_tokens.weight":
		return "lm_head"
	case strings.Contains(n, ".experts."):
		return "routed experts"
	case strings.Contains(n, "shared_experts."):
		return "shared expert"
	case strings.Contains(n, "block_sparse_moe.gate"):
		return "router"
	case strings.Contains(n, ".mlp."):
		return "dense mlp"
	case strings.HasSuffix(n, "norm.weight") && !strings.Contains(n, "self_attn"):
		return "norms"
	case strings.Contains(n, "self_attn.") && t.Layout == kfile.LayoutRaw:
		return "attn small (f32)"
	case strings.Contains(n, "_a_proj") && !strings.Contains(n, "kv_a") || strings.Contains(n, "_b_proj") && !strings.Contains(n, "kv_b"):
		return "gates"
	}
	return "attention"
}

func runInfo(o *InfoOptions) error {
	if o.Threads < 1 {
		return cli.Usagef("info: --threads %d; want at least 1", o.Threads)
	}
	if err := checkFormat(o.Format); err != nil {
		return err
	}
	if isGGUF(o.Model) {
		return ggufInfo(o)
	}
	f, err := kfile.Open(o.Model)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer f.Close()
	h := f.Header
	cfg, err := arch.Parse(h.Config, o.Model+" (stored config.json)")
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	// residency first: the checks below read the small raw tensors
	type agg struct {
		n, bytes, res int64
		dtypes        []string
	}
	by := map[string]*agg{}
	unknown := false
	var tb, tr int64
	for i := range h.Table.Tensors {
		t := &h.Table.Tensors[i]
		g := tensorGroup(t)
		a := by[g]
		if a == nil {
			a = &agg{}
			by[g] = a
		}
		a.n++
		a.bytes += t.Size
		r := f.Resident(t)
		if r < 0 {
			unknown = true
			r = 0
		}
		a.res += r
		tb, tr = tb+t.Size, tr+r
		if !slices.Contains(a.dtypes, t.DType) {
			a.dtypes = append(a.dtypes, t.DType)
		}
	}
	// before any output: a refused file prints one error line
	check := model.CheckTable // the header, the table, the small raw tensors
	if o.Verify {
		check = func(f *kfile.File) error { return model.VerifyFile(f, o.Threads) }
	}
	if err := check(f); err != nil {
		return &cli.UsageError{Err: err}
	}
	fmt.Fprintf(o.Out, "%s: ktune model file v%d, %s, %d tensors, data from byte %d, alignment %d\n",
		o.Model, h.Version, cli.HumanBytes(h.FileSize), len(h.Table.Tensors), h.DataStart, h.Table.Alignment)
	fmt.Fprintf(o.Out, "config: %d layers (%d KDA, %d MLA), hidden %d, %d experts (top %d), vocab %d; %s parameters\n",
		cfg.NumHiddenLayers, cfg.NumKDALayers(), cfg.NumMLALayers(), cfg.HiddenSize, cfg.NumExperts, cfg.NumExpertsPerToken,
		cfg.VocabSize, paramsLabel(cfg.ParamCount().Total))
	keys := make([]string, 0, len(h.Table.Meta))
	for k := range h.Table.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var meta []string
	for _, k := range keys {
		meta = append(meta, k+"="+h.Table.Meta[k])
	}
	fmt.Fprintf(o.Out, "meta: %s\n", strings.Join(meta, " "))
	if o.Verify {
		fmt.Fprintln(o.Out, "verified: every tensor's checksum and values, and the tensor table against the config")
	}
	var rows [][]string
	pct := func(r, b int64) string {
		if unknown {
			return "unknown"
		}
		return fmt.Sprintf("%s (%.0f%%)", cli.HumanBytes(r), 100*float64(r)/float64(max(b, 1)))
	}
	for _, g := range groups {
		a := by[g]
		if a == nil {
			continue
		}
		rows = append(rows, []string{g, fmt.Sprint(a.n), strings.Join(a.dtypes, ","), cli.HumanBytes(a.bytes), pct(a.res, a.bytes), cli.HumanBytes(a.bytes - a.res)})
	}
	rows = append(rows, []string{"total", fmt.Sprint(len(h.Table.Tensors)), "", cli.HumanBytes(tb), pct(tr, tb), cli.HumanBytes(tb - tr)})
	return cli.Table(o.Out, o.Format, []string{"group", "tensors", "dtype", "bytes", "resident", "on disk only"}, rows)
}

// checkFormat refuses a table format other than text and md.
func checkFormat(f string) error {
	switch f {
	case "text", "", "md", "markdown":
		return nil
	}
	return cli.Usagef("-o %q: want text or md", f)
}

// ggufGroup classifies a GGUF tensor of a kimi-linear file.
func ggufGroup(name string) string {
	switch {
	case name == "token_embd.weight":
		return "embedding"
	case name == "output.weight":
		return "lm_head"
	case strings.HasSuffix(name, "_exps.weight"):
		return "routed experts"
	case strings.Contains(name, "_shexp."):
		return "shared expert"
	case strings.Contains(name, "ffn_gate_inp") || strings.Contains(name, "exp_probs_b"):
		return "router"
	case strings.Contains(name, ".ffn_gate.") || strings.Contains(name, ".ffn_up.") || strings.Contains(name, ".ffn_down."):
		return "dense mlp"
	case strings.HasSuffix(name, "attn_norm.weight") || strings.HasSuffix(name, "ffn_norm.weight") || name == "output_norm.weight":
		return "norms"
	case strings.Contains(name, "ssm_f_") || strings.Contains(name, "ssm_g_") || strings.Contains(name, "ssm_beta"):
		return "gates"
	case strings.Contains(name, "ssm_") || strings.Contains(name, "kv_a_norm") || strings.Contains(name, "attn_k_b") || strings.Contains(name, "attn_v_b"):
		return "attn small (f32)"
	}
	return "attention"
}

// ggufInfo describes a GGUF file: its parts, the config its metadata
// gives, and per tensor group the ggml types and bytes; --verify loads it
// (every check LoadGGUF makes, every tensor read).
func ggufInfo(o *InfoOptions) error {
	f, err := ggufpkg.Open(o.Model)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer f.Close()
	cfg, err := model.ConfigFromGGUF(f)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	var size int64
	for _, p := range f.Parts {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	if _, err := model.NewGGUFSource(f, cfg, o.Threads); err != nil {
		return &cli.UsageError{Err: err}
	}
	if o.Verify { // before any output: a refused file prints one error line
		// every block read (even when an earlier load verified the file
		// and remembered it), then the model built on the blocks in place
		if err := model.VerifyGGUF(f, o.Threads); err != nil {
			return &cli.UsageError{Err: err}
		}
		m, err := model.LoadGGUF(o.Model, model.LoadOptions{Runtime: model.Runtime{Threads: o.Threads}, Memory: model.Memory{AvailableMemory: -1}, Files: model.Files{Weights: model.WeightsMap, NoVerify: true}})
		if err != nil {
			return &cli.UsageError{Err: err}
		}
		m.Close()
	}
	name, _ := f.Metadata.String("general.name")
	fmt.Fprintf(o.Out, "%s: GGUF v%d %q, %s in %d part(s), %d tensors, %d metadata keys, alignment %d\n",
		o.Model, f.Version, name, cli.HumanBytes(size), len(f.Parts), len(f.Tensors), f.Metadata.Len(), f.Alignment)
	fmt.Fprintf(o.Out, "config: %d layers (%d KDA, %d MLA), hidden %d, %d experts (top %d), vocab %d; %s parameters\n",
		cfg.NumHiddenLayers, cfg.NumKDALayers(), cfg.NumMLALayers(), cfg.HiddenSize, cfg.NumExperts, cfg.NumExpertsPerToken,
		cfg.VocabSize, paramsLabel(cfg.ParamCount().Total))
	if o.Verify {
		fmt.Fprintln(o.Out, "verified: every tensor read, its scales and values finite, the tensor table against the config")
	}
	type agg struct {
		n, bytes int64
		types    []string
	}
	by := map[string]*agg{}
	var total int64
	for _, t := range f.Tensors {
		g := ggufGroup(t.Name)
		a := by[g]
		if a == nil {
			a = &agg{}
			by[g] = a
		}
		a.n++
		a.bytes += int64(t.Size)
		total += int64(t.Size)
		if ts := t.Type.String(); !slices.Contains(a.types, ts) {
			a.types = append(a.types, ts)
		}
	}
	var rows [][]string
	for _, g := range groups {
		if a := by[g]; a != nil {
			rows = append(rows, []string{g, fmt.Sprint(a.n), strings.Join(a.types, ","), cli.HumanBytes(a.bytes)})
		}
	}
	rows = append(rows, []string{"total", fmt.Sprint(len(f.Tensors)), "", cli.HumanBytes(total)})
	return cli.Table(o.Out, o.Format, []string{"group", "tensors", "ggml types", "bytes"}, rows)
}

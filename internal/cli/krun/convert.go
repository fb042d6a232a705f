package krun

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/cli"
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
}

// NewCmdConvert builds `krun convert`.
func NewCmdConvert(f *cli.Factory, runF func(*ConvertOptions) error) *cobra.Command {
	opts := &ConvertOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "convert HF_DIR -o OUT.kt",
		Short: "Convert a Hugging Face checkpoint into a krun model file",
		Long: cli.Doc(`
			Convert a Hugging Face Kimi Linear checkpoint folder (config.json and
			model.safetensors, or shards with model.safetensors.index.json) into
			one mmap-able model file: the config, a checked tensor table, and every
			weight already in the kernels' packed layout, page-aligned, each with
			a CRC32C. Loading it is a mapping: nothing is converted or copied,
			and experts no token routes to stay on disk. The format is described
			in docs/kt-format.md. The file is written atomically.

			Presets:
			  f32     every matrix f32 (exact; 4 bytes per weight)
			  bf16    every matrix bf16 (exact for a BF16 checkpoint)
			  q8      every matrix q8 (8-bit, f16 scale per 32 weights)
			  q4      routed experts q4; attention, dense MLP, shared expert and lm_head q8
			  q4-all  every matrix q4
			Norms, conv taps, biases, the MoE router and MLA's kv_b_proj are
			always f32; the KDA gate projections f32 unless --gates is given.
			--experts, --attn, --ffn (dense MLP and shared expert), --head
			(lm_head) and --gates override a preset's format for their group.
		`),
		Example: "  krun convert ./Kimi-Linear-48B-A3B-Instruct -o kimi-q4.kt --preset q4\n  krun convert ./tiny -o tiny.kt --preset q8 --experts q4 --head bf16",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if opts.Output == "" {
				return fmt.Errorf("convert: -o OUT.kt is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return runConvert(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "out", "o", "", "output model file")
	cmd.Flags().StringVar(&opts.Preset, "preset", "q8", "weight formats: f32, bf16, q8, q4, q4-all")
	cmd.Flags().StringVar(&opts.Experts, "experts", "", "routed experts' format (f32, bf16, q8, q4)")
	cmd.Flags().StringVar(&opts.Attn, "attn", "", "attention projections' format (KDA q/k/v/o, MLA q/kv_a/o)")
	cmd.Flags().StringVar(&opts.FFN, "ffn", "", "dense MLP and shared expert format")
	cmd.Flags().StringVar(&opts.Head, "head", "", "lm_head format")
	cmd.Flags().StringVar(&opts.Gates, "gates", "", "KDA gate projections' format (default f32)")
	cmd.Flags().IntVar(&opts.Threads, "threads", 0, "conversion threads (default all CPUs)")
	return cmd
}

// loadOptions is the preset with the group overrides applied.
func (o *ConvertOptions) loadOptions() (model.LoadOptions, error) {
	opt, err := presetOptions(o.Preset)
	if err != nil {
		return opt, err
	}
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

func runConvert(o *ConvertOptions) error {
	opt, err := o.loadOptions()
	if err != nil {
		return err
	}
	prog := cli.NewProgress(o.Err)
	t0 := time.Now()
	meta := map[string]string{"preset": o.Preset}
	if err := model.ConvertFile(o.Dir, o.Output, opt, meta, func(done, total int, name string) {
		prog("convert", done, total, name)
	}); err != nil {
		return err
	}
	st, err := os.Stat(o.Output)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s in %.1fs (preset %s)\n", o.Output, cli.HumanBytes(st.Size()), time.Since(t0).Seconds(), o.Preset)
	return nil
}

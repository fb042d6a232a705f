package krun

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/model"
)

// SynthOptions are synth's flags.
type SynthOptions struct {
	*cli.Factory
	Output  string
	Layers  int
	Type    string
	Seed    uint64
	Threads int

	fileType model.GGUFFileType // Type, parsed
}

// NewCmdSynth builds `krun synth`.
func NewCmdSynth(f *cli.Factory, runF func(*SynthOptions) error) *cobra.Command {
	opts := &SynthOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "synth -o FILE.gguf --type T",
		Short: "Write a kimi-linear GGUF file of random weights at Kimi Linear's widths, typed as llama-quantize types it",
		Long: cli.Doc(`
			Write a llama.cpp GGUF file (architecture kimi-linear) of random
			weights at Kimi-Linear-48B-A3B's widths (hidden 2304, 256 experts of
			1024, vocabulary 163840) and layer pattern, cut to --layers layers
			(layer 0 the dense MLP, KDA and MLA 3:1, the last layer MLA; 27: the
			whole 48B model), so that krun and llama.cpp (llama-bench,
			llama-cli) run one and the same file without the checkpoint.

			The file is what llama.cpp's convert_hf_to_gguf.py and then
			llama-quantize FILE OUT T would write for such a checkpoint: the
			converter's tensor names, shapes and metadata (a placeholder
			vocabulary of tokens <t0> … with no merges: give token ids), each
			tensor in the type llama-quantize gives it for the file type T
			(llama-quant.cpp's rules: norms, biases, ssm_a, the conv taps and
			the router f32; q6_K output and more bits for some attn_v and
			ffn_down layers in the K mixes; a type whose block does not divide
			a row falls back, e.g. q4_K → q5_0 for the 128-wide rows), in its
			order, general.file_type set. File types:
			`) + "  " + strings.Join(model.GGUFFileTypeNames(), ", ") + "\n" + cli.Doc(`

			The weights are random blocks of each tensor's type, zero-mean with
			variance 1/K for rows of K (activations stay of order 1 through the
			layers); norms 1, conv taps uniform in ±0.5, ssm_a −1. They are drawn
			in fixed chunks from --seed: the same flags give the same bytes at
			any --threads. The file is written tensor by tensor, streamed (a
			27-layer file is larger than memory), to a temporary file in the
			output's folder renamed at the end. Its general.name says it is
			synthetic: its outputs mean nothing.

			Before writing, synth refuses an output that is a folder or in a
			folder it cannot write, and one whose filesystem lacks room for the
			file, naming both sizes. Interrupted (Ctrl-C, SIGTERM), it removes
			its temporary file and exits 130 or 143.

			Exit status: 0 written; 2 a usage error (a flag, the output path,
			no room); 1 another failure (writing).
		`),
		Example: "  krun synth -o /data/kimi-q4km.gguf --type Q4_K_M\n" +
			"  krun synth -o kimi-2l-q8.gguf --layers 2 --type Q8_0 --seed 3\n" +
			"  llama-bench -m kimi-2l-q8.gguf -p 16 -n 4; krun bench kimi-2l-q8.gguf -p 16 -n 4",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Output == "" {
				return cli.Usagef("synth: -o FILE.gguf is required")
			}
			if opts.Type == "" {
				return cli.Usagef("synth: --type is required (%s)", strings.Join(model.GGUFFileTypeNames(), ", "))
			}
			ft, err := model.ParseGGUFFileType(opts.Type)
			if err != nil {
				return cli.Usagef("synth: --type %q: want one of %s", opts.Type, strings.Join(model.GGUFFileTypeNames(), ", "))
			}
			opts.fileType = ft
			if opts.Layers < 1 || opts.Layers > 27 {
				return cli.Usagef("synth: --layers %d; the model has 1 to 27 layers", opts.Layers)
			}
			if opts.Threads < 0 {
				return cli.Usagef("synth: --threads %d; give 1 or more (0: every CPU)", opts.Threads)
			}
			if runF != nil {
				return runF(opts)
			}
			return runSynth(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "out", "o", "", "output GGUF file")
	cmd.Flags().StringVar(&opts.Type, "type", "", "llama.cpp file type: "+strings.Join(model.GGUFFileTypeNames(), ", "))
	cmd.Flags().IntVar(&opts.Layers, "layers", 27, "decoder layers, 1 to 27 (layer 0 dense, Kimi's 3:1 KDA/MLA pattern, the last MLA)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "the random weights' seed (the same seed and flags, the same bytes)")
	cmd.Flags().IntVar(&opts.Threads, "threads", 0, "drawing threads (default all CPUs)")
	return cmd
}

func runSynth(o *SynthOptions) error {
	cfg, err := synthConfig(o.Layers)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if err := checkOutputFor("synth", nil, "", o.Output); err != nil {
		return err
	}
	s, err := model.NewSynthGGUF(cfg, o.fileType, o.Seed)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	size, err := s.Size()
	if err != nil {
		return err
	}
	free, err := diskFree(o.Output)
	if err != nil {
		return cli.Usagef("synth: -o %s: %v", o.Output, err)
	}
	if free >= 0 && free < size {
		return cli.Usagef("synth: -o %s: the file needs %s (%d bytes), but its filesystem has %s free; write it elsewhere, or choose a smaller --type or fewer --layers",
			o.Output, cli.HumanBytes(size), size, cli.HumanBytes(free))
	}
	room := "free space unknown"
	if free >= 0 {
		room = cli.HumanBytes(free) + " free"
	}
	fmt.Fprintf(o.Out, "writing %s: %s as GGUF %s, %d tensors, %s (%s)\n", o.Output, cfg.Source, o.fileType.Name, len(s.Tensors), cli.HumanBytes(size), room)
	stale, err := atomicfile.RemoveStale(o.Output)
	for _, st := range stale {
		fmt.Fprintf(o.Err, "krun: removed %s (%s), a temporary file left by an interrupted write\n", st.Path, cli.HumanBytes(st.Size))
	}
	if err != nil {
		return fmt.Errorf("synth: removing stale temporary files: %w", err)
	}
	stop := atomicfile.CleanupOnSignal(func(sig os.Signal, removed []string) {
		what := "no temporary file yet"
		if len(removed) > 0 {
			what = "removed " + strings.Join(removed, ", ")
		}
		fmt.Fprintf(o.Err, "krun: synth interrupted (%v): %s; %s is unchanged\n", sig, what, o.Output)
		exit(atomicfile.SignalExitCode(sig))
	})
	defer stop()
	prog := cli.NewProgress(o.Err)
	t0 := time.Now()
	if err := s.WriteFile(o.Output, o.Threads, func(done, total int, name string) {
		if time.Since(t0) >= quietFor {
			prog("synth", done, total, name)
		}
	}); err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	fmt.Fprintf(o.Out, "wrote %s: %s (%d bytes) in %.1fs, %.0f MB/s (kimi-linear GGUF %s, %d layers, seed %d); tensors: %s\n",
		o.Output, cli.HumanBytes(size), size, secs, float64(size)/1e6/secs, o.fileType.Name, o.Layers, o.Seed, s.TypeSummary())
	return nil
}

package krun

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/tokenizer"
)

// CalibrateOptions are calibrate's flags.
type CalibrateOptions struct {
	*cli.Factory
	Model      string
	Prompts    string // --prompts FILE
	Output     string // -o
	IDs        bool   // --ids: the prompt lines are token ids
	Ctx        int    // --ctx: most tokens per prompt
	Threads    int
	Tokenizer  string
	DType      string
	GGUFRepack string

	dtypeSet bool // --dtype given
}

// NewCmdCalibrate builds `krun calibrate`.
func NewCmdCalibrate(f *cli.Factory, runF func(*CalibrateOptions) error) *cobra.Command {
	opts := &CalibrateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "calibrate MODEL --prompts FILE -o OUT.imatrix",
		Short: "Gather the activation energies (importance matrix) that convert --imatrix weighs scales by",
		Long: cli.Doc(`
			Run each prompt of --prompts through MODEL — a Hugging Face
			checkpoint folder (loaded in --dtype's formats, f32 by default:
			the activations of the unquantized model), a .kt model file or a
			GGUF file — and record, for every weight matrix (attention and KDA
			projections, MLA's q, kv_a and o, the dense MLP, the shared and
			each routed expert, lm_head), the sum over the rows it multiplied
			of each input channel's squared activation, and the row count. A
			routed expert sees only the tokens routed to it. krun convert
			--imatrix OUT uses the mean squares as the per-channel weights of
			its scale search.

			--prompts holds one prompt per line (blank lines skipped), encoded
			with the model's tokenizer (--tokenizer DIR, else MODEL's folder or
			the GGUF file's own) without a chat template; with --ids each line
			is comma-separated token ids instead, and no tokenizer is needed.
			Each prompt runs from an empty state, cut to its first --ctx tokens.
			The result does not depend on -t (sums in float64, in token order;
			the tuning profile is not used, as its kernel choices change with
			the thread count).

			OUT is a safetensors file (format ktune-imatrix/1, docs/imatrix.md)
			keyed by the checkpoint's tensor names, written atomically. The
			summary names the prompts and tokens seen, the matrices covered and
			the routed experts no token reached (convert leaves those to the
			unweighted search).
		`) + exitCodes,
		Example: "  krun calibrate ./Kimi-Linear-48B-A3B-Instruct --prompts calib.txt -o kimi.imatrix --dtype bf16\n" +
			"  krun convert ./Kimi-Linear-48B-A3B-Instruct -o kimi-q4.kt --preset q4 --imatrix kimi.imatrix\n" +
			"  krun calibrate ./tiny --prompts ids.txt --ids -o tiny.imatrix",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			opts.dtypeSet = cmd.Flags().Changed("dtype")
			switch {
			case opts.Prompts == "":
				return cli.Usagef("calibrate: --prompts FILE is required")
			case opts.Output == "":
				return cli.Usagef("calibrate: -o OUT is required")
			case opts.Ctx < 1:
				return cli.Usagef("calibrate: --ctx %d; want at least 1 token per prompt", opts.Ctx)
			}
			if _, err := presetOptions(opts.DType); err != nil {
				return cli.Usagef("calibrate: --dtype: %v", err)
			}
			if _, err := ggufRepack(opts.GGUFRepack); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCalibrate(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Prompts, "prompts", "", "calibration prompts, one per line")
	fl.StringVarP(&opts.Output, "out", "o", "", "the importance matrix file to write")
	fl.BoolVar(&opts.IDs, "ids", false, "each line of --prompts is comma-separated token ids (no tokenizer)")
	fl.IntVar(&opts.Ctx, "ctx", 512, "most tokens per prompt (longer prompts are cut)")
	fl.IntVarP(&opts.Threads, "threads", "t", 0, "threads (default the usable CPUs; the result does not depend on them)")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "", "tokenizer folder (default MODEL's folder)")
	fl.StringVar(&opts.DType, "dtype", "f32", "formats for a checkpoint folder: "+strings.Join(PresetNames(), ", ")+" (a .kt file keeps its own; a GGUF file its own unless given)")
	fl.StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage)
	return cmd
}

// readPrompts reads the prompt file: one prompt per line, blank lines
// skipped, each token ids (ids) or text for tok.
func readPrompts(path string, ids bool, tok *tokenizer.Tokenizer) ([][]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("calibrate: --prompts: %v", err)
	}
	defer f.Close()
	var out [][]int32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		var p []int32
		if ids {
			if p, err = ParseIDs(line); err != nil {
				return nil, cli.Usagef("calibrate: %s line %d: %v", path, n, strings.TrimPrefix(err.Error(), "--ids: "))
			}
		} else {
			p = tok.Encode(line, false)
		}
		if len(p) == 0 {
			return nil, cli.Usagef("calibrate: %s line %d encodes to no tokens", path, n)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, cli.Usagef("calibrate: --prompts %s: %v", path, err)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("calibrate: --prompts %s holds no prompts (one per line)", path)
	}
	return out, nil
}

// checkImatrixOutput refuses, before any work, an output that is a folder,
// one of the inputs (the same file through a link too), or in a folder
// that does not take new files.
func checkImatrixOutput(out string, inputs ...string) error {
	st, err := os.Stat(out)
	if _, _, terr := atomicfile.Target(out); terr != nil && !(err == nil && st.IsDir()) {
		return cli.Usagef("calibrate: -o %v", terr)
	}
	switch {
	case err == nil && st.IsDir():
		return cli.Usagef("calibrate: -o %s is a folder; give a file name", out)
	case err == nil:
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return cli.Usagef("calibrate: -o %s is the input %s; write elsewhere", out, in)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return cli.Usagef("calibrate: -o %s: %v", out, errors.Unwrap(err))
	}
	d := filepath.Dir(out)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return cli.Usagef("calibrate: -o %s: folder %s does not exist", out, d)
	}
	f, err := os.CreateTemp(d, ".krun-write-check-")
	if err != nil {
		return cli.Usagef("calibrate: -o %s: folder %s not writable (%v)", out, d, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

func runCalibrate(o *CalibrateOptions) error {
	threads, err := cli.ThreadCount(o.Err, "-t", o.Threads)
	if err != nil {
		return err
	}
	repack, err := ggufRepack(o.GGUFRepack)
	if err != nil {
		return err
	}
	if err := checkImatrixOutput(o.Output, inputFiles(o.Model, o.Tokenizer, o.Prompts)...); err != nil {
		return err
	}
	if st, err := os.Stat(o.Prompts); err == nil && st.IsDir() {
		return cli.Usagef("calibrate: --prompts %s is a folder; give a file of prompts, one per line", o.Prompts)
	}
	var tok *tokenizer.Tokenizer
	if !o.IDs {
		if tok, _, err = loadTokenizer(o.Model, o.Tokenizer); err != nil {
			return cli.Usagef("calibrate: %v (give --tokenizer DIR, or token ids with --ids)", err)
		}
	}
	prompts, err := readPrompts(o.Prompts, o.IDs, tok)
	if err != nil {
		return err
	}
	cfg, err := peekConfig(o.Model)
	if err != nil {
		return err
	}
	cut := 0
	for i, p := range prompts {
		for j, id := range p {
			if id < 0 || int(id) >= cfg.VocabSize {
				return cli.Usagef("calibrate: %s prompt %d, token %d is id %d, outside %s's vocabulary 0..%d", o.Prompts, i+1, j, id, o.Model, cfg.VocabSize-1)
			}
		}
		if len(p) > o.Ctx {
			prompts[i], cut = p[:o.Ctx], cut+1
		}
	}
	preset := o.DType
	if isGGUF(o.Model) && !o.dtypeSet {
		preset = "" // the file's own types
	}
	// no tuning profile: its kernel choices differ with the thread count,
	// and so would the sums' last bits; the defaults' do not
	m, err := openModel(o.Model, preset, model.LoadOptions{Conversion: model.Conversion{GGUFRepack: repack}, Runtime: model.Runtime{Threads: threads}, Memory: model.Memory{MaxTokens: o.Ctx}})
	if err != nil {
		return err
	}
	defer m.Close()
	prog := cli.NewProgress(o.Err)
	t0 := time.Now()
	im, err := m.Calibrate(prompts, func(done, total int) {
		if time.Since(t0) >= quietFor {
			prog("calibrate", done, total, "prompts")
		}
	})
	if err != nil {
		return err
	}
	im.Model = filepath.Base(filepath.Clean(o.Model))
	if err := model.WriteImatrix(o.Output, im); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "calibrated %s on %d prompts, %d tokens (%d cut to --ctx %d) in %.1fs, %d threads\n",
		im.Model, im.Prompts, im.Tokens, cut, o.Ctx, time.Since(t0).Seconds(), m.Options().Threads)
	fmt.Fprintf(o.Out, "covered %d of %d weight matrices; %s\n", len(im.Entries), len(im.Entries)+len(im.Unseen), unroutedSummary(im.Unseen))
	st, err := os.Stat(o.Output)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s\n", o.Output, cli.HumanBytes(st.Size()))
	return nil
}

// unroutedSummary names the routed experts no token reached, by layer
// (unseen: their matrices' names, three per expert).
func unroutedSummary(unseen []string) string {
	if len(unseen) == 0 {
		return "every routed expert saw tokens"
	}
	var layers []string
	byLayer := map[string][]string{}
	n := 0
	for _, name := range unseen {
		// model.layers.L.block_sparse_moe.experts.E.w1.weight
		f := strings.Split(name, ".")
		if len(f) < 7 || f[len(f)-2] != "w1" {
			continue
		}
		l, e := f[2], f[5]
		if byLayer[l] == nil {
			layers = append(layers, l)
		}
		byLayer[l] = append(byLayer[l], e)
		n++
	}
	parts := make([]string, len(layers))
	for i, l := range layers {
		parts[i] = "layer " + l + ": " + strings.Join(byLayer[l], ", ")
	}
	return fmt.Sprintf("%d experts never routed (%s): convert gives them the unweighted search", n, strings.Join(parts, "; "))
}

package krun

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/cli"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/sample"
	"github.com/ktune/ktune/model/tokenizer"
	"github.com/ktune/ktune/tuner"
)

// GenerateOptions are generate's flags.
type GenerateOptions struct {
	*cli.Factory
	Model     string
	Prompt    string
	Chat      string
	System    string
	IDs       string
	N         int
	Sample    sample.Config
	Threads   int
	Tokenizer string
	DType     string
	PrintIDs  bool
	IgnoreEOS bool
	Lock      int
	NoVerify  bool
	// CacheSpill is a folder for the MLA cache's file-backed pages ("": heap).
	CacheSpill string
	// CacheDType is --cache-dtype.
	CacheDType string

	set map[string]bool // flags given on the command line
}

// NewCmdGenerate builds `krun generate`.
func NewCmdGenerate(f *cli.Factory, runF func(*GenerateOptions) error) *cobra.Command {
	opts := &GenerateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "generate MODEL (--prompt TEXT | --chat TEXT | --ids 1,2,3)",
		Short: "Generate text or token ids from a prompt",
		Long: cli.Doc(`
			Feed a prompt to MODEL — a .kt model file, or a Hugging Face
			checkpoint folder converted on the fly into --dtype's formats — and
			generate up to -n tokens, stopping at an end-of-sequence token.
			--prompt is encoded as is, --chat is wrapped in the tokenizer's chat
			template as a user turn; the text is streamed to stdout as it is
			generated. --ids takes token ids and prints token ids (comma-separated),
			and needs no tokenizer; --print-ids prints ids for a text prompt too.
			Prefill and decode tokens/s go to stderr.

			The tokenizer (tiktoken.model and tokenizer_config.json) is read from
			--tokenizer, else from MODEL's folder. Sampling is greedy unless
			--temp > 0; then --top-k, --top-p, --min-p, --repeat-penalty apply,
			in Hugging Face's order, drawn from a generator seeded with --seed.

			Weights are mmap'd: with a .kt file, experts no token has routed to
			stay on disk. --lock-hot N locks each MoE layer's N most-routed
			experts of the prompt in RAM (mlock; RLIMIT_MEMLOCK must allow it).
			--cache-spill DIR keeps the MLA cache in a file in DIR, mapped, so
			that a very long context's cache can be written back and evicted
			by the OS (the file is unlinked at once; Linux and macOS).
		`),
		Example: "  krun generate kimi-q4.kt --chat 'Write a haiku about CPUs' -n 64\n" +
			"  krun generate ./tiny --ids 1,2,3 -n 8\n" +
			"  krun generate kimi-q4.kt --prompt 'Once upon' --temp 0.8 --top-p 0.95 --seed 7",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			if _, err := cacheDType(opts.CacheDType); err != nil {
				return err
			}
			opts.set = map[string]bool{}
			for _, name := range []string{"prompt", "chat", "ids"} {
				opts.set[name] = cmd.Flags().Changed(name)
			}
			n := 0
			for _, s := range []string{"prompt", "chat", "ids"} {
				if opts.set[s] {
					n++
				}
			}
			if n != 1 {
				return errors.New("generate: give exactly one of --prompt, --chat or --ids")
			}
			if opts.N < 1 {
				return fmt.Errorf("generate: -n %d; want at least 1", opts.N)
			}
			if err := opts.Sample.Validate(); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runGenerate(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Prompt, "prompt", "p", "", "prompt text, encoded as is")
	fl.StringVar(&opts.Chat, "chat", "", "a user message, wrapped in the chat template")
	fl.StringVar(&opts.System, "system", "", "system message for --chat (default the template's)")
	fl.StringVar(&opts.IDs, "ids", "", "prompt token ids, comma-separated; prints ids")
	fl.IntVarP(&opts.N, "n-predict", "n", 128, "most tokens to generate")
	fl.Float32Var(&opts.Sample.Temperature, "temp", 0, "temperature; 0: greedy")
	fl.IntVar(&opts.Sample.TopK, "top-k", 0, "keep the k most likely tokens; 0: off")
	fl.Float32Var(&opts.Sample.TopP, "top-p", 0, "nucleus mass; 0 or 1: off")
	fl.Float32Var(&opts.Sample.MinP, "min-p", 0, "keep tokens with p ≥ min-p·pmax; 0: off")
	fl.Float32Var(&opts.Sample.RepeatPenalty, "repeat-penalty", 1, "divide repeated tokens' positive logits by this (1: off)")
	fl.IntVar(&opts.Sample.RepeatLastN, "repeat-last-n", 64, "tokens of history the penalty looks at; 0: all")
	fl.Uint64Var(&opts.Sample.Seed, "seed", 0, "sampling seed")
	fl.IntVarP(&opts.Threads, "threads", "t", 0, "threads (default the usable CPUs, see ktune detect; more are clamped to them)")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "", "tokenizer folder (default MODEL's folder)")
	fl.StringVar(&opts.DType, "dtype", "f32", "formats for a checkpoint folder: "+strings.Join(PresetNames(), ", ")+" (a .kt file keeps its own)")
	fl.BoolVar(&opts.PrintIDs, "print-ids", false, "print token ids instead of text")
	fl.BoolVar(&opts.IgnoreEOS, "ignore-eos", false, "do not stop at end-of-sequence tokens")
	fl.IntVar(&opts.Lock, "lock-hot", 0, "mlock each MoE layer's N most-routed experts after the prompt")
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "skip the .kt file's tensor checksums (they read the whole file)")
	fl.StringVar(&opts.CacheSpill, "cache-spill", "", "keep the MLA cache in a file in `DIR` (mapped; for very long contexts)")
	fl.StringVar(&opts.CacheDType, "cache-dtype", "bf16", cacheDTypeUsage)
	return cmd
}

// ParseIDs reads "1,2,3" (spaces allowed).
func ParseIDs(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--ids: %q is not a token id", f)
		}
		out = append(out, int32(v))
	}
	if len(out) == 0 {
		return nil, errors.New("--ids: no token ids")
	}
	return out, nil
}

// installProfile installs the tuning profile and prints its warnings.
func installProfile(o *cli.Factory) {
	path, warns := tuner.Install()
	for _, w := range warns {
		fmt.Fprintln(o.Err, "krun: warning:", w)
	}
	if path != "" {
		fmt.Fprintln(o.Err, "krun: tuning profile", path)
	}
}

func runGenerate(o *GenerateOptions) error {
	installProfile(o.Factory)
	idsOut := o.set["ids"] || o.PrintIDs
	var tok *tokenizer.Tokenizer
	if !idsOut || !o.set["ids"] || o.Tokenizer != "" {
		dir := o.Tokenizer
		if dir == "" {
			dir = o.Model
			if file, err := isModelFile(o.Model); err == nil && file {
				dir = filepath.Dir(o.Model)
			}
		}
		var err error
		if tok, err = tokenizer.Load(dir); err != nil {
			return fmt.Errorf("generate: %w (give --tokenizer DIR, or --ids)", err)
		}
	}
	threads, err := cli.ThreadCount(o.Err, "-t", o.Threads)
	if err != nil {
		return err
	}
	cdt, err := cacheDType(o.CacheDType)
	if err != nil {
		return err
	}
	m, err := openModel(o.Model, o.DType, model.LoadOptions{Threads: threads, NoVerify: o.NoVerify, CacheSpillDir: o.CacheSpill, CacheDType: cdt})
	if err != nil {
		return err
	}
	defer m.Close()
	tuner.UsePlacement(m.Options().Threads)
	V := m.Shapes.Vocab

	// ---- the prompt
	var ids []int32
	switch {
	case o.set["ids"]:
		if ids, err = ParseIDs(o.IDs); err != nil {
			return err
		}
	case o.set["chat"]:
		var msgs []tokenizer.Message
		if o.System != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: o.System})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: o.Chat})
		ids = tok.Encode(tok.ApplyChat(msgs, true), true)
	default:
		ids = tok.Encode(o.Prompt, false)
	}
	if len(ids) == 0 {
		return errors.New("generate: the prompt encodes to no tokens")
	}
	for i, id := range ids {
		if id < 0 || int(id) >= V {
			return fmt.Errorf("generate: prompt token %d is id %d, outside %s's vocabulary 0..%d", i, id, o.Model, V-1)
		}
	}
	eos := []int32{int32(m.Cfg.EOSTokenID)}
	if tok != nil {
		eos = append(eos, tok.EOS()...)
	}
	smp, err := sample.New(o.Sample)
	if err != nil {
		return err
	}

	// ---- prefill
	st := m.NewState(0)
	defer st.Close()
	t0 := time.Now()
	logits, err := m.Prefill(st, ids)
	if err != nil {
		return err
	}
	tPrefill := time.Since(t0)
	if o.Lock > 0 {
		n, err := m.LockHotExperts(o.Lock)
		if err != nil {
			fmt.Fprintf(o.Err, "krun: warning: %v\n", err)
		} else {
			fmt.Fprintf(o.Err, "krun: locked %s of hot experts in RAM\n", cli.HumanBytes(n))
		}
	}

	// ---- decode: sample, emit, feed back
	history := slices.Clone(ids)
	var dec *tokenizer.Decoder
	if !idsOut {
		dec = tok.NewDecoder()
	}
	var tDecode time.Duration
	steps := 0
	for n := 0; n < o.N; n++ {
		next, err := smp.TrySample(logits, history)
		if err != nil {
			return err
		}
		history = append(history, next)
		stop := !o.IgnoreEOS && slices.Contains(eos, next)
		switch {
		case idsOut:
			sep := ","
			if n == 0 {
				sep = ""
			}
			fmt.Fprintf(o.Out, "%s%d", sep, next)
		case !stop && !tok.IsSpecial(next):
			fmt.Fprint(o.Out, dec.Add(next))
		}
		if stop || n+1 == o.N {
			break
		}
		t1 := time.Now()
		out, err := m.Decode([]*model.State{st}, []int32{next})
		if err != nil {
			return err
		}
		tDecode += time.Since(t1)
		steps++
		logits = out[0]
	}
	if dec != nil {
		fmt.Fprint(o.Out, dec.Flush())
	}
	fmt.Fprintln(o.Out)
	fmt.Fprintf(o.Err, "krun: prefill %d tokens in %.3fs (%.1f tokens/s); decode %d tokens in %.3fs (%.1f tokens/s); %d threads\n",
		len(ids), tPrefill.Seconds(), float64(len(ids))/tPrefill.Seconds(),
		steps, tDecode.Seconds(), float64(steps)/max(tDecode.Seconds(), 1e-9), m.Options().Threads)
	if o.CacheSpill != "" {
		heap, file := st.BytesByTier()
		fmt.Fprintf(o.Err, "krun: state %s heap, MLA cache %s file-backed in %s\n", cli.HumanBytes(heap), cli.HumanBytes(file), o.CacheSpill)
	}
	return nil
}

package krun

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	ggufpkg "github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
	"github.com/ktune/ktune/model/sample"
	"github.com/ktune/ktune/model/tokenizer"
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
	Load      string
	// CacheSpill is a folder for the MLA cache's file-backed pages ("": heap).
	CacheSpill string
	// CacheDType is --cache-dtype.
	CacheDType string
	// GGUFRepack is --gguf-repack.
	GGUFRepack string

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
			Ranges: --temp ≥ 0 (0: greedy); --top-k ≥ 0 (0: off); --top-p in
			[0, 1] (0 or 1: off); --min-p in [0, 1] (0: off); --repeat-penalty
			> 0 (1: off); --repeat-last-n ≥ 0 (0: the whole history). A value
			outside its range is refused.

			A prompt longer than the model's maximum length (model_max_length
			in config.json or in the tokenizer's tokenizer_config.json, the
			smaller) is refused; a prompt that fits but with -n tokens runs
			past it gets a warning naming both lengths.

			Weights are mmap'd: with a .kt file, experts no token has routed to
			stay on disk. --lock-hot N locks each MoE layer's N most-routed
			experts of the prompt in RAM (mlock; RLIMIT_MEMLOCK must allow it).
			--cache-spill DIR keeps the MLA cache in a file in DIR, mapped, so
			that a very long context's cache can be written back and evicted
			by the OS (the file is unlinked at once; Linux and macOS).
		`) + exitCodes,
		Example: "  krun generate kimi-q4.kt --chat 'Write a haiku about CPUs' -n 64\n" +
			"  krun generate ./tiny --ids 1,2,3 -n 8\n" +
			"  krun generate kimi-q4.kt --prompt 'Once upon' --temp 0.8 --top-p 0.95 --seed 7",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			if _, err := cacheDType(opts.CacheDType); err != nil {
				return err
			}
			if _, err := loadMode(opts.Load); err != nil {
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
				return cli.Usagef("generate: give exactly one of --prompt, --chat or --ids")
			}
			if opts.N < 1 {
				return cli.Usagef("generate: -n %d; want at least 1", opts.N)
			}
			if err := checkSampling(opts.Sample); err != nil {
				return err
			}
			if opts.set["ids"] {
				if _, err := ParseIDs(opts.IDs); err != nil {
					return &cli.UsageError{Err: err}
				}
			}
			if _, err := presetOptions(opts.DType); err != nil {
				return cli.Usagef("generate: --dtype: %v", err)
			}
			if opts.Lock < 0 {
				return cli.Usagef("generate: --lock-hot %d; want 0 or more", opts.Lock)
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
	fl.Float32Var(&opts.Sample.Temperature, "temp", 0, "temperature ≥ 0; 0: greedy")
	fl.IntVar(&opts.Sample.TopK, "top-k", 0, "keep the k most likely tokens; 0: off")
	fl.Float32Var(&opts.Sample.TopP, "top-p", 0, "nucleus mass in [0, 1]; 0 or 1: off")
	fl.Float32Var(&opts.Sample.MinP, "min-p", 0, "keep tokens with p ≥ min-p·pmax, min-p in [0, 1]; 0: off")
	fl.Float32Var(&opts.Sample.RepeatPenalty, "repeat-penalty", 1, "divide repeated tokens' positive logits by this (> 0; 1: off)")
	fl.IntVar(&opts.Sample.RepeatLastN, "repeat-last-n", 64, "tokens of history the penalty looks at (≥ 0); 0: all")
	fl.Uint64Var(&opts.Sample.Seed, "seed", 0, "sampling seed")
	fl.IntVarP(&opts.Threads, "threads", "t", 0, "threads (default the usable CPUs, see ktune detect; more are clamped to them)")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "", "tokenizer folder (default MODEL's folder)")
	fl.StringVar(&opts.DType, "dtype", "f32", "formats for a checkpoint folder: "+strings.Join(PresetNames(), ", ")+" (a .kt file keeps its own; a GGUF file its own unless given)")
	fl.StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage)
	fl.BoolVar(&opts.PrintIDs, "print-ids", false, "print token ids instead of text")
	fl.BoolVar(&opts.IgnoreEOS, "ignore-eos", false, "do not stop at end-of-sequence tokens")
	fl.IntVar(&opts.Lock, "lock-hot", 0, "mlock each MoE layer's N most-routed experts after the prompt")
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "skip a model file's checks, which read the whole file: a .kt file's tensor checksums and scale checks, a GGUF file's scale scan (made once per file and remembered); a corrupt file then fails later, or gives NaN logits")
	fl.StringVar(&opts.Load, "load", "auto", loadUsage)
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

// checkSampling refuses a sampling flag outside its range (sample.Config
// takes temperature < 0 as greedy, top-p > 1 and a repeat penalty of 0
// as off: on the command line they are mistakes).
func checkSampling(c sample.Config) error {
	bad := func(flag string, v any, want string) error {
		return cli.Usagef("generate: %s %v out of range; want %s", flag, v, want)
	}
	nan := func(x float32) bool { return x != x }
	switch {
	case nan(c.Temperature) || c.Temperature < 0 || math.IsInf(float64(c.Temperature), 0):
		return bad("--temp", c.Temperature, "0 (greedy) or more")
	case c.TopK < 0:
		return bad("--top-k", c.TopK, "0 (off) or more")
	case nan(c.TopP) || c.TopP < 0 || c.TopP > 1:
		return bad("--top-p", c.TopP, "a mass in [0, 1] (0 or 1: off)")
	case nan(c.MinP) || c.MinP < 0 || c.MinP > 1:
		return bad("--min-p", c.MinP, "a fraction in [0, 1] (0: off)")
	case nan(c.RepeatPenalty) || c.RepeatPenalty <= 0 || math.IsInf(float64(c.RepeatPenalty), 0):
		return bad("--repeat-penalty", c.RepeatPenalty, "a factor > 0 (1: off)")
	case c.RepeatLastN < 0:
		return bad("--repeat-last-n", c.RepeatLastN, "0 (the whole history) or more")
	}
	if err := c.Validate(); err != nil {
		return &cli.UsageError{Err: fmt.Errorf("generate: %w", err)}
	}
	return nil
}

// maxLength is the longest context the model at path takes: config.json's
// model_max_length and, when tokDir has one, tokenizer_config.json's, the
// smaller (0: unknown), with where it comes from.
func maxLength(cfg *arch.Config, tokDir string) (int, string) {
	n, from := cfg.ModelMaxLength, "model_max_length in "+cfg.Source
	if tokDir == "" {
		return n, from
	}
	b, err := os.ReadFile(filepath.Join(tokDir, tokenizer.ConfigFile))
	if err != nil {
		return n, from
	}
	var tc struct {
		ModelMaxLength float64 `json:"model_max_length"`
	}
	if json.Unmarshal(b, &tc) == nil && tc.ModelMaxLength >= 1 && tc.ModelMaxLength < 1<<40 {
		if t := int(tc.ModelMaxLength); n <= 0 || t < n {
			n, from = t, "model_max_length in "+filepath.Join(tokDir, tokenizer.ConfigFile)
		}
	}
	return n, from
}

// isSynthetic reports whether path is a model file of random weights
// (its meta has model.MetaSynthetic).
func isSynthetic(path string) bool {
	f, err := kfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, ok := f.Header.Table.Meta[model.MetaSynthetic]
	return ok
}

// loadTokenizer finds the model's tokenizer: the folder dir if given,
// else a GGUF file's own (tokenizer.ggml.*), else MODEL's folder (a
// .kt file's folder). It returns the folder read ("" for a GGUF file).
func loadTokenizer(modelPath, dir string) (*tokenizer.Tokenizer, string, error) {
	if dir == "" && isGGUF(modelPath) {
		f, err := ggufpkg.Open(modelPath)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		tok, err := tokenizer.FromGGUF(f.Metadata, f.Path)
		return tok, "", err
	}
	if dir == "" {
		dir = modelPath
		if file, err := isModelFile(modelPath); err == nil && file {
			dir = filepath.Dir(modelPath)
		}
	}
	tok, err := tokenizer.Load(dir)
	return tok, dir, err
}

// peekConfig reads a model's config without loading it: a .kt file's
// header, a GGUF file's metadata, or a checkpoint folder's config.json.
func peekConfig(path string) (*arch.Config, error) {
	file, err := isModelFile(path)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	if file && isGGUF(path) {
		f, err := ggufpkg.Open(path)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		defer f.Close()
		cfg, err := model.ConfigFromGGUF(f)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return cfg, nil
	}
	if !file {
		cfg, err := arch.Load(path)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return cfg, nil
	}
	f, err := kfile.Open(path)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	defer f.Close()
	cfg, err := arch.Parse(f.Header.Config, path+" (stored config.json)")
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	return cfg, nil
}

// installProfile installs the tuning profile, prints its warnings and
// returns it, the chooser of the models the command loads (nil: none).
func installProfile(o *cli.Factory) kernel.Chooser {
	c, report := installProfileQuiet(o)
	report()
	return c
}

// installProfileQuiet installs the tuning profile and returns it (the
// models' chooser; nil: none) and the function that prints its warnings
// and path (called once the model is open, so that a refused model is one
// error line).
func installProfileQuiet(o *cli.Factory) (kernel.Chooser, func()) {
	path := o.Profile
	if path == "" {
		path = os.Getenv("KTUNE_PROFILE")
	}
	p, _, info, warns := profile.InstallFrom(path)
	var c kernel.Chooser // no profile: a nil interface, not a nil *Profile in one
	if p != nil {
		c = p
	}
	return c, func() {
		for _, w := range warns {
			fmt.Fprintln(o.Err, "krun: warning:", w)
		}
		if info != "" {
			fmt.Fprintln(o.Err, "krun:", info)
		}
	}
}

func runGenerate(o *GenerateOptions) error {
	threads, err := cli.ThreadCount(o.Err, "-t", o.Threads)
	if err != nil {
		return err
	}
	cdt, err := cacheDType(o.CacheDType)
	if err != nil {
		return err
	}
	chooser, reportProfile := installProfileQuiet(o.Factory)
	idsOut := o.set["ids"] || o.PrintIDs
	var tok *tokenizer.Tokenizer
	tokDir := ""
	repack, err := ggufRepack(o.GGUFRepack)
	if err != nil {
		return err
	}
	gguf := isGGUF(o.Model)
	if !idsOut || !o.set["ids"] || o.Tokenizer != "" {
		if tok, tokDir, err = loadTokenizer(o.Model, o.Tokenizer); err != nil {
			if o.Tokenizer == "" && isSynthetic(o.Model) {
				return cli.Usagef("generate: %s is a synthetic model (krun convert --synthetic: random weights, no tokenizer); give the prompt as --ids", o.Model)
			}
			return cli.Usagef("generate: %v (give --tokenizer DIR, or --ids)", err)
		}
	}

	// ---- the prompt, checked against the model's config before loading it
	var ids []int32
	switch {
	case o.set["ids"]:
		if ids, err = ParseIDs(o.IDs); err != nil {
			return &cli.UsageError{Err: err}
		}
	case o.set["chat"]:
		var msgs []tokenizer.Message
		if o.System != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: o.System})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: o.Chat})
		ids = tok.EncodeChat(msgs, true)
	default:
		ids = tok.Encode(o.Prompt, false)
	}
	if len(ids) == 0 {
		return cli.Usagef("generate: the prompt encodes to no tokens")
	}
	cfg, err := peekConfig(o.Model)
	if err != nil {
		return err
	}
	V := cfg.VocabSize
	for i, id := range ids {
		if id < 0 || int(id) >= V {
			return cli.Usagef("generate: prompt token %d is id %d, outside %s's vocabulary 0..%d", i, id, o.Model, V-1)
		}
	}
	limitDir := tokDir // the tokenizer's folder, even when --ids needs no tokenizer
	if limitDir == "" {
		limitDir = o.Model
		if file, err := isModelFile(o.Model); err == nil && file {
			limitDir = filepath.Dir(o.Model)
		}
	}
	if limit, from := maxLength(cfg, limitDir); limit > 0 {
		switch {
		case len(ids) > limit:
			return cli.Usagef("generate: the prompt is %d tokens, longer than the model's maximum length %d (%s)", len(ids), limit, from)
		case len(ids)+o.N > limit:
			fmt.Fprintf(o.Err, "krun: warning: the prompt's %d tokens and -n %d run past the model's maximum length %d (%s)\n", len(ids), o.N, limit, from)
		}
	}

	preset := o.DType
	if gguf && !o.set["dtype"] {
		preset = "" // the file's own types
	}
	load, _ := loadMode(o.Load)
	m, err := openModel(o.Model, preset, model.LoadOptions{Conversion: model.Conversion{GGUFRepack: repack}, Runtime: model.Runtime{Threads: threads, Chooser: chooser}, Memory: model.Memory{CacheSpillDir: o.CacheSpill, CacheDType: cdt}, Files: model.Files{NoVerify: o.NoVerify, Weights: load}})
	if err != nil {
		return err
	}
	defer m.Close()
	reportProfile()
	profile.UsePlacement(m.Options().Threads)
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
	// one logits buffer for the prefill and every decode step
	// --lock: the last layer's experts are locked by the whole prompt's heat
	logits, err := m.PrefillWith(st, ids, model.PrefillOptions{Logits: make([]float32, m.Shapes.Vocab), EveryRow: o.Lock > 0})
	var step struct { // DecodeTo's arguments, reused step after step
		out [1][]float32
		sts [1]*model.State
		ids [1]int32
	}
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
		step.out[0], step.sts[0], step.ids[0] = logits, st, next
		if err := m.DecodeTo(step.out[:], step.sts[:], step.ids[:]); err != nil {
			return err
		}
		tDecode += time.Since(t1)
		steps++
	}
	if dec != nil {
		fmt.Fprint(o.Out, dec.Flush())
	}
	fmt.Fprintln(o.Out)
	fmt.Fprintf(o.Err, "krun: prefill %d tokens in %.3fs (%.1f tokens/s); decode %d tokens in %.3fs (%.1f tokens/s); %d threads\n",
		len(ids), tPrefill.Seconds(), float64(len(ids))/tPrefill.Seconds(),
		steps, tDecode.Seconds(), float64(steps)/max(tDecode.Seconds(), 1e-9), m.Options().Threads)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mem := m.Memory()
	rss := "unknown"
	if r := peakRSS(); r > 0 {
		rss = cli.HumanBytes(r)
	}
	fmt.Fprintf(o.Err, "krun: memory: peak RSS %s; Go heap %s (from the OS); weights %s in memory, %s mapped\n",
		rss, cli.HumanBytes(int64(ms.HeapSys)), cli.HumanBytes(mem.WeightsHeap), cli.HumanBytes(mem.WeightsMapped))
	if c := m.ExpertCache(); c.Slots > 0 {
		hit := 0.0
		if n := c.Hits + c.Misses; n > 0 {
			hit = float64(c.Hits) / float64(n)
		}
		fmt.Fprintf(o.Err, "krun: expert cache: %d experts in %s, %.0f%% of the routed experts found there, %s read with O_DIRECT\n",
			c.Slots, cli.HumanBytes(c.Bytes), 100*hit, cli.HumanBytes(c.ReadBytes))
	}
	if o.CacheSpill != "" {
		heap, file := st.BytesByTier()
		fmt.Fprintf(o.Err, "krun: state %s heap, MLA cache %s file-backed in %s\n", cli.HumanBytes(heap), cli.HumanBytes(file), o.CacheSpill)
	}
	return nil
}

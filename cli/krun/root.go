// Package krun implements the krun command: convert a Hugging Face Kimi
// Linear checkpoint into a model file, generate text or token ids, and
// benchmark prefill and decode, llama.cpp style (llama-quantize,
// llama-cli, llama-bench).
package krun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	_ "github.com/ktune/ktune/kernels/all" // register every kernel family
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
)

// Main runs krun with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return cli.Main(NewCmdRoot(&cli.Factory{Out: stdout, Err: stderr}), args, stdout, stderr, exitCode)
}

// exitCode is cli.ExitCode, with a bad model input (a checkpoint or model
// file refused by package model or kfile) a usage error too: 0 ok, 2 a
// usage error or a bad input, 1 another failure.
func exitCode(err error) int {
	var in *model.InputError
	var kf *kfile.Error
	if errors.As(err, &in) || errors.As(err, &kf) {
		return 2
	}
	return cli.ExitCode(err)
}

// exitCodes is the help's paragraph on exit codes.
const exitCodes = `
Exit status: 0 success; 2 a usage error or a bad input (a flag, an
argument, a model file or checkpoint that is missing, corrupt or does
not match its config, a model too large for the available memory);
1 another failure.`

// NewCmdRoot builds the krun command tree.
func NewCmdRoot(f *cli.Factory) *cobra.Command {
	var isa cli.ISAFlags
	cmd := &cobra.Command{
		Use:   "krun",
		Short: "Convert, run and benchmark Kimi Linear on CPUs",
		Long: cli.Doc(`
			krun is ktune's engine on the command line: convert a Hugging Face
			Kimi Linear checkpoint into one mmap-able model file (.kt), generate
			from it, and benchmark prefill and decode against the machine's
			memory bandwidth bound. generate and bench use this machine's tuning
			profile (written by ktune) when there is one, or $KTUNE_PROFILE;
			KTUNE_DEBUG=1 logs every kernel choice.
		`) + exitCodes,
		SilenceUsage: true,
		Args:         cobra.NoArgs, // an unknown command is a usage error (exit 2)
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return isa.Apply()
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	isa.Register(cmd)
	cmd.PersistentFlags().StringVar(&f.Profile, "profile", "", "tuning profile to use (off: none); default $KTUNE_PROFILE, else this machine's from ktune, which is not used when ktune marked it noisy")
	cmd.AddCommand(NewCmdConvert(f, nil), NewCmdGenerate(f, nil), NewCmdBench(f, nil), NewCmdInfo(f, nil))
	cmd.AddCommand(NewCmdServe(f, nil))
	cmd.AddCommand(NewCmdPlan(f, nil))
	cmd.AddCommand(NewCmdCalibrate(f, nil))
	cmd.AddCommand(NewCmdSynth(f, nil))
	return cmd
}

// Preset is a named choice of weight formats.
type Preset struct {
	Name    string
	Doc     string
	Formats model.Formats
}

// Presets are the formats convert (--preset) and generate/bench (--dtype)
// know. Norms, conv taps, biases, the MoE router and MLA's kv_b_proj are
// always f32; the KDA gate projections (f_a/f_b, g_a/g_b, b_proj) f32
// unless --gates says otherwise.
var Presets = []Preset{
	{"f32", "every matrix f32 (exact; 4 bytes per weight)", model.Formats{DType: kernel.F32}},
	{"bf16", "every matrix bf16 (exact for a BF16 checkpoint)", model.Formats{DType: kernel.BF16}},
	{"q8", "every matrix q8 (8-bit, f16 scale per 32)", model.Formats{DType: kernel.Q8}},
	{"q4", "routed experts q4; attention, dense MLP, shared expert, lm_head q8", model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}},
	{"q4-all", "every matrix q4 (attention and lm_head lose the most)", model.Formats{DType: kernel.Q4}},
	{"q4-mix", "routed and shared experts, dense MLP q4; attention q5; lm_head q6 (llama.cpp Q4_K_M's allocation: about its bytes per token)", model.Formats{DType: kernel.Q4, AttnDType: kernel.Q5, HeadDType: kernel.Q6}},
	{"q6", "every matrix q6 (6-bit, f16 scale per 32; near q8's error at 0.8 of its size)", model.Formats{DType: kernel.Q6}},
	{"q3", "routed experts q3 (3-bit, f16 scale per 32); attention, dense MLP, shared expert, lm_head q8", model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q3}},
	{"q4k", "routed experts q4k (4-bit with a min, 6-bit scale and min codes per 32 under an f16 pair per 256: ggml Q4_K's rule, 4.5 bits/weight); attention, dense MLP, shared expert, lm_head q8", model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q4K}},
	{"q4k-m", "routed and shared experts, dense MLP q4k; attention q5k; lm_head q6k (q4-mix's bytes in the K formats: llama.cpp Q4_K_M's allocation)", model.Formats{DType: kernel.Q4K, AttnDType: kernel.Q5K, HeadDType: kernel.Q6K}},
	{"q3k", "routed experts q3k (3-bit with a min, K scales: 3.5 bits/weight); attention, dense MLP, shared expert, lm_head q8", model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q3K}},
	{"q2", "routed experts q2 (2-bit, a scale and offset code per 32: 2.5 bits/weight); attention, dense MLP, shared expert, lm_head q8", model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q2}},
}

// PresetNames lists the preset names.
func PresetNames() []string {
	var n []string
	for _, p := range Presets {
		n = append(n, p.Name)
	}
	return n
}

// presetOptions returns the load options of a preset.
func presetOptions(name string) (model.LoadOptions, error) {
	for _, p := range Presets {
		if p.Name == strings.ToLower(strings.TrimSpace(name)) { // as the format flags: any case
			return model.LoadOptions{Formats: p.Formats}, nil
		}
	}
	return model.LoadOptions{}, fmt.Errorf("unknown preset %q (%s)", name, strings.Join(PresetNames(), ", "))
}

// parseDType reads a weight dtype flag.
func parseDType(flag, s string) (kernel.DType, error) {
	switch dt := kernel.DType(strings.ToLower(strings.TrimSpace(s))); dt {
	case kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		return dt, nil
	}
	return "", fmt.Errorf("--%s %q: want f32, bf16, q8, q6k, q6, q5k, q5, q4k, q4, q3k, q3 or q2", flag, s)
}

// isModelFile reports whether path is a model file (else a checkpoint
// folder). A missing path's error is info's: "kfile: x.kt: no such file or
// directory".
func isModelFile(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, kfile.IOError(path, err)
	}
	return !st.IsDir(), nil
}

// openModel loads a .kt file (its formats apply) or a checkpoint folder
// (converted on the fly into preset's formats).
// Every error is a UsageError (exit 2): a missing, corrupt or mismatched
// model, or one too large for the available memory.
func openModel(path, preset string, opt model.LoadOptions) (*model.Model, error) {
	m, err := openModelErr(path, preset, opt)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	return m, nil
}

func openModelErr(path, preset string, opt model.LoadOptions) (*model.Model, error) {
	file, err := isModelFile(path)
	if err != nil {
		return nil, err
	}
	if file && !isGGUF(path) {
		return model.LoadFile(path, opt)
	}
	if !file || preset != "" { // a GGUF file's types decide unless a preset is asked for
		if opt, err = withPreset(opt, preset); err != nil {
			return nil, err
		}
	}
	if file {
		return model.LoadGGUF(path, opt)
	}
	return model.Load(path, opt)
}

// withPreset returns opt with the weight formats of the preset called name.
func withPreset(opt model.LoadOptions, name string) (model.LoadOptions, error) {
	p, err := presetOptions(name)
	if err != nil {
		return opt, err
	}
	opt.Formats = p.Formats
	return opt, nil
}

// isGGUF reports whether the file at path is read as a GGUF file: it
// starts with GGUF's magic, or it is named .gguf and does not start with
// a model file's (so that an empty or foreign .gguf file gets the GGUF
// reader's message); else it is read as a .kt model file.
func isGGUF(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false // (a named pipe's open would wait for a writer)
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, len(kfile.Magic))
	n, _ := io.ReadFull(f, magic)
	magic = magic[:n]
	if bytes.HasPrefix(magic, []byte("GGUF")) {
		return true
	}
	return strings.EqualFold(filepath.Ext(path), ".gguf") && string(magic) != kfile.Magic
}

// ggufRepack parses --gguf-repack.
func ggufRepack(s string) (quant.GGMLRepack, error) {
	switch s {
	case "fast", "":
		return quant.RepackFast, nil
	case "exact":
		return quant.RepackExact, nil
	}
	return 0, cli.Usagef("--gguf-repack %q: want fast or exact", s)
}

// ggufRepackUsage is --gguf-repack's help.
const ggufRepackUsage = "for a GGUF file repacked (--load repack, convert), the ggml types no packed format holds exactly (K-quants, Q5_1): fast (the nearest format: q4 with a min, q8) or exact (f32: the file's values, 4 bytes per weight)"

// modelName is a short name for tables.
func modelName(path string) string { return filepath.Base(filepath.Clean(path)) }

// cacheDTypes are the --cache-dtype values.
var cacheDTypes = map[string]kernel.DType{"f32": kernel.F32, "bf16": kernel.BF16, "q8": kernel.Q8}

// cacheDType parses --cache-dtype.
func cacheDType(s string) (kernel.DType, error) {
	if dt, ok := cacheDTypes[s]; ok {
		return dt, nil
	}
	return "", cli.Usagef("--cache-dtype %q: want f32, bf16 or q8", s)
}

// loadMode parses --load.
func loadMode(s string) (model.WeightsMode, error) {
	w, err := model.ParseWeightsMode(s)
	if err != nil {
		return "", cli.Usagef("--load %q: want auto, map, copy or repack", s)
	}
	return w, nil
}

// loadUsage is --load's help.
const loadUsage = "where a .kt or GGUF file's weights live: copy (into memory, on huge pages where Linux has them: faster to stream), map (read in place from the page cache: nothing copied, larger-than-RAM models run, experts prefetched when routed to), auto (copy when they fit in the available memory beside the caches, else map) or, for a GGUF file, repack (converted into krun's own panel formats in memory, as --gguf-repack says)"

// cacheDTypeUsage is --cache-dtype's help.
const cacheDTypeUsage = "MLA latent cache format: f32, bf16 (half the bytes per cached token, as llama.cpp's f16 cache) or q8"

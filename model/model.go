// Package model is ktune's inference engine for Kimi Linear: it loads a
// Hugging Face checkpoint folder (config.json plus model.safetensors, or
// shards listed by model.safetensors.index.json), converts the weights into
// the kernels' packed formats, and runs prefill and decode over
// per-sequence states.
//
//	m, err := model.Load(dir, model.LoadOptions{Formats: model.Formats{DType: kernel.Q8}})
//	st := m.NewState(0)
//	logits, err := m.Prefill(st, prompt)   // [vocab] at the last prompt position
//	next, err := m.Decode([]*model.State{st}, []int32{id}) // one token per sequence
//
// The forward pass is in forward.go; loading and the checkpoint checks in
// load.go; the memory report and the refusal of models that do not fit in
// memory.go; synthetic models for benchmarks in random.go.
//
// Every kernel call asks the model's tuning profile (LoadOptions.Chooser,
// carried down in kernel.Rules) for its variant and parameters, else runs
// the defaults; KTUNE_DEBUG=1 logs the choices.
//
// A Model is safe for use by one goroutine at a time (the kernels share one
// worker pool); States belong to the Model that made them.
package model

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/kernels/kda"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/kernels/moe"
)

// Model is a loaded (or synthetic) Kimi Linear model.
type Model struct {
	Cfg    *arch.Config
	Shapes arch.Shapes

	Embed  Embedding     // [V, C], read in place (mmap'd) when loaded from a checkpoint
	Layers []Layer       // num_hidden_layers
	Norm   []float32     // model.norm.weight [C]
	LMHead *quant.Matrix // lm_head.weight [V, C]

	opt    LoadOptions
	mem    MemoryReport
	closer io.Closer // the checkpoint or model file, kept open while weights point into it
	// mapped: the big matrices are views of a file's mapping (a model file,
	// a GGUF file in place), not converted into memory
	mapped bool
	// copied holds the packed matrices placeWeights copied out of the
	// model file's mapping (nil: none), freed by releaseCopied at Close
	copied        []byte
	releaseCopied func([]byte) error
	preload       *preloader                 // the background page-cache reader of a mapped model (preload.go)
	cache         *expertCache               // the routed experts of a mapped model too large for memory (expertcache.go)
	file          string                     // the model file a mapped model's weights are read from
	inFile        func(addr uintptr) bool    // whether addr lies in that file's mapping (nil: no mapping)
	files         []fileStamp                // that file's parts (a split GGUF's) as they were at load (CheckFile)
	fault         atomic.Pointer[FaultError] // the fault a step met (Fault)
	kdaTmp        map[int][]*kda.LayerCache
	mlaTmp        mla.LayerCache // mlaMixer's batch of the sequences' caches
	routing       moe.Routing    // the MoE blocks' routing, reused layer after layer
	row           rowTask        // the running row-wise step (rows)
	rowBody       func(w, lo, hi int)
	free          stateList // states given back by State.Free
	timing        timer     // LoadOptions.OpTimer
	hits          [][]int64 // [layer][expert] tokens routed to each expert (nil for dense layers)
	// observe, if set, sees the input x [rows, w.K] of every weight matrix
	// w the forward pass multiplies (Calibrate); nil costs nothing.
	observe func(w *quant.Matrix, x []float32, rows int)
}

// Layer is one decoder layer: a KDA or MLA mixer, then a dense MLP or a MoE
// block, each behind its RMSNorm and residual.
type Layer struct {
	Kind     arch.Kind
	InNorm   []float32 // input_layernorm.weight [C]
	PostNorm []float32 // post_attention_layernorm.weight [C]

	KDA *kda.LayerWeights // Kind == arch.KDA
	MLA *mla.LayerWeights // Kind == arch.MLA

	MLP *MLP              // layers < first_k_dense_replace (or off the MoE frequency)
	MoE *moe.BlockWeights // the others
}

// MLP is the dense SwiGLU feed-forward: down·(silu(gate·x) ⊙ (up·x)).
type MLP struct {
	Gate, Up *quant.Matrix // [I, C]
	Down     *quant.Matrix // [C, I]
}

// Embedding is the token embedding table in its checkpoint dtype (F32, BF16
// or F16), or for a GGUF file in a quantized ggml type (GGML set, DType
// ""), row-major [V, C]; rows are widened to f32 on lookup.
type Embedding struct {
	V, C  int
	DType safetensors.DType
	GGML  gguf.Type // the ggml type when DType is ""
	Data  []byte
}

// RowBytes is the size of one row.
func (e *Embedding) RowBytes() int {
	if e.DType == "" {
		return e.C / max(e.GGML.BlockSize(), 1) * e.GGML.BlockBytes()
	}
	return e.C * e.DType.Size()
}

// Row writes row id (widened to f32) into dst [C].
func (e *Embedding) Row(dst []float32, id int) {
	rb := e.RowBytes()
	// The size was checked at load, so the decoders cannot fail here.
	if e.DType == "" {
		_ = quant.DequantizeGGML(e.GGML, e.Data[id*rb:(id+1)*rb], dst[:e.C])
		return
	}
	_ = safetensors.DecodeFloat32(dst[:e.C], e.DType, e.Data[id*rb:(id+1)*rb])
}

// DefaultPrefillChunk is the most tokens a prefill pass runs by default:
// the longest prefill the tuner tunes (a longer prompt runs as passes of
// this many tokens over its cached prefix).
const DefaultPrefillChunk = 512

// LoadOptions configure Load and Random. The zero value loads every big
// matrix as F32, runs on all CPUs, keeps the MLA cache in F32 and budgets
// one sequence of min(model_max_length, 4096) tokens in the memory check.
//
// The options come in groups, embedded so that their fields read as
// LoadOptions' own (opt.DType, opt.Threads): the weights' formats, how
// weights are converted into them, how the forward pass runs, what the
// states may take in memory, and how a model file is read.
type LoadOptions struct {
	Formats
	Conversion
	Runtime
	Memory
	Files
}

// Formats are the weight formats of the matrix groups: what a preset or a
// memory-budget plan chooses and a model file records.
type Formats struct {
	// DType is the format of the big matrices (projections, experts,
	// lm_head): kernel.F32 (default), BF16, Q8 or Q4.
	DType kernel.DType
	// AttnDType (KDA q/k/v/o, MLA q/kv_a/o), FFNDType (dense MLP and
	// shared experts), ExpertDType (routed experts) and HeadDType
	// (lm_head) override DType for their matrices when set.
	AttnDType, FFNDType, ExpertDType, HeadDType kernel.DType
	// GateDType is the format of the KDA gate projections (f_a/f_b, g_a/g_b,
	// b_proj); default F32. The MoE router, norms, conv taps, A_log,
	// dt_bias, the score bias and MLA's kv_b_proj are always f32.
	GateDType kernel.DType
	// SharedDType overrides FFNDType for the shared experts alone, and
	// ExpertDTypeByLayer overrides ExpertDType for the routed experts of
	// the MoE layers it lists (0-based layer index): the per-group formats
	// a memory-budget plan chooses (PlanFit). A model file written with
	// either records that group's meta as AsStored (per-tensor formats).
	// Random ignores both.
	SharedDType        kernel.DType
	ExpertDTypeByLayer map[int]kernel.DType
}

// Conversion is how weights are packed into their Formats when they are
// converted (from a checkpoint's values, or a GGUF file's types).
type Conversion struct {
	// QuantSearch packs Q8/Q4 weights converted from f32 values with a
	// per-group scale search (quant.QuantizeWeighted: lower error than
	// the max-abs scale, about 5× slower to convert).
	QuantSearch bool
	// Imatrix, if set, weights that search (and implies it) for each
	// Q8/Q6/Q4/Q3 matrix converted from f32 values that it covers, by
	// the mean squared activation of each input channel (Calibrate,
	// ReadImatrix); the matrices it lacks get the unweighted search. The
	// caller checks it against the model (Imatrix.Match).
	Imatrix *Imatrix
	// GGUFRepack is how LoadGGUF packs a matrix whose ggml type no
	// format of ours holds exactly (K-quants, Q5_1) when no weight dtype
	// is set: quant.RepackExact (f32, the file's values; the default) or
	// quant.RepackFast (the nearest packed format, which runs at speed).
	GGUFRepack quant.GGMLRepack
}

// Runtime is how the model runs: its threads, its kernels' choices, its
// prefill passes and their timing.
type Runtime struct {
	// Threads for the kernels and the conversion; 0: every usable CPU.
	// More than the usable CPUs (pool.Default().Size()) run as that many.
	Threads int
	// Classes are the accuracy classes the feed-forward and lm_head matmuls
	// may use (nil: kernel.DefaultClasses, f32 and int8act).
	Classes []kernel.Class
	// Chooser, if set, is the model's tuning profile: every kernel call of
	// its forward pass asks it first (kernel.Rules). It is the model's own:
	// another model in the process keeps its own.
	Chooser kernel.Chooser
	// PrefillChunk is the most tokens one prefill pass runs; longer prompts
	// are fed in chunks that continue the state (default DefaultPrefillChunk).
	PrefillChunk int
	// OpTimer, if set, receives the time of every op of the forward pass
	// (see Ops); nil costs nothing.
	OpTimer OpTimer
}

// Memory is what the states take and where, and the memory check's
// budget: run-time choices that a model file does not record.
type Memory struct {
	// CacheDType is the MLA latent cache's format: F32 (default), BF16, Q8.
	CacheDType kernel.DType
	// CacheSpillDir, if set, is a folder where each new State keeps its MLA
	// cache pages in a file, mapped (MAP_SHARED) rather than on the heap,
	// so that the OS can write a very long context's cache back to disk and
	// evict it. The file is unlinked at once (nothing is left behind) and
	// its disk space is reserved page by page, so a full disk is an error
	// from Prefill or Decode. Linux and macOS only. The memory check does
	// not count the spilled cache.
	CacheSpillDir string
	// MaxSeqs and MaxTokens size the caches the memory check budgets for
	// (defaults: 1 sequence of min(model_max_length, 4096) tokens).
	MaxSeqs, MaxTokens int
	// AvailableMemory overrides the OS's available memory in the check
	// (0: ask the OS; negative: skip the check).
	AvailableMemory int64
}

// Files is how LoadFile and LoadGGUF read a model file.
type Files struct {
	// Weights is where LoadFile keeps a model file's packed matrices:
	// copied into memory (huge pages where the OS has them) when they fit
	// (WeightsAuto, the default), always (WeightsCopy) or read in place
	// from the file's mapping (WeightsMap). See WeightsMode.
	Weights WeightsMode
	// NoVerify makes LoadFile skip the per-tensor checksums, which read
	// the whole file (and so pull every cold expert into the page cache);
	// the header is always checked.
	NoVerify bool
}

// AsStored, as a weight group's dtype, keeps each matrix in the format its
// source stores: a GGUF file's ggml types (repacked, see GGUFSource), a
// model file's per-tensor formats. A Hugging Face checkpoint has no such
// formats (it is refused there).
const AsStored kernel.DType = "stored"

// storedDefaults sets every weight group o leaves unset to AsStored
// (the base DType only when no group is set, so a preset's groups keep
// inheriting it).
func (o *Formats) storedDefaults() {
	if o.DType == "" {
		o.DType = AsStored
	}
	if o.GateDType == "" && o.DType == AsStored {
		o.GateDType = AsStored
	}
}

// usesStored reports whether a weight group is AsStored.
func (o *Formats) usesStored() bool {
	for _, dt := range []kernel.DType{o.DType, o.AttnDType, o.FFNDType, o.ExpertDType, o.HeadDType, o.GateDType, o.SharedDType} {
		if dt == AsStored {
			return true
		}
	}
	for _, dt := range o.ExpertDTypeByLayer {
		if dt == AsStored {
			return true
		}
	}
	return false
}

// expertDType is the format of layer l's routed experts.
func (o *Formats) expertDType(l int) kernel.DType {
	if dt, ok := o.ExpertDTypeByLayer[l]; ok {
		return dt
	}
	return o.ExpertDType
}

// weightDTypes lists the weight formats a model's matrices may have.
const weightDTypes = "f32, bf16, q8, q6k, q6, q5k, q5, q4k, q4, q3k, q3, q2"

// weightDType reports whether dt is one of weightDTypes.
func weightDType(dt kernel.DType) bool {
	switch dt {
	case kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		return true
	}
	return false
}

// expertsMixed reports whether ExpertDTypeByLayer gives some MoE layer of
// cfg a format other than ExpertDType.
func (o *Formats) expertsMixed(cfg *arch.Config) bool {
	for l, dt := range o.ExpertDTypeByLayer {
		if cfg.IsMoE(l) && dt != o.ExpertDType {
			return true
		}
	}
	return false
}

func (o *LoadOptions) defaults(cfg *arch.Config) error {
	if o.DType == "" {
		o.DType = kernel.F32
	}
	if o.GateDType == "" {
		o.GateDType = kernel.F32
	}
	for _, p := range []*kernel.DType{&o.AttnDType, &o.FFNDType, &o.ExpertDType, &o.HeadDType} {
		if *p == "" {
			*p = o.DType
		}
	}
	if o.SharedDType == "" {
		o.SharedDType = o.FFNDType
	}
	if o.CacheDType == "" {
		o.CacheDType = kernel.F32
	}
	if o.Imatrix != nil {
		o.QuantSearch = true
	}
	for _, dt := range []kernel.DType{o.DType, o.GateDType, o.AttnDType, o.FFNDType, o.ExpertDType, o.HeadDType} {
		if !weightDType(dt) && dt != AsStored {
			return fmt.Errorf("model: weight dtype %q not supported (%s)", dt, weightDTypes)
		}
	}
	if err := o.checkGroupDTypes(cfg); err != nil {
		return err
	}
	switch o.CacheDType {
	case kernel.F32, kernel.BF16, kernel.Q8:
	default:
		return fmt.Errorf("model: MLA cache dtype %q not supported (f32, bf16, q8)", o.CacheDType)
	}
	if o.CacheSpillDir != "" {
		if !mla.FileAllocatorSupported {
			return fmt.Errorf("model: MLA cache spill (%s) is supported on linux and darwin, not %s", o.CacheSpillDir, runtime.GOOS)
		}
		if fi, err := os.Stat(o.CacheSpillDir); err != nil {
			return fmt.Errorf("model: MLA cache spill folder: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("model: MLA cache spill folder %s is not a folder", o.CacheSpillDir)
		}
	}
	o.Threads = threadsFor(o.Threads)
	if o.PrefillChunk <= 0 {
		o.PrefillChunk = DefaultPrefillChunk
	}
	if o.MaxSeqs <= 0 {
		o.MaxSeqs = 1
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 4096
		if cfg.ModelMaxLength > 0 {
			o.MaxTokens = min(o.MaxTokens, cfg.ModelMaxLength)
		}
	}
	return nil
}

// checkGroupDTypes checks SharedDType and ExpertDTypeByLayer: formats the
// base DType accepts (the same check, run on a probe), layers of cfg that
// have routed experts.
func (o *LoadOptions) checkGroupDTypes(cfg *arch.Config) error {
	ok := func(dt kernel.DType) error {
		if dt == AsStored {
			return nil
		}
		p := LoadOptions{Formats: Formats{DType: dt, SharedDType: AsStored}} // AsStored: no recursion
		return p.defaults(cfg)
	}
	if err := ok(o.SharedDType); err != nil {
		return err
	}
	for l, dt := range o.ExpertDTypeByLayer {
		if !cfg.IsMoE(l) {
			return fmt.Errorf("model: expert format for layer %d: not a layer with routed experts", l)
		}
		if err := ok(dt); err != nil {
			return err
		}
	}
	return nil
}

// Options returns the options the model was loaded with, defaults filled in.
func (m *Model) Options() LoadOptions { return m.opt }

// SetChooser changes the tuning profile later passes follow (nil: the
// defaults).
func (m *Model) SetChooser(c kernel.Chooser) { m.opt.Chooser = c }

// rules are the kernel choices the model's calls follow: its tuning
// profile and accuracy classes.
func (m *Model) rules() kernel.Rules {
	return kernel.Rules{Chooser: m.opt.Chooser, Classes: m.opt.Classes}
}

// Close releases the checkpoint or model-file mapping (the embedding
// table, and for a model file every weight, reads it). The model must not
// be used afterwards.
func (m *Model) Close() error {
	m.stopPreload()             // before the mapping goes
	err := m.closeExpertCache() // its experts back into the mapping
	if m.closer != nil {
		err = errors.Join(err, m.closer.Close())
		m.closer = nil
		m.Embed.Data = nil
	}
	if m.copied != nil {
		if m.releaseCopied != nil {
			err = errors.Join(err, m.releaseCopied(m.copied))
		}
		m.copied, m.releaseCopied = nil, nil
	}
	return err
}

// matrices returns a pointer to every packed matrix of the model, in model
// order (attention, feed-forward, experts, then lm_head).
func (m *Model) matrices() []**quant.Matrix {
	var out []**quant.Matrix
	for l := range m.Layers {
		ly := &m.Layers[l]
		if w := ly.KDA; w != nil {
			out = append(out, &w.Q, &w.K, &w.V, &w.FA, &w.FB, &w.Beta, &w.GA, &w.GB, &w.O)
		}
		if w := ly.MLA; w != nil {
			out = append(out, &w.Q, &w.KVA, &w.O)
		}
		if f := ly.MLP; f != nil {
			out = append(out, &f.Gate, &f.Up, &f.Down)
		}
		if b := ly.MoE; b != nil {
			out = append(out, &b.Router)
			for e := range b.Experts {
				x := &b.Experts[e]
				out = append(out, &x.Gate, &x.Up, &x.Down)
			}
			if x := b.Shared; x != nil {
				out = append(out, &x.Gate, &x.Up, &x.Down)
			}
		}
	}
	return append(out, &m.LMHead)
}

package model

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/kernels/kda"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/kernels/moe"
)

// kvEps is kv_a_layernorm's epsilon: HF builds it with its default 1e-6
// (vLLM passes rms_norm_eps); the golden data follows HF.
const kvEps = 1e-6

// Load opens the checkpoint folder dir (config.json and safetensors
// weights), checks every tensor against the config, and converts the
// weights: big matrices into opt.DType, the rest into f32; the embedding
// table is read in place from the mapping. Before touching the weights it
// refuses a model whose converted weights and budgeted caches exceed the
// available memory. Errors name the folder or file and every problem found;
// problems of the checkpoint (not the memory check's refusal) are
// InputErrors, a NaN or ±Inf value or a weight too large for its format
// among them.
func Load(dir string, opt LoadOptions) (*Model, error) {
	cfg, err := arch.Load(dir)
	if err != nil {
		return nil, inputErr(fmt.Errorf("model: %w", err))
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, err
	}
	if opt.usesStored() {
		return nil, fmt.Errorf("model: %s: a Hugging Face checkpoint has no stored formats (%q); give a dtype", dir, AsStored)
	}
	embedBytes := 2
	if strings.EqualFold(cfg.Dtype, "float32") || strings.EqualFold(cfg.TorchDtype, "float32") {
		embedBytes = 4
	}
	mem, err := EstimateMemory(cfg, opt, embedBytes)
	if err != nil {
		return nil, err
	}
	if err := checkFits(&mem, &opt, "checkpoint "+dir); err != nil {
		return nil, err
	}
	src, err := NewCheckpointSource(dir, cfg, opt.Threads)
	if err != nil {
		return nil, inputErr(err)
	}
	src.Search, src.Imatrix = opt.QuantSearch, opt.Imatrix
	m, err := buildFrom(cfg, src, opt, mem)
	if err != nil {
		src.Close()
		return nil, err
	}
	return m, nil
}

// buildFrom builds the model from a source whose matrices are converted
// into memory (the embedding table alone read in place), completes the
// memory report estimated before, and installs opt's chooser; src is
// closed with the model. Build errors are InputErrors.
func buildFrom(cfg *arch.Config, src interface {
	Source
	Close() error
}, opt LoadOptions, mem MemoryReport) (*Model, error) {
	m, heap, err := build(cfg, src, opt)
	if err != nil {
		return nil, inputErr(err)
	}
	m.closer = src
	mem.WeightsMapped, mem.WeightsHeap = int64(len(m.Embed.Data)), heap
	mem.budget()
	m.mem = mem
	return m, nil
}

// checkTensors compares the checkpoint's tensors with the config's list and
// reports every missing, extra, mis-shaped or non-float tensor in one error.
func checkTensors(cfg *arch.Config, ck *safetensors.Checkpoint) error {
	const show = 10 // names listed per category; the counts are exact
	var missing, shape, dtype []string
	want := map[string]bool{}
	for _, spec := range cfg.TensorNames() {
		want[spec.Name] = true
		info, f, ok := ck.Info(spec.Name)
		switch {
		case !ok:
			missing = append(missing, spec.Name)
		case !slices.Equal(info.Shape, spec.Shape):
			shape = append(shape, fmt.Sprintf("%s is %v in %s, config wants %v", spec.Name, info.Shape, filepath.Base(f.Path), spec.Shape))
		case !info.DType.IsFloat():
			dtype = append(dtype, fmt.Sprintf("%s is %s in %s, want F32, BF16 or F16", spec.Name, info.DType, filepath.Base(f.Path)))
		}
	}
	var extra []string
	for _, name := range ck.Names() {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(missing)+len(shape)+len(dtype)+len(extra) == 0 {
		return nil
	}
	var b strings.Builder
	files := []string{}
	for _, f := range ck.Shards() {
		files = append(files, filepath.Base(f.Path))
	}
	fmt.Fprintf(&b, "model: checkpoint %s (%s) does not match %s", ck.Dir, strings.Join(files, ", "), cfg.Source)
	// one line (a command line prints it as its one error line)
	list := func(what string, xs []string) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(&b, "; %d %s: ", len(xs), what)
		if len(xs) > show {
			xs = append(xs[:show:show], fmt.Sprintf("… and %d more", len(xs)-show))
		}
		b.WriteString(strings.Join(xs, ", "))
	}
	list("missing tensors", missing)
	list("mis-shaped tensors", shape)
	list("tensors of a non-float dtype", dtype)
	list("extra tensors the config does not use", extra)
	if len(shape) > 0 || len(missing) > 0 && len(extra) > 0 {
		fmt.Fprintf(&b, " (does %s describe this checkpoint? hidden_size=%d, num_hidden_layers=%d, num_experts=%d, vocab_size=%d)",
			cfg.Source, cfg.HiddenSize, cfg.NumHiddenLayers, cfg.NumExperts, cfg.VocabSize)
	}
	return errors.New(b.String())
}

// build makes a model of cfg from src's tensors and checks that the
// weights fit together; it returns the model and its heap bytes (tensors
// src did not map in place, and MLA's split kv_b_proj).
func build(cfg *arch.Config, src Source, opt LoadOptions) (*Model, int64, error) {
	m := &Model{Cfg: cfg, Shapes: cfg.Shapes(), opt: opt, timing: timer{opt.OpTimer}}
	ld := &loader{src: src, opt: &m.opt}
	ld.build(m)
	if ld.err != nil {
		return nil, 0, ld.err
	}
	if err := m.validate(); err != nil {
		return nil, 0, fmt.Errorf("model: %s: %w", src.Where(""), err)
	}
	return m, ld.heap, nil
}

// loader builds a model from a Source; the first error sticks.
type loader struct {
	src  Source
	opt  *LoadOptions
	heap int64
	err  error
}

func (ld *loader) fail(name string, err error) {
	if ld.err == nil {
		ld.err = fmt.Errorf("model: %s: tensor %q: %w", ld.src.Where(name), name, err)
	}
}

// f32 returns a small tensor as f32.
func (ld *loader) f32(name string) []float32 {
	if ld.err != nil {
		return nil
	}
	v, err := ld.src.Float32(name)
	if err != nil {
		ld.fail(name, err)
		return nil
	}
	if len(v) > 0 && !ld.view(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))) {
		ld.heap += 4 * int64(len(v))
	}
	return v
}

// view reports whether b is a view of the source's mapping rather than
// process memory: InMapping where the source tells, else its Mapped.
func (ld *loader) view(b []byte) bool {
	if im, ok := ld.src.(interface{ InMapping([]byte) bool }); ok {
		return im.InMapping(b)
	}
	return ld.src.Mapped()
}

// matrix returns a 2-D (or [N,1,...]) tensor packed in dt.
func (ld *loader) matrix(name string, dt kernel.DType) *quant.Matrix {
	if ld.err != nil {
		return nil
	}
	m, err := ld.src.Matrix(name, dt)
	if err != nil {
		ld.fail(name, err)
		return nil
	}
	if !ld.view(m.Data) {
		ld.heap += int64(len(m.Data))
	}
	return m
}

// build fills m from the source in model order.
func (ld *loader) build(m *Model) {
	cfg, s, opt := m.Cfg, m.Shapes, ld.opt
	attn, ffn, shared, experts := opt.AttnDType, opt.FFNDType, opt.SharedDType, opt.expertDType
	// ---- embedding: read in place from the mapping
	m.Embed = Embedding{V: s.Vocab, C: s.Hidden}
	var err error
	if ge, ok := ld.src.(interface {
		EmbeddingGGML(string) (gguf.Type, []byte, error)
	}); ok {
		m.Embed.GGML, m.Embed.Data, err = ge.EmbeddingGGML("model.embed_tokens.weight")
		if err == nil && (m.Embed.GGML == gguf.TypeF32 || m.Embed.GGML == gguf.TypeF16 || m.Embed.GGML == gguf.TypeBF16) {
			m.Embed.DType, m.Embed.Data, err = ld.src.Embedding("model.embed_tokens.weight")
		}
	} else {
		m.Embed.DType, m.Embed.Data, err = ld.src.Embedding("model.embed_tokens.weight")
	}
	if err != nil {
		ld.fail("model.embed_tokens.weight", err)
		return
	}
	// ---- layers
	m.Layers = make([]Layer, s.Layers)
	for l := range m.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		ly := &m.Layers[l]
		ly.Kind = cfg.LayerKind(l)
		ly.InNorm = ld.f32(p + "input_layernorm.weight")
		ly.PostNorm = ld.f32(p + "post_attention_layernorm.weight")
		a := p + "self_attn."
		switch ly.Kind {
		case arch.KDA:
			ly.KDA = &kda.LayerWeights{Hidden: s.Hidden, Heads: s.KDAHeads, HeadDim: s.KDAHeadDim, ConvWidth: s.ConvKernel,
				Eps: float32(cfg.RMSNormEps),
				Q:   ld.matrix(a+"q_proj.weight", attn), K: ld.matrix(a+"k_proj.weight", attn),
				V:  ld.matrix(a+"v_proj.weight", attn),
				FA: ld.matrix(a+"f_a_proj.weight", opt.GateDType), FB: ld.matrix(a+"f_b_proj.weight", opt.GateDType),
				Beta: ld.matrix(a+"b_proj.weight", opt.GateDType),
				GA:   ld.matrix(a+"g_a_proj.weight", opt.GateDType), GB: ld.matrix(a+"g_b_proj.weight", opt.GateDType),
				O:     ld.matrix(a+"o_proj.weight", attn),
				ConvQ: ld.f32(a + "q_conv1d.weight"), ConvK: ld.f32(a + "k_conv1d.weight"), ConvV: ld.f32(a + "v_conv1d.weight"),
				ALog: ld.f32(a + "A_log"), DtBias: ld.f32(a + "dt_bias"), ONorm: ld.f32(a + "o_norm.weight")}
		case arch.MLA:
			w := &mla.LayerWeights{Hidden: s.Hidden, Heads: s.MLAHeads, DN: s.QKNope, DR: s.QKRope, DV: s.VHead, R: s.KVLoraRank,
				KVEps: kvEps,
				Q:     ld.matrix(a+"q_proj.weight", attn), KVA: ld.matrix(a+"kv_a_proj_with_mqa.weight", attn),
				KVANorm: ld.f32(a + "kv_a_layernorm.weight"), O: ld.matrix(a+"o_proj.weight", attn)}
			if kvb := ld.f32(a + "kv_b_proj.weight"); kvb != nil {
				if err := w.SplitKVB(kvb); err != nil {
					ld.fail(a+"kv_b_proj.weight", err)
				}
				if ld.view(unsafe.Slice((*byte)(unsafe.Pointer(&kvb[0])), 4*len(kvb))) {
					ld.heap += 4 * int64(len(kvb)) // the split halves are copies (a copy of kvb counted itself)
				}
			}
			ly.MLA = w
		}
		if !cfg.IsMoE(l) {
			ly.MLP = &MLP{Gate: ld.matrix(p+"mlp.gate_proj.weight", ffn), Up: ld.matrix(p+"mlp.up_proj.weight", ffn),
				Down: ld.matrix(p+"mlp.down_proj.weight", ffn)}
			continue
		}
		b := p + "block_sparse_moe."
		blk := &moe.BlockWeights{Hidden: s.Hidden, Cfg: routerConfig(cfg),
			Router: ld.matrix(b+"gate.weight", kernel.F32), Bias: ld.f32(b + "gate.e_score_correction_bias")}
		for e := 0; e < s.Experts; e++ {
			x := fmt.Sprintf("%sexperts.%d.", b, e)
			blk.Experts = append(blk.Experts, moe.Expert{Gate: ld.matrix(x+"w1.weight", experts(l)),
				Up: ld.matrix(x+"w3.weight", experts(l)), Down: ld.matrix(x+"w2.weight", experts(l))})
		}
		if s.SharedInter > 0 {
			blk.Shared = &moe.Expert{Gate: ld.matrix(b+"shared_experts.gate_proj.weight", shared),
				Up:   ld.matrix(b+"shared_experts.up_proj.weight", shared),
				Down: ld.matrix(b+"shared_experts.down_proj.weight", shared)}
		}
		ly.MoE = blk
	}
	// ---- final norm and lm_head
	m.Norm = ld.f32("model.norm.weight")
	head := "lm_head.weight"
	if s.TiedEmbeddings {
		head = "model.embed_tokens.weight"
	}
	m.LMHead = ld.matrix(head, opt.HeadDType)
}

// routerConfig is the MoE routing of cfg.
func routerConfig(cfg *arch.Config) moe.RouterConfig {
	g, tg := 1, 1
	if cfg.UseGroupedTopK {
		g, tg = max(cfg.NumExpertGroup, 1), max(cfg.TopKGroup, 1)
	}
	return moe.RouterConfig{Experts: cfg.NumExperts, TopK: cfg.NumExpertsPerToken, Groups: g, TopKGroup: tg,
		Renormalize: cfg.MoERenormalize, Scale: float32(cfg.RoutedScalingFactor)}
}

// validate checks every layer's weights against each other (the kernels'
// own checks), so that a forward pass never meets a bad shape.
func (m *Model) validate() error {
	s := m.Shapes
	if len(m.Layers) != s.Layers || len(m.Norm) != s.Hidden || m.LMHead == nil || m.LMHead.N != s.Vocab || m.LMHead.K != s.Hidden {
		return errors.New("model.norm or lm_head has the wrong shape")
	}
	if m.Embed.V != s.Vocab || m.Embed.C != s.Hidden || len(m.Embed.Data) != s.Vocab*m.Embed.RowBytes() {
		return errors.New("embed_tokens has the wrong size")
	}
	for l := range m.Layers {
		ly := &m.Layers[l]
		var err error
		switch {
		case len(ly.InNorm) != s.Hidden || len(ly.PostNorm) != s.Hidden:
			err = errors.New("layer norms have the wrong size")
		case ly.KDA != nil:
			err = ly.KDA.Validate()
		case ly.MLA != nil:
			err = ly.MLA.Validate()
		default:
			err = errors.New("no mixer")
		}
		if err == nil && ly.MoE != nil {
			err = ly.MoE.Validate()
		}
		if err == nil && ly.MLP != nil {
			f := ly.MLP
			if f.Gate == nil || f.Up == nil || f.Down == nil || f.Gate.K != s.Hidden || f.Up.N != f.Gate.N || f.Down.K != f.Gate.N || f.Down.N != s.Hidden {
				err = errors.New("dense MLP has the wrong shape")
			}
		}
		if err != nil {
			return fmt.Errorf("layer %d: %w", l, err)
		}
	}
	return nil
}
